"""The chat's slash commands, in one registry: name, help and handler together.

``/help``, prompt-toolkit's completion (ui/input.py, handed :meth:`SlashCommands.helps`) and
the chat's dispatch (chat/loop.py) all read the same entries, so a new command is
one decorated function::

    @COMMANDS.command("/ask", "/ask QUESTION — answer from the lesson's sources")
    async def ask(app: ChatApp, argument: str) -> None: ...

A handler gets the chat application and the text after the name (stripped); it may be a
plain or an async function, and returns ``False`` to leave the chat (anything else stays).
A command registered with ``lesson=True`` belongs to a lesson: an open lesson takes it
first (chat/lesson.py), and without one the handler answers.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

Handler = Callable[[Any, str], Awaitable[bool | None] | bool | None]


@dataclass(frozen=True)
class SlashCommand:
    name: str  # with its slash: "/save"
    help: str  # one line, shown by /help and next to the completion
    handler: Handler
    aliases: tuple[str, ...] = ()
    lesson: bool = False  # a lesson command: an open lesson handles it before the registry does


class SlashCommands:
    """An ordered registry; ``/help`` lists the commands in the order they were added."""

    def __init__(self) -> None:
        self._commands: dict[str, SlashCommand] = {}
        self._names: dict[str, SlashCommand] = {}  # every name and alias → its command

    def add(self, command: SlashCommand) -> SlashCommand:
        for name in (command.name, *command.aliases):
            if not name.startswith("/") or len(name) < 2 or " " in name:
                raise ValueError(f"a slash command is '/' and a word: {name!r}")
            if name in self._names:
                raise ValueError(f"slash command {name} is registered twice")
        self._commands[command.name] = command
        self._names.update({name: command for name in (command.name, *command.aliases)})
        return command

    def command(self, name: str, help: str, *, aliases: tuple[str, ...] = (),
                lesson: bool = False) -> Callable[[Handler], Handler]:
        """Register the decorated function as the handler of ``name``."""
        def register(handler: Handler) -> Handler:
            self.add(SlashCommand(name, help, handler, aliases, lesson))
            return handler
        return register

    def find(self, name: str) -> SlashCommand | None:
        return self._names.get(name)

    def __iter__(self) -> Any:
        return iter(self._commands.values())

    @property
    def lesson_names(self) -> frozenset[str]:
        return frozenset(c.name for c in self._commands.values() if c.lesson)

    def helps(self) -> dict[str, str]:
        """Name → help, in order (what completion shows)."""
        return {c.name: c.help for c in self._commands.values()}

    def help_text(self) -> str:
        return "\n".join(f"  {c.name:<12} {c.help}" for c in self._commands.values())

    async def run(self, app: Any, text: str) -> bool | None:
        """Dispatch ``/name argument``; ``None`` if no command has that name."""
        name, _, argument = text.strip().partition(" ")
        found = self.find(name)
        if found is None:
            return None
        outcome = found.handler(app, argument.strip())
        if inspect.isawaitable(outcome):
            outcome = await outcome
        return outcome is not False
