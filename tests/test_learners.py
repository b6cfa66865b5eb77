"""Learner files, the simulated learner's prompt and replies, and the learner seat of a scenario."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from maic_cli.engine.learner import LearnerProfile, SimulatedLearner, history, read_move, system_prompt
from maic_cli.engine.models import Message
from maic_cli.errors import InputError
from maic_cli.evaluation.scenarios import load_scenario
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.store.learners import builtin_learners, find_learner, load_learner, seat_learner

ROOT = Path(__file__).parent.parent


def agent(text: str, name: str = "Ms. Rivera", agent_id: str = "teacher") -> Message:
    message = Message(role="agent", agent_id=agent_id, agent_name=name)
    message.append_text(text)
    return message


def test_the_shipped_learners_are_valid_and_found_by_name() -> None:
    files = sorted((ROOT / "learners").glob("*.yaml"))
    assert len(files) >= 3
    for path in files:
        assert load_learner(path).name
    assert {"fraction_mixup", "dozen_student", "quiet_learner"} <= set(builtin_learners())
    assert find_learner("dozen_student").incorrect_solution is not None


def test_a_bad_learner_file_names_its_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: Ana\nlevel: 5th grade\nbehaviour:\n  gives_up_after: 0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.yaml:4: behaviour\.gives_up_after"):
        load_learner(path)
    path.write_text("name: Ana\nmood: grumpy\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.yaml:2: mood"):
        load_learner(path)


def test_learner_text_is_cleaned_of_terminal_sequences(tmp_path: Path) -> None:
    path = tmp_path / "l.yaml"
    path.write_text('name: "Ana\\x1b[2J"\npersona: "likes \\x1b]0;pwned\\x07 maths"\nmisconceptions: ["a\\x1b[31mb"]\n',
                    encoding="utf-8")
    profile = load_learner(path)
    assert "\x1b" not in profile.name + profile.persona + "".join(profile.misconceptions)
    assert profile.name == "Ana"


def test_the_prompt_holds_the_profile_and_the_class_is_the_other_side() -> None:
    profile = LearnerProfile(name="Steven", level="7th grade", persona="quiet", knows=["a dozen is 12"],
                             misconceptions=["halves add like wholes"], incorrect_solution="24 + 18 = 42\\n 42")
    prompt = system_prompt(profile)
    for needle in ("Steven", "7th grade", "a dozen is 12", "halves add like wholes", "24 + 18 = 42\n 42", "<done>"):
        assert needle in prompt
    shown = history([Message.from_learner("my answer is 42"), agent("Why 18?"), agent("Hm.", "Kai", "assistant")])
    assert shown == [{"role": "user", "content": "(The class begins.)"},
                     {"role": "assistant", "content": "my answer is 42"},
                     {"role": "user", "content": "Ms. Rivera: Why 18?\n\nKai: Hm."}]


def test_a_reply_is_one_clean_bounded_utterance_and_done_ends_it() -> None:
    assert read_move("Steven: Oh, so it is 30? <done>", "Steven").text == "Oh, so it is 30?"
    assert read_move("Student: 30?", "Steven").text == "30?"
    assert read_move("Oh, so it is 30? <DONE>").done
    assert not read_move("Is it 30?").done
    assert read_move("   ").done  # silence: the learner has nothing more to say
    assert "\x1b" not in read_move("hi \x1b[2J there").text
    assert len(read_move("x" * 50_000).text) <= 1_500


@given(st.text(max_size=300))
def test_any_reply_reads_as_a_clean_move(reply: str) -> None:
    move = read_move(reply, "Ana")
    assert "\x1b" not in move.text and len(move.text) <= 1_500
    assert move.done or move.text


def test_the_learner_opens_from_its_file_then_asks_its_model_and_stops_at_its_limit() -> None:
    profile = LearnerProfile(name="Ana", incorrect_solution="6 + 7 = 13\\n 13",
                             behaviour={"gives_up_after": 3})  # type: ignore[arg-type]
    llm = ScriptedLLM(["Is it 42?", "Then 46! <done>", "never asked"])
    learner = SimulatedLearner(profile, llm, turns=10)
    assert learner.turns == 3  # the file's limit is smaller

    async def play() -> list[str]:
        said: list[str] = []
        while learner.may_speak:
            move = await learner.next_move([Message.from_learner(s) for s in said] + [agent("Why?")])
            said.append(move.text)
        return said

    said = asyncio.run(play())
    assert said == ["Here is my solution:\n6 + 7 = 13\n 13", "Is it 42?", "Then 46!"]
    assert len(llm.calls) == 2 and all(call.purpose == "learner" for call in llm.calls)
    assert llm.calls[0].messages[0]["role"] == "system" and "Ana" in llm.calls[0].messages[0]["content"]


def test_a_scenario_seats_a_learner_from_a_file_inline_or_by_name(tmp_path: Path) -> None:
    (tmp_path / "maya.yaml").write_text("name: Maya\nopening: hello\n", encoding="utf-8")
    for simulated, name in (("maya.yaml", "Maya"), ("fraction_mixup", "Maya"), ("{name: Lu, opening: hi}", "Lu")):
        path = tmp_path / "s.yaml"
        path.write_text(f"class: {{agents: [teacher]}}\nlearner: {{simulated: {simulated}, model: scripted:x}}\n",
                        encoding="utf-8")
        scenario = load_scenario(path)
        learner = seat_learner(scenario.learner, path)
        assert learner is not None and learner.name == name
        assert scenario.learner.model == "scripted:x"


@pytest.mark.parametrize(("seat", "problem"), [
    ("{simulated: ../outside.yaml}", r"s\.yaml:2: learner\.simulated"),
    ("{simulated: nobody}", r"s\.yaml: learner\.simulated: nobody: no such learner file"),
    ("{simulated: maya.yaml, turns: 0}", r"s\.yaml:2: learner\.turns"),
    ("{simulated: maya.yaml, mood: x}", r"s\.yaml:2: learner\.mood"),
])
def test_a_bad_learner_seat_is_refused_with_its_field(tmp_path: Path, seat: str, problem: str) -> None:
    (tmp_path / "maya.yaml").write_text("name: Maya\n", encoding="utf-8")
    path = tmp_path / "s.yaml"
    path.write_text(f"class: {{agents: [teacher]}}\nlearner: {seat}\n", encoding="utf-8")
    with pytest.raises(InputError, match=problem):
        seat_learner(load_scenario(path).learner, path)


def test_a_simulated_learner_and_scripted_messages_do_not_mix(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("class: {agents: [teacher]}\nlearner: {simulated: fraction_mixup}\nmessages: [hi]\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match="speaks for itself"):
        load_scenario(path)


def test_a_learner_file_outside_the_scenario_folder_is_refused(tmp_path: Path) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    (tmp_path / "secret.yaml").write_text("name: X\n", encoding="utf-8")
    (inner / "link.yaml").symlink_to(tmp_path / "secret.yaml")
    path = inner / "s.yaml"
    path.write_text("class: {agents: [teacher]}\nlearner: {simulated: link.yaml}\n", encoding="utf-8")
    with pytest.raises(InputError, match="leads outside"):
        seat_learner(load_scenario(path).learner, path)


GOLDEN = Path(__file__).parent / "golden" / "learner"


def test_the_learners_prompt_matches_its_golden_file() -> None:
    """The exact messages a simulated learner's call sends (review the diff, then MAIC_UPDATE_GOLDEN=1)."""
    import os

    learner = SimulatedLearner(find_learner("dozen_student"), ScriptedLLM([]))
    messages = [Message.from_learner("Here is my solution: 24 + 18 = 42"), agent("What is half a dozen?"),
                agent("Think of eggs.", "Kai", "assistant")]
    request = learner.request(messages)
    text = "\n\n".join(f"=== {m['role']} ===\n{m['content']}" for m in request.messages) + "\n"
    path = GOLDEN / "dozen_student.txt"
    if os.environ.get("MAIC_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")
    assert request.purpose == "learner" and request.max_tokens == 300
