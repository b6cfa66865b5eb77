"""Incremental parser for an agent's streamed reply (ARCHITECTURE.md, "One turn").

An agent answers with one JSON array of text and action items.  The parser
returns, in stream order, :class:`TextItem` speech deltas (streamed while the
item is still open) and :class:`ActionItem` actions (emitted exactly once,
when the object's ``}`` arrives outside any string).

How it stays linear and chunking-invariant: one forward scan over the reply,
jumping between structural characters with compiled regexes; a chunk that ends
in the middle of something undecided (an escape, a surrogate pair, a quote
whose meaning needs the next characters) leaves a short tail that is rescanned
with the next chunk.  Decisions depend only on the characters, never on where
the chunks split.  Each top-level object's raw text is parsed once, when it
closes (``json.loads``, else ``json_repair``).

Recovery: text before the first ``[`` opening an array of items is skipped; no
such array → the reply is one text item; a cut-off reply keeps what was complete
and the partial speech; a quote that cannot end a JSON string is text; nothing raises.
Bounded: an item nested too deeply is not parsed (``stats.too_deep``; an action
comes out marked ``too_deep``); broken surrogates in speech and params become U+FFFD.
"""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair

from .parser_items import ActionItem, Item, ParserStats, QuoteMarkerStripper, TextItem, TopObject
from .sanitize import MAX_DEPTH, clean_object, replace_surrogates

_STRUCTURAL = re.compile(r'[\[\]{}",:]')
_STRING_STOP = re.compile(r'["\\]')
_WS = " \t\r\n"
_LOOKAHEAD_LIMIT = 64  # whitespace after a quote beyond which the quote is taken as closing
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = frozenset("0123456789abcdefABCDEF")
_AFTER_ARRAY_COMMA = frozenset('"{[]-0123456789tfn')
_FENCE = re.compile(r"^\s*```[\w-]*\s*\n?|\n?\s*```\s*$")

_MAX_ITEM_DEPTH = MAX_DEPTH + 1  # deeper: never parsed (recursive decoders downstream would fail)

_PRE, _ARRAY, _DONE = 0, 1, 2
_KEY, _VALUE, _ELEM = 0, 1, 2


