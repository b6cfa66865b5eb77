"""What a chat starts from: the model, the session (new or resumed, and what a resumed one may
decide), the director, the lesson, the learner's memory and a watched learner.

A session file is shareable data, not configuration: the model and ``api_base`` it names
decide where the user's API key goes (and ``scripted:``/``replay:`` name files to read), so
when a resumed session's would be used without the user's flags, ``MAIC_*`` variables or
config.yaml naming them, maic asks on a terminal and refuses in a pipe
(:func:`confirm_session_choices`).  ``maic chat`` (cli/chat_cmd.py) calls these after parsing
its flags; ``maic prompts show``, ``maic lesson`` and ``maic run`` share the model's choice.
"""

from __future__ import annotations

import shlex
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import InputError
from ..untrusted import clean, one_line

if TYPE_CHECKING:
    from ..engine.learner import LearnerProfile
    from ..engine.policies import DirectorPolicy
    from ..lessons.lesson import LessonPlay
    from ..llm.spec import ModelSpec
    from ..speech.port import SpeechEngine, Voice
    from ..store.config import Settings
    from ..store.session import Session
    from .memory import ChatMemory


def default_model() -> str:
    """A provider key's default, then the built-in offline model, then the canned demo."""
    from ..llm.local import offline_available
    from ..store.config import provider_default_model

    return provider_default_model() or ("local" if offline_available() else "demo")


def chosen_model(settings: Settings, resumed: Session | None) -> str:
    """Flag/env/config first, then the resumed session's, then :func:`default_model`."""
    if settings.model:
        return settings.model
    if resumed is not None and resumed.model:
        return resumed.model
    return default_model()


def resolve_model(settings: Settings, resumed: Session | None) -> ModelSpec:
    """The :func:`chosen_model`, parsed here once: everything after is handed the spec."""
    from ..llm.spec import ModelSpec

    return ModelSpec.parse(chosen_model(settings, resumed), small=bool(settings.small))


def session_choices(settings: Settings, resumed: Session, model: ModelSpec) -> dict[str, str]:
    """The flags a resumed session would set on its own: its model (``model``, as :func:`resolve_model`
    gave it) and api_base where the user's settings name none and they differ from what the settings
    give (a safe model — one that sends no key and reads no file, the offline one or the demo — needs
    no one's word)."""
    choices = {}
    chosen_by_file = not settings.model and bool(resumed.model) and model.raw == resumed.model
    if chosen_by_file and model.kind not in ("local", "demo") and model.raw != default_model():
        choices["--model"] = model.raw
    if not settings.api_base and resumed.api_base:
        choices["--api-base"] = resumed.api_base
    return choices


def confirm_session_choices(path: Path, choices: dict[str, str], ask: Callable[[str], bool] | None) -> None:
    """Use what the session chose only if the user says so: ``ask`` on a terminal, else refuse."""
    if not choices:
        return
    flags = " ".join(f"{flag} {shlex.quote(clean(value))}" for flag, value in choices.items())
    said = f"{path}: this session chooses {flags}, which your flags, MAIC_* variables and config.yaml do not"
    if ask is None:
        raise InputError(f"{said}; to use them, pass them again: {flags}")
    if not ask(f"{said}. Your API key may be sent there. Use them?"):
        raise InputError(f"{path}: the session's {flags} not used; pass --model (and --api-base) to choose")


def ignored_on_resume(given: Mapping[str, object]) -> str | None:
    """A note naming the options that only shape a new class, when a session is resumed."""
    flags = [flag for flag, value in given.items() if value]
    if not flags:
        return None
    return f"{', '.join(flags)} ignored: a resumed session keeps its class and settings"


def new_session(settings: Settings, topic: str | None, initiator: str | None) -> Session:
    from ..engine.models import DEFAULT_MAX_TURNS, ClassSettings, UserProfile, default_initiator
    from ..store.personas import DEFAULT_CLASS, load_registry
    from ..store.session import Session

    registry = load_registry(settings.agents_dir)
    ids = settings.agents or [i for i in DEFAULT_CLASS if i in registry.agents]
    agents = registry.require(ids)
    if initiator is not None and initiator not in ids:
        raise InputError(f"--initiator {initiator}: not in this class ({', '.join(ids)})")
    if topic and initiator is None:
        initiator = default_initiator(agents)
    config = ClassSettings(agent_ids=ids, discussion_topic=topic, initiator_id=initiator if topic else None,
                        max_turns=settings.max_turns or DEFAULT_MAX_TURNS, language=settings.language)
    profile = UserProfile(nickname=settings.name or "Learner", bio=settings.bio or "")
    return Session(config=config, profile=profile, agents=agents, api_base=settings.api_base)


