"""``--director`` on ``maic chat`` and ``maic run``: the policy plays, is recorded, and replays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.store.session import load_session
from tests.helpers import decision, reply

runner = CliRunner()

SCENARIO = """id: sky
class:
  agents: [teacher, curious_student, class_clown]
messages:
  - Why is the sky blue?
"""


def script(tmp_path: Path, *replies: object, name: str = "script.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(list(replies)), encoding="utf-8")
    return f"scripted:{path}"


def header(transcript: Path) -> dict:
    return json.loads(transcript.read_text(encoding="utf-8").splitlines()[0])


def test_chat_director_rules_plays_without_director_calls_and_replays(tmp_path: Path) -> None:
    session_file = tmp_path / "class.json"
    model = script(tmp_path, reply("Sunlight scatters."), reply("So sunsets are red?"), reply("Yes: longer path."))
    result = runner.invoke(app, ["chat", "--model", model, "--session", str(session_file), "--agents",
                                 "teacher,curious_student", "--director", "rules"], input="Why is the sky blue?\n")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("Ms. Rivera: ")  # the teacher, then the student; no more
    session = load_session(session_file)
    assert session.config.director == "rules"
    transcript = Path(session.transcript or "")
    assert header(transcript)["config"]["director"] == "rules"
    replayed = runner.invoke(app, ["replay", str(transcript), "--check"])
    assert replayed.exit_code == 0 and "the same" in replayed.stdout, replayed.output


def test_chat_without_director_records_the_models_default(tmp_path: Path) -> None:
    session_file = tmp_path / "class.json"
    model = script(tmp_path, decision("teacher"), reply("Sunlight scatters."), decision("USER"))
    result = runner.invoke(app, ["chat", "--model", model, "--session", str(session_file)], input="Why?\n")
    assert result.exit_code == 0, result.output
    session = load_session(session_file)
    assert session.config.director is None  # not pinned: a later --model keeps its own default
    assert header(Path(session.transcript or ""))["config"]["director"] == "llm"


def test_a_bad_director_flag_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for flag in ("nosuch", "no_such_module_xyz:pick"):
        result = runner.invoke(app, ["chat", "--model", script(tmp_path), "--session", str(tmp_path / "c.json"),
                                     "--director", flag], input="hi\n")
        assert result.exit_code == 2, result.output
        assert "--director" in result.stderr and "Traceback" not in result.output
        assert len(result.stderr.strip().splitlines()) == 1


def test_run_compares_director_policies_side_by_side(tmp_path: Path) -> None:
    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    # One script per run (scripted models are per class): enough replies for either policy.
    model = script(tmp_path, decision("teacher"), reply("Scattering."), decision("USER"))
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", model, "--director", "llm",
                                 "--director", "hybrid", "--out", str(out), "--plain"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert set(report["by_director"]) == {"llm", "hybrid"}
    runs = {r["director"]: r for r in report["runs"]}
    assert runs["llm"]["run_id"].endswith("__llm__r1") and runs["hybrid"]["run_id"].endswith("__hybrid__r1")
    assert header(Path(runs["hybrid"]["transcript"]))["config"]["director"] == "hybrid"
    assert "## By director policy" in (out / "report.md").read_text(encoding="utf-8")
    assert runs["llm"]["speaker_sequence"] == runs["hybrid"]["speaker_sequence"] == [["teacher"]]
    # hybrid: the rules open the round, so one director call fewer than llm
    assert report["by_director"]["llm"]["tokens"]["director"]["calls"] == 2
    assert report["by_director"]["hybrid"]["tokens"]["director"]["calls"] == 1


def test_run_with_one_director_keeps_run_ids_unchanged(tmp_path: Path) -> None:
    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, reply("Scattering."),
                                                                         reply("Shorter waves scatter.")),
                                 "--director", "rules", "--out", str(out), "--plain"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (run,) = report["runs"]
    assert run["director"] == "rules" and run["run_id"].endswith("__r1") and "__rules" not in run["run_id"]
    (speakers,) = run["speaker_sequence"]
    assert len(speakers) == 2 and speakers[0] == "teacher" and run["end_reasons"] == ["cue_user"]
    assert "director" not in report["by_model"][run["model"]]["tokens"]  # rules: no director call at all


def test_a_transcript_with_corrections_replays_and_checks_clean(tmp_path: Path) -> None:
    session_file = tmp_path / "class.json"
    model = script(tmp_path, decision("END"), reply("Sunlight scatters."), decision("principal"),
                   reply("Why blue?"), decision("USER"))
    result = runner.invoke(app, ["chat", "--model", model, "--session", str(session_file)], input="Why?\n")
    assert result.exit_code == 0, result.output
    transcript = Path(load_session(session_file).transcript or "")
    events = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()[1:]]
    rules = [e["event"]["rule"] for e in events if e.get("kind") == "event"
             and e["event"]["type"] == "director_correction"]
    assert rules == ["unanswered", "unknown_agent"]
    shown = runner.invoke(app, ["replay", str(transcript), "--plain"])
    assert shown.exit_code == 0 and "Sunlight scatters." in shown.stdout, shown.output
    checked = runner.invoke(app, ["replay", str(transcript), "--check"])
    assert checked.exit_code == 0 and "the same" in checked.stdout, checked.output


def test_a_resumed_session_that_named_a_hook_says_it_is_not_loaded(capsys: pytest.CaptureFixture[str]) -> None:
    from maic_cli.chat.setup import choose_director, new_session
    from maic_cli.store.config import Settings

    session = new_session(Settings(agents=["teacher"]), None, None)
    session.config.director = "evil_director:pick\x1b]0;title\x07"  # as a file someone sent could hold
    assert choose_director(session, None) is None
    note = capsys.readouterr().err
    assert "used the director evil_director:pick" in note and "\x1b" not in note
    assert session.config.director is None
