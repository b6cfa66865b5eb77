"""``maic prompts show``: the exact messages of the next call, from the engine's own builders."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.calls import agent_call, director_call
from maic_cli.engine.models import DirectorState, ModelSettings, RoundContext, TurnConfig, TurnRequest, UserProfile
from maic_cli.engine.preview import agent_call_messages, director_call_messages
from maic_cli.engine.round import run_round
from maic_cli.engine.turn import generate_turn
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.store.personas import load_registry
from maic_cli.store.prompts import load_prompt_set
from maic_cli.store.session import Session, save_session
from tests.helpers import action, decision, modules_imported_by, reply
from tests.test_startup import forbidden_in

runner = CliRunner()


def show(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["prompts", "show", *args, "--model", "demo"])


def test_agent_prompt_of_a_fresh_default_class() -> None:
    result = show("agent", "teacher")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("=== system ===\nYou are Ms. Rivera")
    assert "No markdown: no **bold**" in result.stdout  # the speech rules
    user = result.stdout.split("=== user ===\n", 1)[1]
    assert user.startswith("Why is the sky blue?")  # the example question, then the per-turn context
    assert "# Whiteboard" in user
    assert result.stderr == "maic: note: the agent's next call for demo, prompt set built-in\n"


def test_small_models_get_the_compact_prompts() -> None:
    result = runner.invoke(app, ["prompts", "show", "agent", "teacher", "--model", "local"])
    assert result.exit_code == 0, result.output
    assert "(the compact prompts for small models)" in result.stderr
    full = show("agent", "teacher")
    assert len(result.stdout) < len(full.stdout) / 2 and "You are Ms. Rivera" in result.stdout


def test_director_prompt_lists_the_default_class_and_the_ask() -> None:
    result = show("director")
    assert result.exit_code == 0, result.output
    system, user = result.stdout.split("=== user ===\n")
    for agent_id in ("teacher", "assistant", "class_clown", "curious_student", "note_taker", "deep_thinker"):
        assert agent_id in system
    assert "Why is the sky blue?" in system
    assert user.strip() == "Who speaks next? Reply with the JSON object only."


def test_json_is_the_raw_messages_list_and_ask_replaces_the_example() -> None:
    result = show("agent", "curious_student", "--json", "--ask", "What is a prime number?")
    assert result.exit_code == 0, result.output
    messages = json.loads(result.stdout)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"].startswith("What is a prime number?")
    assert "Why is the sky blue?" not in result.stdout


def test_the_prompts_folder_is_used(tmp_path: Path) -> None:
    speech = tmp_path / "set" / "snippets" / "speech.md"
    speech.parent.mkdir(parents=True)
    speech.write_text("PIRATE-RULES for {{ learner.name }}.\n", encoding="utf-8")
    result = show("agent", "teacher", "--prompts", str(tmp_path / "set"))
    assert result.exit_code == 0, result.output
    assert "PIRATE-RULES for the learner." in result.stdout and "No markdown" not in result.stdout


def test_a_broken_template_is_one_line_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "set" / "director" / "system.j2"
    broken.parent.mkdir(parents=True)
    broken.write_text("a\nb {% for %}\n", encoding="utf-8")
    result = show("director", "--prompts", str(tmp_path / "set"))
    assert result.exit_code == 2 and result.stderr.startswith(f"maic: error: {broken}:2: ")
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def sample_session(tmp_path: Path) -> Path:
    """A saved class after one round: the learner asked, the teacher answered and drew."""
    registry = load_registry([])
    agents = registry.require(["teacher", "curious_student"])
    config = TurnConfig(agent_ids=[a.id for a in agents], max_turns=4)
    session = Session(config=config, profile=UserProfile(nickname="Zoë", bio="learns optics"), agents=agents,
                      model="demo")
    session.classroom.add_learner_message("Why do rainbows form?")
    llm = ScriptedLLM([decision("teacher"), reply("Light splits by colour.", action("wb_draw_text", content="ROYGBIV")),
                       decision("USER")])
    asyncio.run(run_round(session.classroom, config, llm, registry={a.id: a for a in agents}))
    path = tmp_path / "class.json"
    save_session(session, path)
    return path


def test_session_file_gives_its_class_and_state(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    result = show("agent", "curious_student", "--session", str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("=== system ===\nYou are Mia")
    assert "Zoë" in result.stdout and "learns optics" in result.stdout
    assert "Why do rainbows form?" in result.stdout and "Light splits by colour." in result.stdout
    assert "ROYGBIV (drawn by Ms. Rivera)" in result.stdout  # the board, attributed to who drew it
    assert "Why is the sky blue?" not in result.stdout  # a session is shown as it is
    asked = show("director", "--session", str(path), "--ask", "And double rainbows?")
    assert asked.exit_code == 0 and "And double rainbows?" in asked.stdout


def test_an_unknown_agent_is_one_line_exit_2(tmp_path: Path) -> None:
    result = show("agent", "nobody")
    assert result.exit_code == 2
    assert result.stderr.startswith("maic: error: agent nobody: not in this class (its agents: teacher,")
    assert len(result.stderr.strip().splitlines()) == 1
    in_session = show("agent", "class_clown", "--session", str(sample_session(tmp_path)))
    assert in_session.exit_code == 2 and "teacher, curious_student" in in_session.stderr


@pytest.mark.parametrize(("args", "problem"), [
    (["teacher"], "teacher: show `director` or `agent ID`"),
    (["agent"], "agent: name the agent"),
    (["director", "teacher"], "the director takes no id"),
])
def test_bad_arguments_are_one_line_exit_2(args: list[str], problem: str) -> None:
    result = show(*args)
    assert result.exit_code == 2 and problem in result.stderr


def test_control_sequences_from_a_session_are_not_printed(tmp_path: Path) -> None:
    path = sample_session(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["profile"]["nickname"] = "Eve\x1b]0;pwned\x07\x1b[2J"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = show("agent", "teacher", "--session", str(path))
    assert result.exit_code == 0, result.output
    assert "Eve" in result.stdout and "\x1b" not in result.stdout and "\x07" not in result.stdout
    raw = show("agent", "teacher", "--session", str(path), "--json")
    assert "\x1b" not in raw.stdout and "Eve\\u001b" in raw.stdout


@pytest.mark.parametrize("compact", [False, True], ids=["full", "compact"])
def test_the_preview_is_what_the_turn_really_sends(tmp_path: Path, compact: bool) -> None:
    """No drift: the previewed messages equal the messages generate_turn sends, director and agent."""
    path = sample_session(tmp_path)
    session = Session.model_validate_json(path.read_text(encoding="utf-8"))
    session.classroom.add_learner_message("And double rainbows?")
    agents = {a.id: a for a in session.agents}
    prompts = load_prompt_set(None)
    request = TurnRequest(messages=session.classroom.messages, store_state=session.classroom.store,
                          config=TurnConfig.for_round(session.config, RoundContext(compact_prompts=compact)),
                          director_state=session.classroom.director_state, user_profile=session.profile,
                          model=ModelSettings(model="scripted"))
    expected_director = director_call_messages(request, agents, prompts=prompts)
    expected_agent = agent_call_messages(request, agents["curious_student"], prompts=prompts)
    llm = ScriptedLLM([decision("curious_student"), reply("Two reflections?")])

    async def one_turn() -> None:
        async for _event in generate_turn(request, llm, agents, prompts=prompts):
            pass

    asyncio.run(one_turn())
    assert [call.purpose for call in llm.calls] == ["director", "agent"]
    assert llm.calls[0].messages == expected_director
    assert llm.calls[1].messages == expected_agent
    # The whole calls, not only their messages: one builder serves both (engine/calls.py).
    state = request.director_state or DirectorState()
    assert llm.calls[0] == director_call(request, agents, state, prompts=prompts)
    assert llm.calls[1] == agent_call(request, agents["curious_student"], state, prompts=prompts).request


@pytest.mark.parametrize("argv", [["prompts", "--help"], ["prompts", "show", "--help"], ["prompts", "list", "--help"]],
                         ids=" ".join)
def test_prompts_help_imports_nothing_heavy(argv: list[str]) -> None:
    modules = modules_imported_by(argv)
    assert "maic_cli.cli.prompts_cmd" in modules
    assert forbidden_in(modules) == []


def test_classroom_is_left_as_it_was(tmp_path: Path) -> None:
    """Showing a prompt never changes the session file."""
    path = sample_session(tmp_path)
    before = path.read_bytes()
    assert show("director", "--session", str(path), "--ask", "More?").exit_code == 0
    assert path.read_bytes() == before


def test_a_fresh_discussion_class_of_chosen_agents() -> None:
    result = show("director", "--agents", "teacher,deep_thinker", "--topic", "Is maths discovered or invented?")
    assert result.exit_code == 0, result.output
    system = result.stdout.split("=== user ===")[0]
    assert "Is maths discovered or invented?" in system
    assert "deep_thinker" in system and "class_clown" not in system
    assert "Why is the sky blue?" not in result.stdout  # the discussion's opening: the learner has not spoken
    opening = show("agent", "deep_thinker", "--agents", "teacher,deep_thinker", "--topic", "Is maths invented?")
    assert opening.exit_code == 0 and "Is maths invented?" in opening.stdout


def test_list_names_every_template_and_what_a_folder_overrides(tmp_path: Path) -> None:
    builtin = runner.invoke(app, ["prompts", "list"])
    assert builtin.exit_code == 0, builtin.output
    rows = dict(line.split("\t") for line in builtin.stdout.splitlines())
    assert rows["agent/system.j2"] == "built-in" and rows["snippets/speech.md"] == "built-in"
    assert set(rows.values()) == {"built-in"}
    speech = tmp_path / "set" / "snippets" / "speech.md"
    speech.parent.mkdir(parents=True)
    speech.write_text("Mine.\n", encoding="utf-8")
    result = runner.invoke(app, ["prompts", "list", "--prompts", str(tmp_path / "set")])
    rows = dict(line.split("\t") for line in result.stdout.splitlines())
    assert rows["snippets/speech.md"] == str(speech) and rows["agent/system.j2"] == "built-in"


def test_the_director_preview_says_when_the_policy_rarely_asks_the_model() -> None:
    local = runner.invoke(app, ["prompts", "show", "director", "--model", "local"])
    assert local.exit_code == 0, local.output
    assert "with the rules director the model is asked only where the rules are not sure" in local.stderr
    hosted = show("director")  # the demo model: the llm director, no such note
    assert hosted.exit_code == 0 and "rules director" not in hosted.stderr
