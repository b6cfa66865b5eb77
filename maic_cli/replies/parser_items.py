"""What the streaming parser emits, and the speech filter it applies.

:class:`TextItem` (a delta of speech) and :class:`ActionItem` (a complete
action), the parser's recovery counters, the top-level item being read
(:class:`TopObject`), and :class:`QuoteMarkerStripper`,
which removes Markdown quote markers (``>``) at line starts from speech as it
streams, whatever the chunking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(slots=True)
class TextItem:
    """A piece of speech belonging to text item number ``index``."""

    content: str
    index: int
    type: ClassVar[str] = "text"


@dataclass(slots=True)
class ActionItem:
    name: str
    params: dict[str, Any]
    index: int
    too_deep: bool = False  # nested too deeply to be parsed: ``params`` is empty, the action unusable
    type: ClassVar[str] = "action"


Item = TextItem | ActionItem


class QuoteMarkerStripper:
    """Removes Markdown quote markers (``>``) at line starts from streamed speech."""

    __slots__ = ("at_line_start", "pending")

    def __init__(self) -> None:
        self.at_line_start = True
        self.pending = ""

    def feed(self, text: str) -> str:
        out: list[str] = []
        pos, n = 0, len(text)
        while pos < n:
            if self.at_line_start:
                end = pos
                while end < n and text[end] in " \t>":
                    end += 1
                self.pending += text[pos:end]
                if end == n:
                    break
                out.append(self.flush())
                self.at_line_start = False
                pos = end
            newline = text.find("\n", pos)
            if newline == -1:
                out.append(text[pos:])
                break
            out.append(text[pos:newline + 1])
            pos = newline + 1
            self.at_line_start = True
        return "".join(out)

    def flush(self) -> str:
        pending, self.pending = self.pending, ""
        return "" if ">" in pending else pending


@dataclass
class ParserStats:
    repaired: int = 0  # objects that needed json_repair
    dropped: int = 0  # items that were neither text nor an action
    truncated: int = 0  # objects cut off by the end of the reply
    too_deep: int = 0  # objects nested too deeply to parse (dropped, their speech kept)
    no_array: bool = False  # the reply was prose, taken as one text item

    @property
    def recoveries(self) -> int:
        return self.repaired + self.dropped + self.truncated + self.too_deep + int(self.no_array)


@dataclass
class TopObject:
    """The top-level item being read: its raw text and what is known of it so far."""

    index: int
    parts: list[str] = field(default_factory=list)
    key: str | None = None
    kind: str | None = None  # the decoded "type" value once its string closed
    name: str | None = None  # the decoded "name" value once its string closed
    content: list[str] = field(default_factory=list)  # decoded "content" so far
    streaming: bool = False
    too_deep: bool = False
    stripper: QuoteMarkerStripper = field(default_factory=QuoteMarkerStripper)
