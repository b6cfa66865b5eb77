"""``maic chat``: options, settings, the session file, and which view and input to use.

A session file is shareable data, not configuration: the model and ``api_base`` it names
decide where the user's API key goes (and ``scripted:``/``replay:`` name files to read), so
when a resumed session's would be used without the user's flags, ``MAIC_*`` variables or
config.yaml naming them, maic asks on a terminal and refuses in a pipe.

``maic chat --help`` must stay as quick as a bare Typer app's: the engine, the stores and
the model specs are imported inside the functions that use them, not here.
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
from .errors import friendly
from .help_option import MAX_TURNS_HELP, MODEL_HELP, TEMPERATURE_HELP

if TYPE_CHECKING:
    from ..engine.learner import LearnerProfile
    from ..engine.lesson import LessonPlay
    from ..engine.policies import DirectorPolicy
    from ..store.config import Settings
    from ..store.session import Session
    from .learner_memory import ChatMemory


def _sends_or_reads(model: str) -> bool:
    """A model that sends a key somewhere or reads a file (the offline model and the demo do neither)."""
    from ..llm.spec import ModelSpec

    return ModelSpec.parse(model).kind not in ("local", "demo")


def default_model() -> str:
    """A provider key's default, then the built-in offline model, then the canned demo."""
    from ..llm.local import offline_available
    from ..store.config import provider_default_model

    return provider_default_model() or ("local" if offline_available() else "demo")


def resolve_model(settings: Settings, resumed: Session | None) -> str:
    """Flag/env/config first, then the resumed session's, then :func:`default_model`."""
    if settings.model:
        return settings.model
    if resumed is not None and resumed.model:
        return resumed.model
    return default_model()


def session_choices(settings: Settings, resumed: Session) -> dict[str, str]:
    """The flags a resumed session would set on its own: its model and api_base where the user's
    settings name none and they differ from what the settings give (a safe model needs no one's word)."""
    choices = {}
    model = resumed.model
    if not settings.model and model and _sends_or_reads(model) and model != default_model():
        choices["--model"] = model
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


def check_resumed(path: Path, settings: Settings, resumed: Session, new_class_options: Mapping[str, object]) -> None:
    """Before a resumed session is used: confirm what it chose on its own, name the options it ignores."""
    terminal = sys.stdin is not None and sys.stdin.isatty()
    ask = (lambda question: typer.confirm(question, default=False, err=True)) if terminal else None
    confirm_session_choices(path, session_choices(settings, resumed), ask)
    note = ignored_on_resume(new_class_options)
    if note:
        typer.echo(f"maic: note: {note}", err=True)


def _warm_up_litellm(model: str) -> None:
    """Import litellm in the background so the prompt is ready before it is."""
    from ..llm.spec import ModelSpec

    if not ModelSpec.parse(model).uses_litellm:
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
    from ..engine.lesson import LessonPlay
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
    from .learner_memory import ChatMemory, learner_name

    name = learner_name(session, named)
    return ChatMemory(session, name) if name else None


def watched_learner(watch: str | None, learner_model: str | None,
                    lesson: bool) -> tuple[LearnerProfile, str | None] | None:
    """``--watch``: the simulated learner (a file, or a built-in learner's name) and its model."""
    if watch is None:
        if learner_model is not None:
            raise InputError("--learner-model is the model of a simulated learner: use it with --watch")
        return None
    if lesson:
        raise InputError("--watch with --lesson: a simulated learner does not attend lessons in chat yet; "
                         "seat it in a lesson scenario of maic run, or watch it in a class")
    from ..store.learners import find_learner

    return find_learner(watch), learner_model


