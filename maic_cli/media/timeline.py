"""The one place an export's times are decided: when each sentence is said and when each board is shown.

:func:`lay_out` takes the items (:mod:`.script`) and how long each sentence's audio is, and places them one after
another with natural pauses: a short one between a speaker's sentences, a longer one when the speaker changes,
a longer one still when the board changes between turns (a new slide).  A board is shown from the end of the
sentence it follows (from the start, before any sentence).  The audio track, the captions, the narration script
and the video all read this one :class:`Timeline`, so the captions follow the audio by construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .script import Board, Item, Said, Shown

LEAD_IN = 0.4  # seconds of silence before the first sentence
SENTENCE_GAP = 0.35  # between two sentences of one turn
TURN_GAP = 0.8  # between two turns
SCENE_GAP = 1.2  # before a turn that a change of slide opens
TAIL = 0.8  # after the last sentence
HOLD = 1.5  # the least time a board with nothing said over it is shown


@dataclass(frozen=True)
class Utterance:
    """One sentence on the timeline (seconds from the start)."""

    speaker: str
    name: str
    text: str
    turn: int
    start: float
    end: float
    color: str = ""


@dataclass(frozen=True)
class Scene:
    """A board shown from ``start`` to ``end``."""

    board: Board
    start: float
    end: float


@dataclass
class Timeline:
    utterances: list[Utterance] = field(default_factory=list)
    scenes: list[Scene] = field(default_factory=list)
    duration: float = 0.0


def lay_out(items: list[Item], seconds: list[float]) -> Timeline:
    """Place ``items`` in time; ``seconds[i]`` is how long the i-th :class:`Said` item's audio lasts."""
    said = [item for item in items if isinstance(item, Said)]
    if len(seconds) != len(said):
        raise ValueError(f"{len(said)} sentences but {len(seconds)} durations")
    timeline = Timeline()
    now = 0.0
    spoken = 0
    last: Said | None = None
    board_changed = False
    boards: list[tuple[float, Board]] = []
    for item in items:
        if isinstance(item, Shown):
            if boards and (board_changed or last is None) and now - boards[-1][0] < HOLD:
                now = boards[-1][0] + HOLD  # nothing was said over the board before: it is held a moment
            boards.append((now, item.board))
            board_changed = True
            continue
        if last is None:
            now += LEAD_IN
        elif item.turn != last.turn:
            now += SCENE_GAP if board_changed else TURN_GAP
        else:
            now += SENTENCE_GAP
        length = max(0.0, seconds[spoken])
        spoken += 1
        timeline.utterances.append(Utterance(item.speaker, item.name, item.text, item.turn,
                                             round(now, 3), round(now + length, 3), item.color))
        now += length
        last, board_changed = item, False
    if boards and (last is None or board_changed):
        now = max(now, boards[-1][0] + HOLD)  # the last board is seen, even with nothing said over it
    timeline.duration = round(now + (TAIL if timeline.utterances else 0.0), 3)
    merged: list[tuple[float, Board]] = []
    for start, board in boards:
        start = round(start, 3)
        if merged and merged[-1][0] == start:
            merged[-1] = (start, board)  # two changes at one instant: the later one is what is seen
        else:
            merged.append((start, board))
    for number, (start, board) in enumerate(merged):
        end = merged[number + 1][0] if number + 1 < len(merged) else timeline.duration
        timeline.scenes.append(Scene(board, start, end))
    return timeline
