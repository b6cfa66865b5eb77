"""A simulated learner says plain text: a model that answers its prompt as an agent would (the demo's JSON
array of items, any JSON object or array) is reduced to the speech in it, or refused — never said raw; and
a tutoring file with a long name gives every task a scenario id that fits (bounded, unique)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.learner import MAX_REPLY_CHARS, json_speech, read_move
from maic_cli.evaluation.scenarios import MAX_ID
from maic_cli.evaluation.tutoring_tasks import task_id
from maic_cli.llm.port import LLMError
from maic_cli.store.transcript import LearnerLine, read_transcript

runner = CliRunner()
TASK = {"qid": "muffins", "question": "A baker puts 6 muffins in each of 7 boxes and has 4 left. How many?",
        "ground_truth": "6 x 7 = 42.\\n42 + 4 = 46.\\n 46", "student_incorrect_solution": "6 + 7 = 13.\\n 17",
        "student_profile": "Nora is a 5th grade student."}


def test_maic_chat_watch_with_the_demo_model_says_plain_text(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    result = runner.invoke(app, ["chat", "--watch", "fraction_mixup", "--model", "demo", "--plain",
                                 "--transcript", str(transcript), "-s", str(tmp_path / "s.json")], input="")
    assert result.exit_code == 0, result.output
    lines = [e.text for e in read_transcript(transcript).entries if isinstance(e, LearnerLine)]
    assert len(lines) >= 2
    for text in lines:
        assert '"type"' not in text and not text.lstrip().startswith(("[", "{")), text
    assert '[{"type"' not in result.output


@pytest.mark.parametrize(("reply", "said"), [
    ('[{"type": "text", "content": "Is it 5/6?"}, {"type": "action", "name": "wb_open", "params": {}}]',
     "Is it 5/6?"),
    ('```json\n[{"type": "text", "content": "So "}, {"type": "text", "content": "sixths?"}]\n```', "So sixths?"),
    ('{"text": "I see now. <done>"}', "I see now."),
    ('{"speech": "Why sixths?"}', "Why sixths?"),
    ('"Just a JSON string."', "Just a JSON string."),
    ('["one", "two"]', "one two"),
    ('Sure: [{"type": "text", "content": "Is it 5/6?"}]', "Is it 5/6?"),
    ('[{"type": "text", "content": "cut off here', "cut off here"),
    ("[laughs] I think it is 2/5.", "[laughs] I think it is 2/5."),  # plain text that starts with a bracket
    ("{1/2} plus {1/3}?", "{1/2} plus {1/3}?"),
    ("Maya: I added them.", "I added them."),
])
def test_a_json_reply_is_reduced_to_its_speech(reply: str, said: str) -> None:
    assert read_move(reply, "Maya").text == said


@pytest.mark.parametrize("reply", ['[{"type": "action", "name": "wb_open", "params": {}}]', "[]", "{}",
                                   '{"next_agent": "USER"}', '[[["deep"]]]', "[" * 5000 + "]" * 5000,
                                   '{"broken": '])
def test_a_json_reply_with_nothing_to_say_is_refused(reply: str) -> None:
    with pytest.raises(LLMError, match="JSON that holds nothing to say"):
        read_move(reply, "Maya")


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                max_size=4), max_leaves=20))
def test_no_json_reply_is_said_raw(value: object) -> None:
    reply = json.dumps(value)[:MAX_REPLY_CHARS]
    if not reply.startswith(("[", "{")):
        return
    try:
        move = read_move(reply)
    except LLMError:
        return
    assert move.text != reply.strip() or json_speech(reply) == reply.strip()
    assert not (move.text.startswith(("[{", '{"')) and move.text == reply)


def test_a_long_tutoring_file_name_gives_ids_that_fit(tmp_path: Path) -> None:
    stem = "mathdial-" + "very-long-name-" * 14  # a 219-character stem
    tasks = tmp_path / f"{stem}.jsonl"
    long_qid = "q" * 64
    tasks.write_text("".join(json.dumps({**TASK, "qid": qid}) + "\n" for qid in ("muffins", long_qid)),
                     encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(tasks), "-m", "demo", "-o", str(out), "--plain", "--turns", "1"])
    assert result.exit_code in (0, 1) and "unexpected" not in result.output, result.output
    runs = sorted(p.name for p in (out / "runs").glob("*.json"))
    assert len(runs) == 2, result.output
    ids = {task_id(stem, "muffins"), task_id(stem, long_qid)}
    assert all(len(i) <= MAX_ID for i in ids) and len(ids) == 2
    assert task_id(stem, "muffins") != task_id(stem[:-1] + "x", "muffins")  # alike names, two ids
    assert task_id("short", "q1") == "short-q1"  # a name that fits keeps the id it always had


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=255), st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", fullmatch=True))
def test_every_task_id_is_plain_and_bounded(stem: str, qid: str) -> None:
    made = task_id(stem, qid)
    assert 1 <= len(made) <= MAX_ID and made.endswith(qid)
    assert made[0].isascii() and made[0].isalnum()
    assert all(c.isascii() and (c.isalnum() or c in "_.-") for c in made)
