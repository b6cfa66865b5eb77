"""Who speaks in which voice in an export: the speech room's casting, and a seat for the learner.

Every agent is cast by :func:`maic_cli.speech.cast.cast` (its persona's ``voice:``, else a voice derived from its
id and role), so an agent sounds the same in an export as in the chat.  A speaker the class's header does not
name (an agent id that only appears in events) is cast as a student.  The learner's own lines are said in a voice
of their own: cast after every agent (its id sorts after every agent id), so it takes a slot no agent holds and
changes no agent's voice; when the agents share one voice told apart by pitch, the learner's pitch is the one
farthest from every agent's (between -4 and +7 semitones).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from ..engine.models import AgentConfig, AgentVoice
from ..speech.cast import cast
from ..speech.port import SpeechEngine, Voice
from .script import LEARNER

LEARNER_SEAT = "~learner"  # after every agent id ([a-z0-9][a-z0-9_-]*) in the casting order
LEARNER_PITCHES = tuple(step / 2 for step in range(-8, 15))  # semitones tried for the learner: -4 … +7


@dataclass(frozen=True)
class _Seat:
    id: str
    role: str
    voice: AgentVoice | None = None


def voices_for(agents: Iterable[AgentConfig], engine: SpeechEngine,
               speakers: Iterable[str] = ()) -> Callable[[str], Voice]:
    """The voice of each speaker id (``LEARNER`` for the learner) in ``engine``."""
    known = list(agents)
    ids = {agent.id for agent in known}
    extra = [_Seat(speaker, "student") for speaker in dict.fromkeys(speakers)
             if speaker not in ids and speaker != LEARNER]
    cast_voices = cast([*known, *extra, _Seat(LEARNER_SEAT, "student")], engine)
    seat = cast_voices.pop(LEARNER_SEAT)
    same = [v.pitch for v in cast_voices.values() if v.id == seat.id]
    if same:  # one voice shared by pitch: the learner's as far from every agent's as the range allows
        best = max(LEARNER_PITCHES, key=lambda p: (min(abs(p - q) for q in same), -abs(p - 3.0)))
        seat = replace(seat, pitch=best)
    cast_voices[LEARNER] = seat
    fallback = next(iter(cast_voices.values()))

    def voice(speaker: str) -> Voice:
        return cast_voices.get(speaker, fallback)

    return voice
