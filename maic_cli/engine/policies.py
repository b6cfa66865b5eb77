"""Director policies: who speaks next, decided before (or instead of) asking the LLM.

A policy is a function ``(agents, state, messages, config) -> pick`` where the pick is a
:class:`~.outcomes.Pick` (an agent, the learner's turn, the end) or ``None`` (ask the LLM); a
researcher's hook may answer a string instead (an agent id, ``"USER"`` or ``"END"``), read once
as a pick where the turn receives it.

* ``llm`` — always ``None``: the LLM director decides (the behaviour before policies).
* ``rules`` — never ``None``: no director call at all.  The teacher answers first
  (the initiator opens a discussion, on its opening turn only), then at most one or two others who add
  something — a student when the last speaker asked a question, else the assistant
  or student with the highest priority who has not spoken — then the learner.  A learner's question
  during a lesson is the teacher's alone: the answer comes from the lesson (lessons/ask.py), and a
  classmate's guess on a small model only adds noise (measured on the offline model: off-topic stories).
* ``hybrid`` — the rules where they are sure (the round's first speaker; handing back
  once ``HYBRID_HAND_BACK`` agents have spoken or nobody is left), the LLM otherwise.
* ``module:function`` — a researcher's hook (like AutoGen's ``selector_func``), loaded
  by :func:`load_hook` only from a flag the user typed; a scenario, session or
  transcript naming one is never imported (:func:`builtin_policy` returns ``None``).
  A hook in the current folder is loaded from its file; ``sys.path`` is never changed.

Whatever a policy picks then goes through the routing guards (``engine/guards.py``).
Small offline models default to ``rules`` (:func:`default_policy_name`): they rarely
pick anyone after the teacher, and a director call costs them seconds per turn.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ..errors import InputError
from .guards import opens_discussion, rank
from .models import AgentConfig, DirectorState, Message, TurnConfig
from .outcomes import Pick

# A hook may answer a string (an agent id, "USER" or "END"): the turn reads it as a Pick (director.read_pick).
PolicyFn = Callable[[Sequence[AgentConfig], DirectorState, Sequence[Message], TurnConfig], "Pick | str | None"]

BUILTIN_POLICIES = ("llm", "rules", "hybrid")
QA_SPEAKERS = 2  # rules, Q&A: the teacher and one other ...
QA_SPEAKERS_AFTER_QUESTION = 3  # ... and one more when the last speaker asked a question
DISCUSSION_SPEAKERS = 3  # rules, discussion: the initiator and two who join
LESSON_QUESTION_SPEAKERS = 1  # rules, a learner's question in a lesson: the teacher answers from the lesson
HYBRID_HAND_BACK = 3  # hybrid: the learner's turn once this many agents have spoken


@dataclass(frozen=True)
class DirectorPolicy:
    """``name`` is what transcripts and reports record (``llm``, ``rules``, ``hybrid`` or
    ``module:function``)."""

    name: str
    decide: PolicyFn


def ask_llm(agents: Sequence[AgentConfig], state: DirectorState, messages: Sequence[Message],
            config: TurnConfig) -> Pick | None:
    return None


def _last_asked_question(state: DirectorState, messages: Sequence[Message]) -> bool:
    """The last speaker's reply ends with a question (to the class), not a rhetorical one mid-reply.

    Read from the reply itself in ``messages`` (the turn summary keeps only its first 300 characters)."""
    if not state.agent_responses:
        return False
    speaker = state.agent_responses[-1].agent_id
    last = next((m for m in reversed(messages) if m.role == "agent" and m.agent_id == speaker), None)
    text = last.text if last is not None else state.agent_responses[-1].content_preview
    return text.rstrip().rstrip("\"'”’)").endswith("?")


def _unspoken(agents: Sequence[AgentConfig], state: DirectorState) -> list[AgentConfig]:
    spoken = {r.agent_id for r in state.agent_responses}
    return [a for a in agents if a.id not in spoken]


def _first_speaker(agents: Sequence[AgentConfig], state: DirectorState, config: TurnConfig,
                   messages: Sequence[Message]) -> Pick | None:
    ranked = rank(_unspoken(agents, state), config, state, opens_discussion(config, messages))
    return Pick.agent(ranked[0].id) if ranked else None


def rules(agents: Sequence[AgentConfig], state: DirectorState, messages: Sequence[Message],
          config: TurnConfig) -> Pick:
    """The deterministic policy (see the module docstring); never asks the LLM."""
    left = _unspoken(agents, state)
    if not state.agent_responses:
        return _first_speaker(agents, state, config, messages) or Pick.end()
    if not left:
        return Pick.user()
    count = len(state.agent_responses)
    asked = _last_asked_question(state, messages)
    if config.discussion_topic:
        limit = DISCUSSION_SPEAKERS
    elif config.lesson is not None and config.lesson.task == "question":
        limit = LESSON_QUESTION_SPEAKERS
    else:
        limit = QA_SPEAKERS_AFTER_QUESTION if asked else QA_SPEAKERS
    if count >= limit:
        return Pick.user()
    heard_roles = {a.role for a in agents if a.id in {r.agent_id for r in state.agent_responses}}
    students = [a for a in left if a.role == "student"]
    if asked and students:
        pool = students
    else:  # someone who adds something: a role not heard yet, then non-teachers
        pool = [a for a in left if a.role not in heard_roles] or [a for a in left if a.role != "teacher"] or left
    return Pick.agent(sorted(pool, key=lambda a: (-a.priority, [x.id for x in agents].index(a.id)))[0].id)


def hybrid(agents: Sequence[AgentConfig], state: DirectorState, messages: Sequence[Message],
           config: TurnConfig) -> Pick | None:
    """The rules where they are sure, ``None`` (the LLM) otherwise."""
    if not state.agent_responses:
        return _first_speaker(agents, state, config, messages)
    if len(state.agent_responses) >= HYBRID_HAND_BACK or not _unspoken(agents, state):
        return Pick.user()
    return None


_BUILTINS: dict[str, PolicyFn] = {"llm": ask_llm, "rules": rules, "hybrid": hybrid}


def reads_only(policy: DirectorPolicy) -> bool:
    """Whether ``policy`` is one of ours, which only reads what it is given (a hook gets copies)."""
    return any(policy.decide is fn for fn in _BUILTINS.values())


def builtin_policy(name: str | None) -> DirectorPolicy | None:
    """A built-in policy by name; ``None`` for anything else (a hook is never loaded from a name
    a file holds)."""
    fn = _BUILTINS.get(name or "")
    return DirectorPolicy(name or "", fn) if fn is not None else None


def default_policy_name(compact_prompts: bool) -> str:
    """Small offline models: ``rules`` (several agents speak, no director call); others: ``llm``."""
    return "rules" if compact_prompts else "llm"


def choose_policy(flag: DirectorPolicy | None, stored: str | None, compact_prompts: bool) -> DirectorPolicy:
    """The one place that decides who picks the speakers: the policy the user's ``--director`` flag
    gave (``flag``: a built-in or a hook), else a built-in policy the session or scenario names
    (``stored``: a file's name never imports code, so a hook's name there is passed over), else the
    model's default (:func:`default_policy_name`)."""
    if flag is not None:
        return flag
    named = builtin_policy(stored)
    if named is not None:
        return named
    name = default_policy_name(compact_prompts)
    return DirectorPolicy(name, _BUILTINS[name])