def session_path_for(session_file: Path | None, resume_latest: bool) -> Path:
    """The real file (a symlink resolved once, so the lock and the writes are on its target)."""
    from ..engine.models import new_id
    from ..store.paths import maic_home
    from ..store.session import latest_session, sessions_dir

    if session_file is not None:
        return session_file.expanduser().resolve()
    if resume_latest:
        latest = latest_session(maic_home())
        if latest is None:
            raise InputError(f"no session to continue in {sessions_dir(maic_home())}")
        return latest.resolve()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return (sessions_dir(maic_home()) / f"{stamp}-{new_id('s')[2:8]}.json").resolve()


def choose_director(session: Session, flag: str | None) -> DirectorPolicy | None:
    """``--director`` (a hook is imported only from this flag); without it a session keeps a built-in
    policy it names and forgets a hook's name (a file never decides what code runs)."""
    from ..engine.policies import builtin_policy, policy_from_flag

    if flag is not None:
        policy = policy_from_flag(flag)
        session.config.director = policy.name
        return policy
    stored = session.config.director
    if builtin_policy(stored) is None:
        if stored:  # a hook's name: said, not imported
            typer.echo(f"maic: note: this session used the director {one_line(stored)[:80]}; a file never "
                       "loads code, so the default director is used (pass --director again to use it)", err=True)
        session.config.director = None
    return None


def check_resumed(path: Path, settings: Settings, resumed: Session, model: ModelSpec,
                  new_class_options: Mapping[str, object]) -> None:
    """Before a resumed session is used: confirm what it chose on its own, name the options it ignores."""
    terminal = sys.stdin is not None and sys.stdin.isatty()
    ask = (lambda question: typer.confirm(question, default=False, err=True)) if terminal else None
    confirm_session_choices(path, session_choices(settings, resumed, model), ask)
    note = ignored_on_resume(new_class_options)
    if note:
        typer.echo(f"maic: note: {note}", err=True)


def warm_up_litellm(spec: ModelSpec) -> None:
    """Import litellm in the background so the prompt is ready before it is."""
    if not spec.uses_litellm:
        return

    def warm() -> None:
        try:
            from ..llm.litellm_client import import_litellm

            import_litellm()
        except Exception:  # noqa: BLE001 - the first real call reports import problems properly
            pass

    threading.Thread(target=warm, name="litellm-warmup", daemon=True).start()


def load_lesson_play(argument: Path | str) -> LessonPlay:
    """A lesson by its name (``photosynthesis``: ``maic lesson list``) or its file."""
    from ..lessons.lesson import LessonPlay
    from ..store.lessons import load_lesson, resolve_lesson

    return LessonPlay(lesson=load_lesson(resolve_lesson(str(argument))), source=str(argument))


def keep_or_replace_lesson(session: Session, play: LessonPlay) -> None:
    """``--lesson`` on a resumed session: the same lesson keeps its progress, another one starts over."""
    if session.lesson is not None and session.lesson.lesson == play.lesson:
        return
    if session.lesson is not None:
        typer.echo(f"maic: note: this session's lesson ({one_line(session.lesson.lesson.title)[:80]}) is replaced "
                   f"by {one_line(str(play.source))[:200]}", err=True)
    session.lesson = play


def open_memory(session: Session, named: str | None) -> ChatMemory | None:
    """The named learner's memory (none for a learner without a name)."""
    from .memory import ChatMemory, learner_name

    name = learner_name(session, named)
    return ChatMemory(session, name) if name else None


def watched_learner(watch: str | None, learner_model: str | None,
                    lesson: bool) -> tuple[LearnerProfile, ModelSpec | None] | None:
    """``--watch``: the simulated learner (a file, or a built-in learner's name) and its model
    (``None``: the class's)."""
    if watch is None:
        if learner_model is not None:
            raise InputError("--learner-model is the model of a simulated learner: use it with --watch")
        return None
    if lesson:
        raise InputError("--watch with --lesson: a simulated learner does not attend lessons in chat yet; "
                         "seat it in a lesson scenario of maic run, or watch it in a class")
    from ..llm.spec import ModelSpec
    from ..store.learners import find_learner

    return find_learner(watch), ModelSpec.parse(learner_model) if learner_model is not None else None


def voice_engine(flag: str | None, settings: Settings) -> SpeechEngine | None:
    """``--voice`` (over ``MAIC_VOICE`` and config.yaml's ``voice:``), parsed once: the engine that says the class,
    ``None`` for ``off``.  One that cannot speak here (no key, not installed) is one line, exit 2, before anything
    starts."""
    from ..speech.factory import check_ready, open_engine
    from ..speech.spec import resolve
    from ..store.paths import speech_cache_dir

    spec = resolve(flag, settings.voice, api_base=settings.voice_api_base)
    if not spec.enabled:
        return None
    check_ready(spec)
    return open_engine(spec, speech_cache_dir())  # a sentence said before is not synthesized again


def cast_voices(engine: SpeechEngine, session: Session) -> dict[str, Voice]:
    """Each agent's voice (a persona's ``voice:`` where it chose one, else derived from its id and role); a voice
    id the engine does not have is one line, exit 2, before the class starts."""
    from ..speech.cast import cast

    return cast(session.agents, engine)
