"""The progress of ``maic lesson new`` (and import, regen) on stderr: a Rich status line on a terminal,
plain lines in a pipe.

Each step prints one line when it finishes (``✓ step 3/9 scene 1/3 (slide): elements``) and
one when it is retried, with the problem; on a terminal a spinner shows the step running.
A retry's problem can quote the model's reply, so every line is cleaned and printed as
plain text (never Rich markup).  Also what those commands share: the class's students (who may
open a generated discussion), a run that closes its client, and the one-line summary of a result.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypeVar

from ..untrusted import one_line

if TYPE_CHECKING:
    from rich.console import Console
    from rich.status import Status

    from ..authoring.generation import GeneratedLesson, Initiator, Progress
    from ..llm.port import LLMClient, Usage
    from ..llm.spec import ModelSpec

T = TypeVar("T")


def _position(event: Progress) -> str:
    return f"step {event.number}/{event.total}" if event.total else f"step {event.number}"


class StepReporter:
    """Receives the pipeline's :class:`Progress` events and shows them."""

    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self._console: Console | None = None
        self._status: Status | None = None

    def __call__(self, event: Progress) -> None:
        where = f"{_position(event)} {event.step}"
        if event.kind == "start":
            if self._status is not None:
                from rich.text import Text

                self._status.update(Text(one_line(f"{where} …")))
            elif not self.live:
                self._line(f"maic: {where} …")
        elif event.kind == "retry":
            self._line(f"maic: {where}: reply unusable ({event.problem}); asking again")
        else:
            self._line(f"  ✓ {where}" if self.live else f"maic: {where} done")

    def _line(self, text: str) -> None:
        if self._console is not None:
            from rich.text import Text

            self._console.print(Text(one_line(text)))
        else:
            print(one_line(text), file=self.stream, flush=True)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """While inside, a terminal shows a spinner with the running step."""
        if not self.live:
            yield
            return
        from rich.console import Console

        self._console = Console(file=self.stream, highlight=False)
        with self._console.status("starting …") as status:
            self._status = status
            try:
                yield
            finally:
                self._status = None


def usage_line(usage: Usage, calls: int) -> str:
    tokens = f"{usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion tokens"
    cost = f", ${usage.cost:.4f}" if usage.cost else ""
    return f"{calls} model call{'s' if calls != 1 else ''}, {tokens}{cost}"


SMALL_MODEL_REFUSAL = (
    "the built-in offline model is too small to write lessons (its lessons read as fragments: field names as "
    "bullets, cut words, quiz options about answering); write them with a provider's model "
    "(--model openai/gpt-4o-mini, or set OPENAI_API_KEY), or bring your own material: "
    "maic lesson import deck.pptx | notes.md | handout.pdf")


def refuse_model(spec: ModelSpec) -> None:
    """Refuse, before any call, a model that cannot write lesson text: the demo's canned replies, or the
    small offline model (measured by ``tests/benchmarks/lesson_offline.py``)."""
    from ..errors import InputError

    if spec.kind == "demo":
        raise InputError("the demo model only plays canned class replies and cannot write lesson text; use a "
                         "provider's model, e.g. --model openai/gpt-4o-mini, or: maic lesson import FILE")
    if spec.compact_prompts:
        raise InputError(SMALL_MODEL_REFUSAL)


def class_initiators(agents_dir: list[Path]) -> tuple[Initiator, ...]:
    """The default class's students: who may open a generated discussion."""
    from ..authoring.generation import Initiator
    from ..store.personas import DEFAULT_CLASS, load_registry

    registry = load_registry(agents_dir)
    return tuple(Initiator(a.id, a.name) for i in DEFAULT_CLASS if (a := registry.agents.get(i)) is not None
                 and a.role == "student")


async def run_closing(llm: LLMClient, reporter: StepReporter, work: Awaitable[T]) -> T:
    """``work`` with the progress shown, the client closed after."""
    from ..llm.port import close_llm

    try:
        with reporter.running():
            return await work
    finally:
        await close_llm(llm)


def result_summary(result: GeneratedLesson) -> str:
    kinds = [scene.type for scene in result.lesson.scenes]
    counts = ", ".join(f"{kinds.count(k)} {k}{'s' if kinds.count(k) != 1 else ''}"
                       for k in ("slide", "quiz", "discussion") if k in kinds)
    notes = [f"{result.retries} step{'s' if result.retries != 1 else ''} retried"] if result.retries else []
    notes += [f"{result.repaired} repl{'ies' if result.repaired != 1 else 'y'} repaired"] if result.repaired else []
    notes += [f"fixed: {result.fixes.describe()}"] if result.fixes else []
    return f"{len(kinds)} scenes ({counts})" + (f"; {'; '.join(notes)}" if notes else "")