def load_hook(spec: str) -> DirectorPolicy:
    """``module:function`` from ``--director`` (a flag the user typed, never a file's field).

    A module Python can import as things stand (installed, or already imported) is imported; else a
    module in the current folder (``hook.py``, ``pkg/hook.py`` for ``pkg.hook``) is loaded from its
    file, explicitly.  ``sys.path`` is never changed:
    putting the current folder on it would let any file there named like a dependency
    (``matplotlib.py`` in a received folder) run when that dependency is next imported."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr or not all(part.isidentifier() for part in module_name.split(".")):
        raise InputError(f"--director {spec!r:.80}: use llm, rules, hybrid or module:function")
    try:
        local = None if _importable(module_name) else _local_module_file(module_name)
        module = _load_file(module_name, local) if local is not None else importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"--director {spec!r:.80}: cannot import {module_name!r:.80}: {exc}") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise InputError(f"--director {spec!r:.80}: {module_name} has no function {attr!r:.80}")
    return DirectorPolicy(spec, fn)


def _importable(module_name: str) -> bool:
    if module_name in sys.modules:
        return True
    try:
        return importlib.util.find_spec(module_name) is not None
    except (ImportError, ValueError):  # a parent package that does not exist
        return False


def _local_module_file(module_name: str) -> Path | None:
    """The file of ``module_name`` in the current folder, if there is one."""
    base = Path.cwd().joinpath(*module_name.split("."))
    for candidate in (base.with_name(base.name + ".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _load_file(module_name: str, path: Path) -> ModuleType:
    """Execute the hook file ``path`` as a module of its own (registered apart from installed modules)."""
    name = f"_maic_director_hook.{module_name}"
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look a class's module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        if isinstance(exc, Exception) and not isinstance(exc, ImportError):
            raise ImportError(f"{path}: {type(exc).__name__}: {exc}") from exc
        raise
    return module


def policy_from_flag(value: str) -> DirectorPolicy:
    """What ``--director VALUE`` means: a built-in policy or a hook."""
    return builtin_policy(value) or load_hook(value)


