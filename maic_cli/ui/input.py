"""Learner input: prompt-toolkit on a terminal (history, multi-line, slash completion).

The history file is kept in ``$MAIC_HOME/history``; if it cannot be used (a
directory, unreadable, not a regular file) the session keeps its history in
memory and says so in one line.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion, WordCompleter
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings

from ..untrusted import clean


class ClassCompleter(Completer):
    """Slash commands at the start of a line (``commands``: name → help, from the chat's registry in
    chat/slash.py); ``@id`` mentions of agents."""

    def __init__(self, agent_ids: list[str], commands: Mapping[str, str]) -> None:
        self.commands = WordCompleter(list(commands), sentence=True, meta_dict=dict(commands))
        self.agent_ids = agent_ids

    def get_completions(self, document, complete_event):  # type: ignore[no-untyped-def]
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            yield from self.commands.get_completions(document, complete_event)
        elif text.startswith("@") and " " not in text:
            for agent_id in self.agent_ids:
                if agent_id.startswith(text[1:]):
                    yield Completion(f"@{agent_id} ", start_position=-len(text))


def _bindings() -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: Any) -> None:  # Alt-Enter (Esc, Enter): a new line inside the message
        event.current_buffer.insert_text("\n")

    return bindings


class _TolerantFileHistory(FileHistory):
    """A file history that loses a line rather than the prompt when the file fails later."""

    def load_history_strings(self) -> Iterable[str]:
        try:
            return list(super().load_history_strings())
        except OSError:
            return []

    def store_string(self, string: str) -> None:
        with contextlib.suppress(OSError):
            super().store_string(string)


def _note(text: str) -> None:
    sys.stderr.write(f"maic: note: {text}\n")


def open_history(path: Path | None, note: Callable[[str], None] = _note) -> Any:
    """A file history at ``path`` if it is (or can be made) a readable, writable regular file."""
    if path is None:
        return InMemoryHistory()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if path.exists() and not path.is_file():
            raise OSError(0, "a directory" if path.is_dir() else "not a regular file")
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))  # created private: it holds questions
        with path.open("rb"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        note(f"history file {clean(str(path))} cannot be used ({reason}); history is kept for this session only")
        return InMemoryHistory()
    return _TolerantFileHistory(str(path))


TOOLBAR = "Enter: send · Alt-Enter: new line · @id: ask someone · /help"


def make_prompt_session(history_file: Path | None, agent_ids: list[str], *, commands: Mapping[str, str],
                        input: Any = None, output: Any = None, max_chars: int | None = None,
                        note: Callable[[str], None] = _note) -> PromptSession[str]:
    """The chat's prompt.  With ``max_chars``, the line being typed or pasted never grows past it (what goes
    beyond is dropped as it arrives, and the toolbar says so): every key costs time in the line's length, so
    an unbounded line made typing 50 KB take 35 s and 1.2 GB."""
    history = open_history(history_file, note)

    def toolbar() -> str:
        full = max_chars is not None and len(session.default_buffer.text) >= max_chars
        return f"the line is at its {max_chars:,}-character limit · {TOOLBAR}" if full else TOOLBAR

    if max_chars is not None:
        from prompt_toolkit.input import create_input

        input = input if input is not None else create_input()
        _coalesce_bursts(input)
    session: PromptSession[str] = PromptSession(
        history=history, completer=ClassCompleter(agent_ids, commands), key_bindings=_bindings(),
        complete_while_typing=True, input=input, output=output, reserve_space_for_menu=3,
        bottom_toolbar=toolbar, prompt_continuation="… ")
    if max_chars is not None:
        limit = max_chars

        def cap(buffer: Any) -> None:
            if len(buffer.text) > limit:
                position = min(buffer.cursor_position, limit)
                buffer.text = buffer.text[:limit]
                buffer.cursor_position = position

        session.default_buffer.on_text_changed += cap
    return session


BURST = 64  # this many printable keys in one read of the terminal are a paste, not typing


def _coalesce_bursts(terminal: Any) -> None:
    """Make a run of :data:`BURST` or more printable keys in one read of ``terminal`` one paste.

    prompt-toolkit handles each key press on its own (about a millisecond each: it matches the key against
    every binding of the layout), so a terminal that sends 50 KB as key presses (a paste without bracketed
    paste mode, a hostile program writing to the tty) kept the chat busy for half a minute.  A person types a
    key or two per read; a burst is handled as the one paste it is.
    """
    from prompt_toolkit.key_binding import KeyPress
    from prompt_toolkit.keys import Keys

    read_keys = terminal.read_keys

    def printable(press: Any) -> bool:
        return not isinstance(press.key, Keys) and len(press.key) == 1 and press.key.isprintable()

    def coalesced() -> list[Any]:
        presses = read_keys()
        if len(presses) < BURST:
            return list(presses)
        merged: list[Any] = []
        run: list[Any] = []
        for press in [*presses, None]:
            if press is not None and printable(press):
                run.append(press)
                continue
            if len(run) >= BURST:
                merged.append(KeyPress(Keys.BracketedPaste, "".join(p.data for p in run)))
            else:
                merged.extend(run)
            run = []
            if press is not None:
                merged.append(press)
        return merged

    terminal.read_keys = coalesced
