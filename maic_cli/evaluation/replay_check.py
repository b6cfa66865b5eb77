"""``maic replay --check``: re-run a recorded class on its recorded replies and diff the events.

The orchestration (director rules, prompts, parser, round loop) runs again with
``ReplayLLM`` serving the transcript's raw replies in order; the events it
yields are compared with the recorded ones.  Ids, timings and usage are left
out of the comparison, and runs of text deltas are joined (chunking differs
between a live stream and a replay), so what is compared is what the class
said and did.  A difference points at the first event that changed — a
regression test for prompt or director changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.classroom import Classroom
from ..engine.events import Event
from ..engine.runner import ClassRunner, RunnerHooks
from ..llm.replay import ReplayLLM
from ..llm.spec import ModelSpec
from ..store.transcript import EventLine, LearnerLine, RoundEndLine, RoundLine, Transcript

IGNORED = {"message_id", "action_id", "usage"}


def normalize(events: list[Event]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for event in events:
        data = {k: v for k, v in event.model_dump(mode="json").items() if k not in IGNORED}
        if data["type"] == "text_delta" and out and out[-1]["type"] == "text_delta":
            out[-1]["content"] += data["content"]
            continue
        out.append(data)
    return out


@dataclass
class CheckResult:
    compared: int
    difference: str | None

    @property
    def ok(self) -> bool:
        return self.difference is None


class _Collect(RunnerHooks):
    def __init__(self) -> None:
        self.events: list[Event] = []

    def event(self, event: Event) -> None:
        self.events.append(event)


async def rerun(transcript: Transcript) -> list[Event]:
    """Play the recorded learner turns again, as recorded (each round with its recorded trigger and
    config changes).  A lesson's own steps — its scenes, quiz answers and scripted lectures — are data,
    not orchestration: they are handed to the class again as recorded, and the grading calls are left
    out of the replies, so the rounds between them are what is checked."""
    header = transcript.header
    produced = _Collect()
    # Transcripts from before director policies name none: they were played under the LLM director.
    config = header.config.model_copy(update={"director": header.config.director or "llm"})
    runner = ClassRunner(Classroom(store=header.store.model_copy(deep=True)), config,
                         ReplayLLM([c for c in transcript.calls() if c.purpose in ("director", "agent")],
                                   name=f"replay:{transcript.path}"),
                         agents={a.id: a for a in header.agents}, profile=header.profile,
                         spec=ModelSpec.parse(header.model),  # the prompts the recorded model was given
                         hooks=[produced])
    in_round = False  # inside a round the engine plays again (its recorded events are what is compared)
    for entry in transcript.entries:
        if isinstance(entry, LearnerLine):
            runner.add_learner_message(entry.text)
        elif isinstance(entry, RoundLine) and not entry.lecture:
            in_round = True
            # A round with overrides (a lesson's lecture or discussion) may be one no learner message began.
            await runner.play_round(entry.trigger, overrides=entry.overrides, fresh=entry.overrides is not None)
        elif isinstance(entry, RoundEndLine):
            in_round = False
        elif isinstance(entry, EventLine) and not in_round:  # a lesson step or a scripted lecture
            runner.emit(entry.event)
    return produced.events


def describe(event: dict[str, Any] | None) -> str:
    if event is None:
        return "(nothing)"
    text = repr(event)
    return text if len(text) <= 300 else text[:297] + "…"


async def check_transcript(transcript: Transcript) -> CheckResult:
    recorded = normalize([event for _, event in transcript.events()])
    produced = normalize(await rerun(transcript))
    for index in range(max(len(recorded), len(produced))):
        want = recorded[index] if index < len(recorded) else None
        got = produced[index] if index < len(produced) else None
        if want != got:
            return CheckResult(index, f"event {index + 1} differs:\n  recorded: {describe(want)}\n"
                                      f"  now:      {describe(got)}")
    return CheckResult(len(recorded), None)
