"""Captions (WebVTT, SubRip) and the narration script (Markdown), from the one timeline.

A cue is a sentence, or a part of a long one: at most :data:`LINES` lines of :data:`LINE_CHARS` characters, a
part lasting its share of the sentence's time by its characters.  WebVTT names the speaker in a voice span
(``<v Ms. Rivera>``), SubRip in front of the text (``Ms. Rivera: …``).  Text was cleaned when the items were made;
here it is escaped for the format (``&``, ``<``, ``>`` in WebVTT; a SubRip cue never holds an empty line or an
arrow ``-->``, in its text or in its speaker's name, so no line of it reads as a timing line).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from ..untrusted import markdown_text
from .timeline import Timeline, Utterance

_ARROW = re.compile(r"--+>")
LINE_CHARS = 42
LINES = 2


@dataclass(frozen=True)
class Cue:
    start: float
    end: float
    speaker: str
    lines: tuple[str, ...]


def _parts(text: str) -> list[list[str]]:
    lines = textwrap.wrap(text, LINE_CHARS, break_long_words=True, break_on_hyphens=False) or [""]
    return [lines[i:i + LINES] for i in range(0, len(lines), LINES)]


def cues(timeline: Timeline) -> list[Cue]:
    """Every caption cue, in order: a sentence's parts share its time by their characters."""
    out: list[Cue] = []
    for utterance in timeline.utterances:
        parts = _parts(utterance.text)
        weights = [max(1, sum(len(line) for line in part)) for part in parts]
        at, span = utterance.start, utterance.end - utterance.start
        for part, weight in zip(parts, weights, strict=True):
            length = span * weight / sum(weights)
            out.append(Cue(round(at, 3), round(at + length, 3), utterance.name, tuple(part)))
            at += length
    return out


def _stamp(seconds: float, mark: str) -> str:
    millis = max(0, round(seconds * 1000))
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    secs, millis = divmod(millis, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{mark}{millis:03d}"


def _vtt_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("-->", "--&gt;")


def webvtt(timeline: Timeline) -> str:
    out = ["WEBVTT", ""]
    for number, cue in enumerate(cues(timeline), 1):
        speaker = _vtt_escape(cue.speaker).replace("\n", " ")
        out += [str(number), f"{_stamp(cue.start, '.')} --> {_stamp(cue.end, '.')}",
                *(f"<v {speaker}>{_vtt_escape(line)}" for line in cue.lines), ""]
    return "\n".join(out)


def _srt_line(text: str) -> str:
    """A cue's text line that no reader takes for a timing line: every arrow (``-->``, ``--->`` …) made ``->``."""
    return _ARROW.sub("->", text)


def subrip(timeline: Timeline) -> str:
    out = []
    for number, cue in enumerate(cues(timeline), 1):
        lines = [f"{cue.speaker}: {cue.lines[0]}", *cue.lines[1:]]  # the speaker first, then every line escaped
        out += [str(number), f"{_stamp(cue.start, ',')} --> {_stamp(cue.end, ',')}", *map(_srt_line, lines), ""]
    return "\n".join(out)


def clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60:02d}:{whole % 60:02d}"


def narration(timeline: Timeline, title: str) -> str:
    """The narration script: a heading, then each turn as its speaker, its start time and its text."""
    out = [f"# {markdown_text(title)}", "", f"Length {clock(timeline.duration)}.", ""]
    turn: Utterance | None = None
    text: list[str] = []
    for utterance in [*timeline.utterances, None]:
        if utterance is None or turn is None or utterance.turn != turn.turn:
            if turn is not None:
                out += [f"**{markdown_text(turn.name)}** ({clock(turn.start)})", "",
                        markdown_text(" ".join(text)), ""]
            turn, text = utterance, []
        if utterance is not None:
            text.append(utterance.text)
    return "\n".join(out).rstrip("\n") + "\n"
