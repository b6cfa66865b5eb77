"""The chat's slash commands are one registry (chat/slash.py): /help, completion and dispatch read it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent, Completer
from prompt_toolkit.document import Document
from typer.testing import CliRunner

from maic_cli.chat.loop import COMMANDS
from maic_cli.chat.slash import SlashCommand, SlashCommands
from maic_cli.cli.app import app
from maic_cli.ui.input import ClassCompleter
from tests.helpers import decision, reply


def completions(completer: Completer, text: str) -> list[str]:
    return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]


def test_help_completion_and_dispatch_list_the_same_commands() -> None:
    names = [command.name for command in COMMANDS]
    assert names[0] == "/help" and names[-1] == "/quit"
    assert {"/save", "/export", "/model", "/lesson", "/next", "/slide", "/outline"} <= set(names)
    help_lines = COMMANDS.help_text().splitlines()
    assert [line.split()[0] for line in help_lines] == names
    assert completions(ClassCompleter(["teacher"], COMMANDS.helps()), "/") == names
    assert COMMANDS.find("/exit") is COMMANDS.find("/q") is COMMANDS.find("/quit")  # aliases
    assert COMMANDS.lesson_names == {"/continue", "/next", "/prev", "/slide", "/outline"}


def test_a_new_command_is_one_registration_seen_by_help_completion_and_dispatch() -> None:
    registry = SlashCommands()
    heard: list[tuple[object, str]] = []

    @registry.command("/ask", "/ask QUESTION — answer from the sources")
    async def ask(app: object, argument: str) -> None:
        heard.append((app, argument))

    @registry.command("/bye", "leave", aliases=("/b",))
    def bye(app: object, argument: str) -> bool:
        return False

    assert "/ask QUESTION — answer from the sources" in registry.help_text()
    assert completions(ClassCompleter([], registry.helps()), "/a") == ["/ask"]
    assert asyncio.run(registry.run("APP", "/ask  why green? ")) is True
    assert heard == [("APP", "why green?")]
    assert asyncio.run(registry.run("APP", "/b")) is False  # False: leave the chat
    assert asyncio.run(registry.run("APP", "/nope")) is None  # not a command of this registry


@pytest.mark.parametrize("name", ["/save", "/q", "save", "/two words", "/"])
def test_a_name_taken_or_not_a_slash_word_is_refused(name: str) -> None:
    with pytest.raises(ValueError):
        COMMANDS.add(SlashCommand(name, "again", lambda app, argument: None))


def test_the_chat_runs_registered_commands_and_says_unknown_ones(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([reply("Hi."), decision("END")]), encoding="utf-8")
    session = tmp_path / "class.json"
    result = CliRunner().invoke(app, ["chat", "--model", f"scripted:{script}", "--session", str(session)],
                                input="/help\n/next\n/bogus\n/exit\nnever read\n")
    assert result.exit_code == 0, result.output
    assert "/whiteboard" in result.stdout and "@id message" in result.stdout  # /help: info goes to stdout
    assert "/next: no lesson in this class; /lesson NAME opens one (maic lesson list)" in result.stderr
    assert "unknown command /bogus; /help lists the commands" in result.stderr
    assert "Hi." not in result.stdout  # /exit left before the last line