@friendly
def chat(
    model: str = typer.Option(None, "--model", "-m", help=MODEL_HELP),
    api_base: str = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server."),
    agents: str = typer.Option(None, "--agents", help="Comma-separated agent ids for the class."),
    agents_dir: list[Path] = typer.Option(None, "--agents-dir", help="A folder of persona files. Repeatable."),
    session_file: Path = typer.Option(None, "--session", "-s", help="Session file: resumed if it exists, "
                                      "else created."),
    resume_latest: bool = typer.Option(False, "--continue", "-c", help="Resume the most recent session."),
    topic: str = typer.Option(None, "--topic", help="Discussion mode: the topic the class discusses."),
    initiator: str = typer.Option(None, "--initiator", help="Discussion mode: the agent who opens it."),
    name: str = typer.Option(None, "--name", help="Your name, as the class sees it."),
    bio: str = typer.Option(None, "--bio", help="A line about you (level, goals) for the class."),
    language: str = typer.Option(None, "--language", help="The language the class speaks."),
    max_turns: int = typer.Option(None, "--max-turns", min=1, max=50, help=MAX_TURNS_HELP),
    temperature: float = typer.Option(None, "--temperature", min=0, max=2, help=TEMPERATURE_HELP),
    structured: str = typer.Option(None, "--structured", help="Constrain replies to their JSON schema: "
                                   "auto (where litellm reports support), off, json_schema (OpenAI form) or "
                                   "json_object (llama.cpp server form)."),
    plain: bool = typer.Option(False, "--plain", help="Line-oriented output even on a terminal."),
    transcript: Path = typer.Option(None, "--transcript", help="Record the class to this JSONL file "
                                    "(default: $MAIC_HOME/transcripts/<session>.jsonl)."),
    prompts: Path = typer.Option(None, "--prompts", help="A folder of prompt templates overriding the "
                                 "built-in ones (default: $MAIC_HOME/prompts, if it exists)."),
    director: str = typer.Option(None, "--director", help="Who picks the speakers: llm, rules, hybrid or "
                                 "module:function (your Python hook). Default: rules for the offline model, else llm."),
    lesson: str = typer.Option(None, "--lesson", help="Play a lesson, by name (maic lesson list: photosynthesis, "
                               "…) or file: slides lectured, discussions, a quiz. Enter goes on; type to ask; "
                               "/ask ID question; /outline, /next, /prev, /slide N."),
    pace: float = typer.Option(None, "--pace", min=0, max=5, help="Seconds per word of a scripted lecture on a "
                               "terminal (default 0.12; 0: at once). Pipes and --plain: at once unless given."),
    no_memory: bool = typer.Option(False, "--no-memory", help="Neither use nor update the learner's memory "
                                   "($MAIC_HOME/learners; kept for a learner with a --name)."),
    lrs: str = typer.Option(None, "--lrs", help="When the class ends, send its learning records (xAPI) to this "
                            "learning record store; credentials from MAIC_LRS_TOKEN, or MAIC_LRS_USER and "
                            "MAIC_LRS_PASSWORD."),
    watch: str = typer.Option(None, "--watch", help="Watch a simulated learner (a learner file, or a built-in "
                              "one: fraction_mixup, dozen_student, quiet_learner) take your seat, live."),
    learner_model: str = typer.Option(None, "--learner-model", help="With --watch: the learner's model "
                                      "(default: the class's)."),
    style: str = typer.Option(None, "--style", help="A built-in teaching style (direct, socratic, "
                              "worked_example): a prompt set by name, instead of --prompts."),
) -> None:
    """Hold a class: you ask, the agents answer, the whiteboard fills up."""
    import asyncio  # not at the top: ~30 ms that --help does not need

    from ..store.config import load_settings
    from ..store.prompts import load_prompt_set
    from ..store.session import SessionLock, load_session
    from .notices import model_notice

    if initiator is not None and not topic:
        raise InputError("--initiator opens a discussion: use it with --topic")
    if lesson is not None and topic:
        raise InputError("--lesson and --topic: a lesson brings its own discussions; use one or the other")
    play = load_lesson_play(lesson) if lesson is not None else None  # a bad file stops here: one line, exit 2
    from .xapi_cmd import check_lrs, send_transcript

    check_lrs(lrs)

    watched = watched_learner(watch, learner_model, lesson is not None)
    if style is not None:
        from ..store.styles import style_folder

        if prompts is not None:
            raise InputError("--style names a built-in prompt set and --prompts a folder: use one")
        prompts = style_folder(style)
    prompt_set = load_prompt_set(prompts)  # a broken template stops here, before anything runs
    settings = load_settings({
        "model": model, "api_base": api_base, "agents_dir": agents_dir or None,
        "agents": [a.strip() for a in agents.split(",") if a.strip()] if agents else None,
        "name": name or (watched[0].name if watched else None),
        "bio": bio or (watched[0].user_profile().bio if watched else None),
        "language": language, "max_turns": max_turns, "temperature": temperature,
        "structured": structured,
    })
    if play is not None:  # the lesson's class and language, unless the user chose them
        settings = settings.model_copy(update={"agents": settings.agents or play.lesson.agents,
                                               "language": settings.language or play.lesson.language})
    path = session_path_for(session_file, resume_latest)
    from ..llm.keys import check_key

    if not path.exists():  # a new class: a hosted model's missing key is said before any file is written
        check_key(resolve_model(settings, None), api_base=settings.api_base)
    new_class_options = {"--agents": agents, "--agents-dir": agents_dir, "--topic": topic, "--initiator": initiator,
                         "--name": name, "--bio": bio, "--language": language}
    with SessionLock(path):
        resumed = load_session(path) if path.exists() else None
        if resumed is not None:
            check_resumed(path, settings, resumed, new_class_options)
        session = resumed or new_session(settings, topic, initiator)
        if play is not None:
            keep_or_replace_lesson(session, play)
        session.model = resolve_model(settings, resumed)
        if settings.api_base:
            session.api_base = settings.api_base
        if resumed is not None:
            check_key(session.model, api_base=session.api_base)
        if resumed is not None and settings.max_turns:
            session.config.max_turns = settings.max_turns
        policy = choose_director(session, director)
        # a watched simulated learner is not a person: the class neither reads nor writes anyone's memory
        memory = None if no_memory or watched else open_memory(session, settings.name)  # a broken profile stops here
        if memory is not None and memory.profile.sessions:
            typer.echo(f"maic: note: the class remembers {one_line(memory.name)} from {memory.profile.sessions} "
                       "earlier sessions (maic learner show; --no-memory to leave it out)", err=True)
        _warm_up_litellm(session.model)
        from .chat_run import run_chat  # heavy (prompt-toolkit, views): imported while litellm warms up

        interactive = sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty() and not plain
        code = asyncio.run(run_chat(session, path, interactive=interactive, temperature=settings.temperature,
                                    notice=model_notice(session.model, lesson=session.lesson is not None),
                                    resumed=resumed is not None,
                                    structured=settings.structured or "auto", transcript=transcript,
                                    prompts=prompt_set, director=policy, pace=pace, memory=memory, watch=watched))
    if lrs is not None and session.transcript:
        send_transcript(Path(session.transcript), lrs)  # the session is saved: a refusal is one line, exit 1
    if code:
        raise typer.Exit(code)