class StructuredStreamParser:
    """Feed chunks with :meth:`feed`, then call :meth:`finish` once."""

    def __init__(self) -> None:
        self._mode = _PRE
        self._tail = ""
        self._pre: list[str] = []
        self._stack: list[str] = []  # containers open inside the top-level array
        self._expect_key: list[bool] = []  # per container: does the next string name a key?
        self._in_string = False
        self._role = _ELEM
        self._capture: str | None = None  # "key", "type", "content", "name", "item" or None
        self._captured: list[str] = []
        self._obj: TopObject | None = None
        self._item_stripper: QuoteMarkerStripper | None = None  # a bare string item
        self._next_index = 0
        self._out: list[Item] = []
        self._finished = False
        self.stats = ParserStats()

    # -- public ----------------------------------------------------------------
    def feed(self, chunk: str) -> list[Item]:
        if not chunk or self._finished:
            return []
        data = self._tail + chunk if self._tail else chunk
        self._tail = ""
        self._out = []
        self._scan(data, final=False)
        return self._out

    def finish(self) -> list[Item]:
        if self._finished:
            return []
        self._finished = True
        self._out = []
        data, self._tail = self._tail, ""
        if data:
            self._scan(data, final=True)
        if self._mode == _PRE:
            self._finish_prose()
        elif self._mode == _ARRAY:
            self._finish_open_item()
        return self._out

    # -- scanning ----------------------------------------------------------------
    def _scan(self, data: str, final: bool) -> None:
        i, n = 0, len(data)
        if self._mode == _PRE:
            i = self._scan_preamble(data, final)
            if self._mode != _ARRAY:
                return
        obj_start = 0 if self._obj is not None else -1
        while i < n and self._mode == _ARRAY:
            if self._in_string:
                i = self._scan_string(data, i, final)
                if i < 0:  # suspended: the rest is kept as tail
                    if self._obj is not None and obj_start >= 0:
                        self._obj.parts.append(data[obj_start:n - len(self._tail)])
                    return
                continue
            match = _STRUCTURAL.search(data, i)
            if match is None:
                i = n
                break
            j = match.start()
            char = data[j]
            i = j + 1
            if not self._stack:
                if char == "{":
                    self._open_top_object()
                    obj_start = j
                elif char == '"':
                    self._open_bare_item()
                elif char == "[":
                    self._push("[")
                elif char == "]":
                    self._mode = _DONE
            elif char == "{" or char == "[":
                self._push(char)
            elif char == "}" or char == "]":
                self._pop()
                if not self._stack and self._obj is not None:
                    self._obj.parts.append(data[obj_start:i])
                    obj_start = -1
                    self._close_top_object()
            elif char == '"':
                self._open_string()
            elif char == ":":
                if self._stack[-1] == "{":
                    self._expect_key[-1] = False
            elif char == "," and self._stack[-1] == "{":
                self._expect_key[-1] = True
        if self._obj is not None and obj_start >= 0:
            self._obj.parts.append(data[obj_start:n])

    def _scan_preamble(self, data: str, final: bool) -> int:
        """Skip to the first ``[`` that opens an array of items; return the index after it."""
        pos = 0
        while True:
            bracket = data.find("[", pos)
            if bracket == -1:
                self._pre.append(data)
                return len(data)
            k = bracket + 1
            while k < len(data) and data[k] in _WS and k - bracket < _LOOKAHEAD_LIMIT:
                k += 1
            if k == len(data) and k - bracket < _LOOKAHEAD_LIMIT:
                if final:  # a lone "[" at the very end opens nothing
                    self._pre.append(data)
                else:
                    self._pre.append(data[:bracket])
                    self._tail = data[bracket:]
                return len(data)
            if data[k] in '{"]' or k - bracket >= _LOOKAHEAD_LIMIT:
                self._pre.append(data[:bracket])
                self._mode = _ARRAY
                return bracket + 1
            pos = bracket + 1

    def _push(self, char: str) -> None:
        self._stack.append(char)
        self._expect_key.append(char == "{")
        if self._obj is not None and len(self._stack) > _MAX_ITEM_DEPTH:
            self._obj.too_deep = True

    def _pop(self) -> None:
        self._stack.pop()
        self._expect_key.pop()
        if self._stack and self._stack[-1] == "{":
            self._expect_key[-1] = True

    def _open_string(self) -> None:
        in_object = self._stack[-1] == "{"
        self._in_string = True
        self._captured = []
        if in_object and self._expect_key[-1]:
            self._role = _KEY
        else:
            self._role = _VALUE if in_object else _ELEM
        self._capture = None
        if len(self._stack) == 1 and self._obj is not None:
            if self._role == _KEY:
                self._capture = "key"
            elif self._role == _VALUE and self._obj.key in ("type", "content", "name"):
                self._capture = self._obj.key

    def _scan_string(self, data: str, i: int, final: bool) -> int:
        """Read string characters from ``i``; return where scanning goes on, or -1 to suspend."""
        n = len(data)
        while True:
            match = _STRING_STOP.search(data, i)
            j = match.start() if match else n
            if j > i and self._capture is not None:
                self._take(data[i:j])
            if match is None:
                return n
            if data[j] == "\\":
                consumed = self._escape(data, j, final)
                if consumed < 0:
                    self._tail = data[j:]
                    return -1
                i = j + consumed
                continue
            verdict = self._quote_closes(data, j, final)
            if verdict is None:
                self._tail = data[j:]
                return -1
            if verdict:
                self._close_string()
                return j + 1
            if self._capture is not None:
                self._take('"')
            i = j + 1

    def _escape(self, data: str, j: int, final: bool) -> int:
        """Decode the escape at ``j``; return its length, or -1 if more input is needed."""
        n = len(data)
        if j + 1 >= n:
            return 2 if final else -1
        code = data[j + 1]
        if code != "u":
            if self._capture is not None:
                self._take(_ESCAPES.get(code, code))
            return 2
        if j + 6 > n:
            return n - j if final else -1
        digits = data[j + 2:j + 6]
        if not set(digits) <= _HEX:
            if self._capture is not None:
                self._take("u")
            return 2
        point = int(digits, 16)
        length, text = 6, chr(point)
        if 0xD800 <= point < 0xDC00:
            if j + 12 > n and not final and data[j + 6:j + 8] == "\\u"[: n - j - 6]:
                return -1
            low = data[j + 8:j + 12] if data[j + 6:j + 8] == "\\u" else ""
            if len(low) == 4 and set(low) <= _HEX and 0xDC00 <= int(low, 16) < 0xE000:
                text = chr(0x10000 + ((point - 0xD800) << 10) + (int(low, 16) - 0xDC00))
                length = 12
            else:
                text = "\ufffd"
        elif 0xDC00 <= point < 0xE000:
            text = "\ufffd"
        if self._capture is not None:
            self._take(text)
        return length

    def _quote_closes(self, data: str, j: int, final: bool) -> bool | None:
        """Does the quote at ``j`` end the string?  ``None``: cannot tell yet."""
        if self._role == _KEY:
            return True
        n = len(data)
        k = self._skip_ws(data, j + 1)
        if k == n:
            return True if final or k - j > _LOOKAHEAD_LIMIT else None
        char = data[k]
        if char in '}]:"' or k - j > _LOOKAHEAD_LIMIT:
            return True
        if char != ",":
            return False
        k2 = self._skip_ws(data, k + 1)
        if k2 == n:
            return True if final or k2 - j > _LOOKAHEAD_LIMIT else None
        if self._role == _VALUE:
            return data[k2] in '"}'
        return data[k2] in _AFTER_ARRAY_COMMA

    @staticmethod
    def _skip_ws(data: str, k: int) -> int:
        n = len(data)
        while k < n and data[k] in _WS:
            k += 1
        return k

    # -- captured strings -------------------------------------------------------------
    def _take(self, text: str) -> None:
        capture = self._capture
        if capture == "content":
            obj = self._obj
            assert obj is not None
            obj.content.append(text)
            if obj.streaming:
                self._emit_text(obj.stripper.feed(text), obj.index)
        elif capture == "item":
            assert self._item_stripper is not None
            self._emit_text(self._item_stripper.feed(text), self._next_index - 1)
        else:
            self._captured.append(text)

    def _close_string(self) -> None:
        self._in_string = False
        capture, self._capture = self._capture, None
        if self._stack and self._stack[-1] == "{":
            self._expect_key[-1] = self._role != _KEY
        obj = self._obj
        if capture == "key" and obj is not None:
            obj.key = "".join(self._captured)
        elif capture == "name" and obj is not None:
            obj.name = "".join(self._captured)
        elif capture == "type" and obj is not None:
            obj.kind = "".join(self._captured)
            if obj.kind == "text" and not obj.streaming:
                obj.streaming = True
                self._emit_text(obj.stripper.feed("".join(obj.content)), obj.index)
        elif capture == "item":
            assert self._item_stripper is not None
            self._emit_text(self._item_stripper.flush(), self._next_index - 1)
            self._item_stripper = None

    # -- items -------------------------------------------------------------------------
    def _open_top_object(self) -> None:
        self._push("{")
        self._obj = TopObject(index=self._next_index)
        self._next_index += 1

    def _open_bare_item(self) -> None:
        self._in_string = True
        self._role = _ELEM
        self._capture = "item"
        self._item_stripper = QuoteMarkerStripper()
        self._next_index += 1

    def _close_top_object(self) -> None:
        obj, self._obj = self._obj, None
        assert obj is not None
        if obj.too_deep:  # not parsed: its speech is kept, an action is emitted as too deep (dropped)
            self.stats.too_deep += 1
            value: Any = {"type": "text"} if obj.kind == "text" else {"type": obj.kind, "name": obj.name}
        else:
            value = self._load("".join(obj.parts))
        decoded = "".join(obj.content)
        if not isinstance(value, dict):
            value = {}
        kind = value.get("type")
        if kind == "text" or (kind is None and "content" in value and "name" not in value) or (
                obj.streaming and kind is None):
            full = value.get("content")
            full = replace_surrogates(full) if isinstance(full, str) else decoded
            if obj.streaming:
                rest = full[len(decoded):] if full.startswith(decoded) else ""
                self._emit_text(obj.stripper.feed(rest) + obj.stripper.flush(), obj.index)
            else:
                self._emit_text(obj.stripper.feed(full) + obj.stripper.flush(), obj.index)
            return
        name = value.get("name") or value.get("action")
        if kind in ("action", None) and isinstance(name, str) and name:
            self._out.append(ActionItem(replace_surrogates(name), clean_object(value.get("params")), obj.index,
                                        too_deep=obj.too_deep))
            return
        if not obj.too_deep:
            self.stats.dropped += 1

    def _load(self, raw: str) -> Any:
        try:
            return json.loads(raw, strict=False)
        except (ValueError, RecursionError):
            pass
        self.stats.repaired += 1
        try:
            return json_repair.loads(raw)
        except Exception:  # noqa: BLE001 - a repair library must never crash the stream
            return None

    def _emit_text(self, text: str, index: int) -> None:
        if text:
            self._out.append(TextItem(replace_surrogates(text), index))

    # -- the end -------------------------------------------------------------------------
    def _finish_prose(self) -> None:
        self.stats.no_array = True
        text = _FENCE.sub("", "".join(self._pre)).strip()
        stripper = QuoteMarkerStripper()
        self._emit_text(stripper.feed(text) + stripper.flush(), self._next_index)

    def _finish_open_item(self) -> None:
        if self._in_string and self._capture == "item":
            self._close_string()
            return
        obj = self._obj
        if obj is None:
            return
        self._obj = None
        if obj.streaming:
            self._emit_text(obj.stripper.flush(), obj.index)
        elif obj.kind is None and obj.content:
            self._emit_text(obj.stripper.feed("".join(obj.content)) + obj.stripper.flush(), obj.index)
        else:
            self.stats.truncated += 1

