"""Learning records: xAPI statements from a recorded class (a lesson with a quiz), checked against
Ralph's pydantic xAPI models, written by ``maic replay --export``, ``maic learner export`` and
``maic run --xapi``, and sent to a real Ralph LRS on 127.0.0.1 (then read back)."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.events import (
    AgentStartEvent,
    LessonEvent,
    QuizAnswerEvent,
    QuizScoreEvent,
    SceneEvent,
    TextDeltaEvent,
)
from maic_cli.engine.session_record import Happening
from maic_cli.engine.xapi import VERBS, ClassKey, statements
from maic_cli.store.session import load_session
from maic_cli.store.transcript import read_transcript
from maic_cli.store.xapi_export import transcript_statements
from tests.helpers import decision, reply
from tests.ralph_lrs import RalphLRS, ralph_venv, start_ralph, stop_ralph, validate

runner = CliRunner()
LESSON = Path(__file__).parent.parent / "lessons" / "photosynthesis.yaml"
SCENARIO = Path(__file__).parent.parent / "scenarios"


@pytest.fixture(scope="module")
def venv() -> Path:
    return ralph_venv()


@pytest.fixture(scope="module")
def lrs(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RalphLRS]:
    store = start_ralph(venv, tmp_path_factory.mktemp("ralph"))
    try:
        yield store
    finally:
        stop_ralph(store)


def lesson_class(tmp_path: Path, *extra: str) -> Path:
    """A whole lesson played through ``maic chat`` by Ada: a question, the slides, a discussion, a
    quiz (right, wrong, partly right); returns its transcript."""
    replies = [decision("teacher"), reply("Mostly from the air, as carbon dioxide."), decision("END"),
               reply("What would a plant in a dark cupboard look like?"), decision("END"),
               '{"points": 2, "comment": "Good: energy. Say what the energy makes."}']
    (tmp_path / "script.json").write_text(json.dumps(replies), encoding="utf-8")
    stdin = "\n".join(["Where does the mass come from?", "", "", "", "", "3", "a, b",
                       "Light gives the plant energy.", "/quit"]) + "\n"
    result = runner.invoke(app, ["chat", "--model", f"scripted:{tmp_path / 'script.json'}", "--session",
                                 str(tmp_path / "class.json"), "--name", "Ada", "--lesson", str(LESSON), *extra],
                           input=stdin)
    assert result.exit_code == 0, result.output
    return Path(load_session(tmp_path / "class.json").transcript or "")


def verbs(found: list[dict[str, Any]]) -> list[str]:
    return [s["verb"]["display"]["en-US"] for s in found]


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_lesson_with_a_quiz_becomes_the_statements_of_what_happened(tmp_path: Path, venv: Path) -> None:
    transcript = lesson_class(tmp_path)
    target = tmp_path / "ada.xapi.jsonl"
    result = runner.invoke(app, ["replay", str(transcript), "--export", str(target)])
    assert result.exit_code == 0 and "Wrote 12 xAPI statements" in result.stdout, result.output
    found = read_lines(target)
    assert Counter(verbs(found)) == {"attempted": 1, "asked": 1, "experienced": 4, "joined": 1, "answered": 3,
                                     "scored": 1, "completed": 1}
    assert verbs(found)[0] == "attempted" and verbs(found)[-1] == "completed"
    assert validate(venv, found, tmp_path) == []  # every statement, against Ralph's xAPI models
    assert {s["actor"]["account"]["name"] for s in found} == {"Ada"}
    assert len({s["id"] for s in found}) == len(found)
    assert len({s["context"]["registration"] for s in found}) == 1
    asked = next(s for s in found if s["verb"]["id"] == VERBS["asked"])
    assert asked["result"]["response"] == "Where does the mass come from?"

    answers = [s for s in found if s["verb"]["id"] == VERBS["answered"]]
    first, second, third = answers
    assert first["object"]["definition"]["type"] == "http://adlnet.gov/expapi/activities/cmi.interaction"
    assert first["object"]["definition"]["interactionType"] == "choice"
    assert first["object"]["definition"]["correctResponsesPattern"] == ["C"]
    assert first["result"] == {"response": "C", "success": True,
                               "score": {"raw": 2.0, "min": 0, "max": 2, "scaled": 1.0}}
    assert second["object"]["definition"]["correctResponsesPattern"] == ["A[,]C"]
    assert second["result"]["response"] == "A[,]B" and second["result"]["success"] is False
    assert third["object"]["definition"]["interactionType"] == "long-fill-in"
    assert third["result"]["response"] == "Light gives the plant energy."
    assert third["result"]["score"]["raw"] == 2.0 and third["result"]["score"]["max"] == 3
    scored = next(s for s in found if s["verb"]["id"] == VERBS["scored"])
    assert scored["result"]["score"] == {"raw": 4.0, "min": 0, "max": 7, "scaled": 0.5714}
    completed = found[-1]
    assert completed["result"] == {"completion": True, "score": {"raw": 4.0, "min": 0, "max": 7, "scaled": 0.5714}}
    lesson_id = found[0]["object"]["id"]
    assert all(s["context"]["contextActivities"]["parent"][0]["id"] == lesson_id
               for s in found if s["verb"]["id"] in (VERBS["answered"], VERBS["experienced"]))

    again = tmp_path / "again.xapi.jsonl"
    assert runner.invoke(app, ["replay", str(transcript), "--export", str(again)]).exit_code == 0
    assert read_lines(again) == found  # the same class, the same statements and ids

    exported = tmp_path / "learner.jsonl"
    result = runner.invoke(app, ["learner", "export", "ada", "--xapi", str(exported)])
    assert result.exit_code == 0, result.output
    assert read_lines(exported) == found


def test_the_statements_reach_a_real_lrs_once_however_often_they_are_sent(
        tmp_path: Path, lrs: RalphLRS, monkeypatch: pytest.MonkeyPatch) -> None:
    before = {s["id"] for s in lrs.statements()}
    monkeypatch.setenv("MAIC_LRS_USER", "maic")
    monkeypatch.setenv("MAIC_LRS_PASSWORD", "lrs-test-secret")
    transcript = lesson_class(tmp_path, "--lrs", lrs.url)  # sent when the class ends
    expected = transcript_statements(read_transcript(transcript))
    assert len({s["id"] for s in lrs.statements()} - before) == len(expected) == 12
    first = runner.invoke(app, ["replay", str(transcript), "--lrs", lrs.url])
    assert first.exit_code == 0 and f"Sent {len(expected)} xAPI statements" in first.stdout, first.output
    second = runner.invoke(app, ["learner", "export", "Ada", "--lrs", lrs.url + "/statements/"])
    assert second.exit_code == 0, second.output
    stored = {s["id"]: s for s in lrs.statements() if s["id"] not in before}
    assert sorted(stored) == sorted(s["id"] for s in expected)  # each once, after two pushes
    for statement in expected:
        back = stored[statement["id"]]
        assert back["verb"] == statement["verb"] and back["object"]["id"] == statement["object"]["id"]
        assert back.get("result") == statement.get("result") and back["actor"] == statement["actor"]

    monkeypatch.setenv("MAIC_LRS_PASSWORD", "wrong-password-123")
    refused = runner.invoke(app, ["replay", str(transcript), "--lrs", lrs.url])
    assert refused.exit_code == 1 and refused.stderr.count("\n") == 1
    assert "refused the statements: 401" in refused.stderr and "wrong-password-123" not in refused.stderr


def test_credentials_in_the_url_reach_a_real_lrs_and_are_never_shown(
        tmp_path: Path, lrs: RalphLRS, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--lrs http://user:password@host/…``: taken out of the URL, sent as basic auth, shown nowhere."""
    for name in ("MAIC_LRS_TOKEN", "MAIC_LRS_USER", "MAIC_LRS_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    transcript = lesson_class(tmp_path)
    before = {s["id"] for s in lrs.statements()}
    url = lrs.url.replace("http://", "http://maic:lrs-test-secret@")
    sent = runner.invoke(app, ["replay", str(transcript), "--lrs", url])
    said = sent.stdout + sent.stderr
    assert sent.exit_code == 0 and "Sent 12 xAPI statements to http://127.0.0.1:" in said, said
    assert "lrs-test-secret" not in said and "maic:" not in said.replace("maic: ", "")
    assert len({s["id"] for s in lrs.statements()} - before) <= 12  # stored (some may be there from before)
    assert {s["id"] for s in transcript_statements(read_transcript(transcript))} <= {s["id"] for s in lrs.statements()}
    wrong = runner.invoke(app, ["replay", str(transcript), "--lrs", url.replace("lrs-test-secret", "pw")])
    assert wrong.exit_code == 1 and "401" in wrong.stderr and ":pw@" not in wrong.stderr + wrong.stdout


def test_a_changed_statement_with_a_stored_id_is_a_conflict_not_a_second_copy(
        tmp_path: Path, lrs: RalphLRS, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from maic_cli.store.lrs import push

    key = ClassKey(learner="Bo", key="conflict-test")
    found = statements(key, [Happening(at=1_800_000_000.0, learner=f"question {n}") for n in range(5)])
    env = {"MAIC_LRS_USER": "maic", "MAIC_LRS_PASSWORD": "lrs-test-secret"}
    assert asyncio.run(push(lrs.url, found[:2], env=env)).sent == 2
    changed = [dict(found[0], result={"response": "edited"}), *found[1:]]
    result = asyncio.run(push(lrs.url, changed, env=env, batch=10))
    assert (result.sent, result.conflicts) == (4, 1)
    ids = [s["id"] for s in lrs.statements()]
    assert all(ids.count(s["id"]) == 1 for s in found)


def test_run_writes_each_runs_records_and_sends_them(tmp_path: Path, venv: Path, lrs: RalphLRS,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = next(SCENARIO.glob("*.yaml"))
    out = tmp_path / "runs"
    refused = runner.invoke(app, ["run", str(scenario), "--model", "demo", "--out", str(out), "--lrs", "ftp://x"])
    assert refused.exit_code == 2 and "--lrs ftp://x" in refused.stderr and not out.exists()
    monkeypatch.setenv("MAIC_LRS_TOKEN", "")
    monkeypatch.setenv("MAIC_LRS_USER", "maic")
    monkeypatch.setenv("MAIC_LRS_PASSWORD", "lrs-test-secret")
    result = runner.invoke(app, ["run", str(scenario), "--model", "demo", "--out", str(out), "--xapi", "--plain",
                                 "--repeat", "2", "--lrs", lrs.url])
    assert result.exit_code in (0, 1) and "xAPI statements to" in result.stdout, result.output
    files = sorted((out / "xapi").glob("*.xapi.jsonl"))
    assert files and all(f.name.removesuffix(".xapi.jsonl") + ".jsonl" in
                         {t.name for t in (out / "transcripts").iterdir()} for f in files)
    found = [s for f in files for s in read_lines(f)]
    assert len(files) == 2 and found and "asked" in verbs(found)
    assert validate(venv, found, tmp_path) == []
    assert {s["id"] for s in found} <= {s["id"] for s in lrs.statements()}


def test_random_classes_give_valid_distinct_bounded_statements(tmp_path: Path, venv: Path) -> None:
    """Fuzz: random happenings (hostile text, repeated and out-of-order events) → statements that Ralph
    accepts, with distinct ids, no control characters and bounded text."""
    chooser = random.Random(22)
    alphabet = ["a", "é", "\x1b[31m", "\u202e", "\n", '"', "{", "😀", " ", "\x00", "/"]

    def text(size: int) -> str:
        return "".join(chooser.choice(alphabet) for _ in range(chooser.randint(0, size)))

    everything: list[dict[str, Any]] = []
    for number in range(60):
        items: list[Happening] = []
        for moment in range(chooser.randint(0, 25)):
            at = 1_700_000_000 + moment * 1.5
            pick = chooser.randint(0, 6)
            if pick == 0:
                items.append(Happening(at=at, learner=text(3000)))
            elif pick == 1:
                items.append(Happening(at=at, event=LessonEvent(title=text(50) or "t", scenes=chooser.randint(0, 4))))
            elif pick == 2:
                items.append(Happening(at=at, event=SceneEvent(index=chooser.randint(0, 4), scene_id=text(8) or "s",
                                                               kind=chooser.choice(["slide", "quiz", "discussion"]),
                                                               title=text(40))))
            elif pick == 3:
                options = [text(30) for _ in range(chooser.choice([0, 2, 4, 30]))]
                items.append(Happening(at=at, event=QuizAnswerEvent(
                    scene_id=text(8) or "q", question_id=text(8) or "x", question=text(200), options=options,
                    answer=text(100), chosen=chooser.sample(["A", "b", "ZZ", "\x1b", " c "], chooser.randint(0, 3)),
                    key=chooser.sample(["A", "B", "Q", "é", ""], chooser.randint(0, 2)), points=chooser.random() * 5,
                    max_points=chooser.randint(1, 4), correct=chooser.random() < 0.5,
                    graded_by=chooser.choice(["key", "model", "none"]))))
            elif pick == 4:
                score = QuizScoreEvent(scene_id=text(8) or "q", points=chooser.random() * 9,
                                       max_points=chooser.randint(0, 9))
                items.append(Happening(at=at, event=score))
            else:
                items.append(Happening(at=at, event=AgentStartEvent(message_id="m", agent_id="t", agent_name="T",
                                                                    avatar="", color="")))
                items.append(Happening(at=at, event=TextDeltaEvent(message_id="m", content=text(100))))
        key = ClassKey(learner=text(80) or "L", key=f"fuzz-{number}", topic=chooser.choice([None, text(60) or "x"]))
        found = statements(key, items, {"t": "teacher"})
        assert len({s["id"] for s in found}) == len(found)
        assert statements(key, items, {"t": "teacher"}) == found  # deterministic
        for statement in found:
            dumped = json.dumps(statement, ensure_ascii=False)
            assert "\x1b" not in dumped and "\u202e" not in dumped and "\\u0000" not in dumped
            assert len(dumped) < 12_000
        everything.extend(found)
    assert everything
    assert validate(venv, everything, tmp_path) == []
