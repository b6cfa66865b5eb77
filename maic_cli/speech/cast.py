"""A voice for every agent: the persona's ``voice:`` where it chose one, else derived from its id and role.

:func:`cast` gives each agent of a class one :class:`~maic_cli.speech.port.Voice` of the engine in use.
What a persona chose (``voice: {id, speed, pitch}``, ``engine/models.py: AgentVoice``) is kept; what it
left out is derived, the same every time for the same class:

* the teacher is lower and steadier (a lower pitch, a slower pace), the assistant in between, and the
  students apart from each other and from the staff;
* an engine with one voice (the offline one) or that shifts pitch itself (espeak) makes several by pitch and
  speed: a teacher, an assistant and three students are three semitones apart (measured 12 % or more), a
  fourth student and later ones fall in between at their own pace;
* an engine with many voices (a provider's alloy, echo, onyx, nova …) gives each agent its own where it
  can: the teacher from the lower, steadier voices, the students by a stable hash of their ids.

A persona's voice id must be one of the engine's (one line listing them, :class:`VoiceChoiceError`), unless
the engine's list is open (a server's own voices).  The class never imports this module: it is given the
agents as plain data (anything with ``id``, ``role`` and ``voice``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Protocol

from ..errors import InputError
from ..untrusted import one_line
from .port import SpeechEngine, Voice

# (pitch in semitones, speed), taken in this order within a role.  Three semitones apart or more: Piper's own F0
# moves against its length scale (a voice synthesised faster to be resampled lower comes out higher), so nominal
# steps of 3 measure 15-20 % apart and the teacher's 5 (slow and steady) about 16 % (tests/test_voice_local.py);
# the fourth student and later fill in between, told apart by pace as well.
TEACHER_SLOTS = ((-5.0, 0.85), (-6.5, 0.88), (-3.5, 0.85))
ASSISTANT_SLOTS = ((0.0, 1.0), (-1.0, 0.97), (1.0, 1.02))
STUDENT_SLOTS = ((3.0, 1.08), (6.0, 1.04), (9.0, 1.1), (4.5, 1.15), (7.5, 1.0), (1.5, 1.12), (10.5, 1.05))
# A provider's voices, preferred by role (the rest follow in the engine's own order).
TEACHER_VOICES = ("onyx", "sage", "ash", "echo", "Charon", "Orus", "Kore")
ASSISTANT_VOICES = ("nova", "coral", "alloy", "Aoede", "Leda")


class VoiceChoiceError(InputError):
    """A persona chose a voice id the engine does not have (one line listing the engine's voices)."""


class ChosenVoice(Protocol):
    @property
    def id(self) -> str | None: ...
    @property
    def speed(self) -> float | None: ...
    @property
    def pitch(self) -> float | None: ...


class Castable(Protocol):
    """What casting needs of an agent (``engine/models.py: AgentConfig`` fits)."""

    @property
    def id(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def voice(self) -> ChosenVoice | None: ...


def stable_hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def _slots(role: str) -> tuple[tuple[float, float], ...]:
    return TEACHER_SLOTS if role == "teacher" else ASSISTANT_SLOTS if role == "assistant" else STUDENT_SLOTS


def _order(agents: Sequence[Castable]) -> list[Castable]:
    """Who chooses first: the teacher, then the assistant, then the students in the order of a stable hash of
    their ids (so which student sounds how depends on the id, not on the file order)."""
    rank = {"teacher": 0, "assistant": 1}
    return sorted(agents, key=lambda a: (rank.get(a.role, 2), stable_hash(a.id), a.id))


def check_voice_id(engine: SpeechEngine, voice_id: str, who: str) -> str:
    """``voice_id`` as the engine spells it; :class:`VoiceChoiceError` naming ``who`` and the engine's voices."""
    known = engine.voices()
    for name in known:
        if name.lower() == voice_id.lower():
            return name
    if getattr(engine, "accepts_any_voice", False):
        return voice_id
    listed = ", ".join(known[:40]) + (" …" if len(known) > 40 else "")
    raise VoiceChoiceError(f"{who}: unknown voice {one_line(voice_id)[:80]!r} for {engine.name}; its voices: {listed}")


def cast(agents: Iterable[Castable], engine: SpeechEngine) -> dict[str, Voice]:
    """Each agent's voice (by agent id) in ``engine``; the same class always gets the same voices."""
    ordered = _order(list(agents))
    voices = engine.voices()
    # An engine that shifts pitch itself (espeak) or has one voice: pitch and speed tell the agents apart.
    many = len(voices) > 1 and not getattr(engine, "shifts_pitch", False)
    taken_slots: set[tuple[float, float]] = set()
    taken_ids: set[str] = set()
    out: dict[str, Voice] = {}
    for agent in ordered:
        chosen = agent.voice
        voice_id = check_voice_id(engine, chosen.id, f"agent {agent.id}") if chosen and chosen.id else None
        if voice_id is None:
            voice_id = _derive_id(agent, voices, taken_ids) if many else (voices[0] if voices else "")
        taken_ids.add(voice_id)
        pitch, speed = _derive_slot(agent, taken_slots)
        # One voice for the class: pitch and speed tell the agents apart; many voices: the voice does.
        derived = Voice(engine.name, voice_id, speed=speed, pitch=pitch) if not many else \
            Voice(engine.name, voice_id, speed=speed if agent.role == "teacher" else 1.0, pitch=0.0)
        if chosen is not None:
            derived = replace(derived, speed=chosen.speed if chosen.speed is not None else derived.speed,
                              pitch=chosen.pitch if chosen.pitch is not None else derived.pitch)
        out[agent.id] = derived
    return out


def _derive_slot(agent: Castable, taken: set[tuple[float, float]]) -> tuple[float, float]:
    """The first free slot of the agent's role (agents come in :func:`_order`)."""
    slots = _slots(agent.role)
    for slot in slots:
        if slot not in taken:
            taken.add(slot)
            return slot
    # more agents of a role than slots: the hash alone (still stable, no longer unique)
    return slots[stable_hash(agent.id) % len(slots)]


def _derive_id(agent: Castable, voices: list[str], taken: set[str]) -> str:
    preferred = TEACHER_VOICES if agent.role == "teacher" else ASSISTANT_VOICES if agent.role == "assistant" else ()
    lowered = {v.lower(): v for v in voices}
    for name in preferred:
        if name.lower() in lowered and lowered[name.lower()] not in taken:
            return lowered[name.lower()]
    staff = {v.lower() for v in TEACHER_VOICES + ASSISTANT_VOICES}
    pool = [v for v in voices if v not in taken and (agent.role != "student" or v.lower() not in staff)]
    pool = pool or [v for v in voices if v not in taken] or voices
    return pool[stable_hash(agent.id) % len(pool)]
