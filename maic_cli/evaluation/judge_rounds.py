"""A recorded class, read back as the rounds a judge scores (evaluation/judge.py).

The judge reads what the class said from its transcript — the same file whether
the judge runs right after a run (``maic run --judge``) or later on a finished batch
(``maic report DIR --judge``).  Rounds and turns are counted as ``turns.csv`` counts
them (report/report_tables.py): a ``round`` line opens a round (the learner's message
is the ``learner`` line before it), and each agent turn ends with a ``done`` event
whose outcome is an agent; its speech is its text deltas, its actions their names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.models import AgentConfig
from ..store.transcript import EventLine, LearnerLine, RoundLine, Transcript
from .judge import RoundToJudge, TurnToJudge

MAX_SPEECH_CHARS = 8_000  # kept of one turn's speech (the judge is shown less)


@dataclass
class _OpenRound:
    learner: str | None
    turns: list[TurnToJudge] = field(default_factory=list)
    speech: dict[str, list[str]] = field(default_factory=dict)  # message id → text pieces
    sizes: dict[str, int] = field(default_factory=dict)
    actions: dict[str, list[str]] = field(default_factory=dict)
    speaker: str | None = None
    message: str | None = None

    def add_text(self, message_id: str, text: str) -> None:
        size = self.sizes.get(message_id, 0)
        if size < MAX_SPEECH_CHARS:  # linear: a huge reply is not joined in full
            self.speech.setdefault(message_id, []).append(text[:MAX_SPEECH_CHARS - size])
            self.sizes[message_id] = size + len(text)


def _turn(open_round: _OpenRound, speaker: str, agents: dict[str, AgentConfig]) -> TurnToJudge:
    agent = agents.get(speaker)
    message = open_round.message or ""
    return TurnToJudge(speaker=speaker, name=agent.name if agent else speaker, role=agent.role if agent else "?",
                       persona=" ".join((agent.persona if agent else "").split()),
                       text="".join(open_round.speech.get(message, [])).strip(),
                       actions=tuple(open_round.actions.get(message, [])))


def rounds_to_judge(transcript: Transcript) -> list[RoundToJudge]:
    """Every round the transcript holds, with its learner message and its agent turns in order."""
    header = transcript.header
    agents = {agent.id: agent for agent in header.agents}
    rounds: list[_OpenRound] = []
    learner: str | None = None
    in_lecture = False  # a lesson's scripted lecture: no round of the class, nothing to judge
    for entry in transcript.entries:
        if isinstance(entry, LearnerLine):
            learner = entry.text
        elif isinstance(entry, RoundLine):
            in_lecture = entry.lecture
            if not in_lecture:
                rounds.append(_OpenRound(learner))
                learner = None
        elif isinstance(entry, EventLine) and rounds and not in_lecture:
            current, event = rounds[-1], entry.event
            if event.type == "agent_start":
                current.speaker, current.message = event.agent_id, event.message_id
            elif event.type == "text_delta":
                current.add_text(event.message_id, event.content)
            elif event.type == "action":
                current.actions.setdefault(event.message_id, []).append(event.action_name)
            elif (event.type == "done" and event.outcome is not None and event.outcome.kind == "agent"
                  and not event.reply_dropped):  # a reply dropped whole took no turn
                current.turns.append(_turn(current, event.outcome.agent_id or current.speaker or "", agents))
                current.speaker = current.message = None
    name = header.profile.nickname or "the learner"
    return [RoundToJudge(index=index, learner=r.learner, turns=tuple(r.turns), learner_name=name,
                         topic=header.config.discussion_topic)
            for index, r in enumerate(rounds)]
