"""``turns.csv`` and ``rounds.csv`` (report/report_tables.py): columns, rows, privacy, no formulas."""

from __future__ import annotations

import csv
import stat
from pathlib import Path

import pytest

from maic_cli.evaluation.run_results import load_runs
from maic_cli.report.report_tables import ROUND_COLUMNS, TURN_COLUMNS, safe_cell, write_tables
from tests.test_run import GOOD_ROUND, QA_SCENARIO, run, script, write


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def batch(tmp_path: Path, scenario_text: str = QA_SCENARIO) -> Path:
    scenario = write(tmp_path / "sky.yaml", scenario_text)
    out = tmp_path / "out"
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--repeat", "2",
                 "--out", str(out))
    assert result.exit_code == 0, result.output
    return out


def test_a_batch_writes_one_row_per_round_and_per_agent_turn(tmp_path: Path) -> None:
    out = batch(tmp_path)
    columns, rounds = read_csv(out / "rounds.csv")
    assert columns == ROUND_COLUMNS
    assert len(rounds) == 2  # two repeats of a one-round scenario
    assert [r["repeat"] for r in rounds] == ["1", "2"]
    first = rounds[0]
    assert first["round"] == "1" and first["speakers"] == "teacher curious_student"
    assert first["reason"] == "cue_user" and first["agent_turns"] == "2" and first["actions"] == "1"
    assert first["learner"] == "Why is the sky blue?" and first["cue_user"] == "1"
    assert len(first["turn_latencies"].split()) == 3  # two agent turns and the hand-back

    columns, turns = read_csv(out / "turns.csv")
    assert columns == TURN_COLUMNS
    assert len(turns) == 4  # two agent turns in each of two runs
    assert [(t["repeat"], t["turn"], t["speaker"], t["role"]) for t in turns] == [
        ("1", "1", "teacher", "teacher"), ("1", "2", "curious_student", "student"),
        ("2", "1", "teacher", "teacher"), ("2", "2", "curious_student", "student")]
    assert {t["source"] for t in turns} == {"transcript"}
    assert turns[0]["actions"] == "1" and turns[1]["actions"] == "0" and turns[0]["dropped"] == "0"
    assert all(float(t["latency"]) >= 0 for t in turns)
    assert all(int(t["prompt_tokens"]) > 0 and int(t["completion_tokens"]) > 0 for t in turns)
    assert turns[0]["scenario"] == "sky" and turns[0]["prompts"] == "builtin" and turns[0]["director"]
    for name in ("rounds.csv", "turns.csv"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o600


def test_without_a_transcript_turn_rows_come_from_the_round_summaries(tmp_path: Path) -> None:
    out = batch(tmp_path)
    for transcript in (out / "transcripts").glob("*.jsonl"):
        transcript.unlink()
    write_tables(out, load_runs(out))
    _, turns = read_csv(out / "turns.csv")
    assert [(t["speaker"], t["source"], t["latency"]) for t in turns] == [
        ("teacher", "summary", ""), ("curious_student", "summary", "")] * 2


def test_a_cell_never_opens_a_formula_and_stays_on_one_line() -> None:
    assert safe_cell("=HYPERLINK(\"http://x\")") == "'=HYPERLINK(\"http://x\")"
    assert [safe_cell(text) for text in ("+1", "-2+3", "@SUM(A1)", "\tx")] == ["'+1", "'-2+3", "'@SUM(A1)", "'\tx"]
    assert safe_cell("a\nb\x1b[31mc") == "a bc"
    assert safe_cell(-2) == -2 and safe_cell(True) == 1 and safe_cell(None) == ""


def test_learner_text_that_looks_like_a_formula_is_quoted_in_rounds_csv(tmp_path: Path) -> None:
    out = batch(tmp_path, QA_SCENARIO.replace("- Why is the sky blue?", "- \"=cmd|' /C calc'!A0\""))
    _, rounds = read_csv(out / "rounds.csv")
    assert rounds[0]["learner"] == "'=cmd|' /C calc'!A0"
    raw = (out / "rounds.csv").read_text(encoding="utf-8")
    assert ",=cmd" not in raw and "\"=cmd" not in raw


def test_a_merged_report_reads_the_transcripts_where_the_runs_were_made(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    model = script(tmp_path, *GOOD_ROUND)
    shards = []
    for index in (1, 2):
        shards.append(tmp_path / f"shard{index}")
        result = run(tmp_path, str(scenario), "--model", model, "--repeat", "2", "--shard", f"{index}/2",
                     "--out", str(shards[-1]))
        assert result.exit_code == 0, result.output
    merged = tmp_path / "merged"
    result = run(tmp_path, "--merge", str(shards[0]), "--merge", str(shards[1]), "--out", str(merged))
    assert result.exit_code == 0, result.output
    _, turns = read_csv(merged / "turns.csv")
    assert [(t["repeat"], t["source"]) for t in turns] == [("1", "transcript")] * 2 + [("2", "transcript")] * 2


def test_a_results_file_cannot_point_the_tables_at_another_file(tmp_path: Path) -> None:
    out = batch(tmp_path)
    results = load_runs(out)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "transcripts").mkdir(parents=True)
    for result in results:
        source = out / "transcripts" / f"{result.run_id}.jsonl"
        target = elsewhere / "transcripts" / f"{result.run_id}.jsonl"  # no runs/<id>.json beside it
        target.write_bytes(source.read_bytes())
        source.unlink()
        result.transcript = str(target)
    results.append(results[0].model_copy(update={"run_id": "../escape", "transcript": str(target)}))
    write_tables(out, results)
    _, turns = read_csv(out / "turns.csv")
    assert {t["source"] for t in turns} == {"summary"} and len(turns) == 6


def test_a_reply_dropped_whole_is_no_turn_in_turns_csv_or_for_the_judge(tmp_path: Path) -> None:
    from maic_cli.evaluation.judge_rounds import rounds_to_judge
    from maic_cli.store.transcript import read_transcript
    from tests.helpers import decision

    dropped_first = (decision("teacher"), "[]", *GOOD_ROUND)  # an empty reply, then the round as usual
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *dropped_first), "--out", str(out))
    assert result.exit_code == 0, result.output
    _, turns = read_csv(out / "turns.csv")
    assert [(t["turn"], t["speaker"]) for t in turns] == [("1", "teacher"), ("2", "curious_student")]
    assert all(t["empty"] in ("0", "False", "false") for t in turns)
    [judged] = rounds_to_judge(read_transcript(next((out / "transcripts").iterdir())))
    assert [t.text for t in judged.turns] == ["Scattering.", "Why blue?"]


@pytest.mark.parametrize("text", [" =1+1", "  +cmd", "\u3000=x", "\uff1dHYPERLINK(\"x\")", "\uff0b1", "\uff0d1",
                                  "\uff20SUM(A1)", "\u00a0@x", "=1", "-1+1"])
def test_a_csv_cell_that_a_spreadsheet_could_read_as_a_formula_is_quoted(text: str) -> None:
    cell = safe_cell(text)
    assert isinstance(cell, str) and cell.startswith("'")


@pytest.mark.parametrize("text", ["plain", "a = b", "1 + 1", "ok-then", "－ is a dash later: no"[2:]])
def test_ordinary_cells_are_kept(text: str) -> None:
    assert safe_cell(text) == text


def test_a_batch_keeps_its_turn_rows_in_memory_and_a_rebuild_from_the_files_gives_the_same_tables(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import maic_cli.report.report_tables as tables

    def no_reading(path: Path) -> None:
        raise AssertionError(f"the batch read {path} back")

    with monkeypatch.context() as patch:
        patch.setattr(tables, "read_transcript", no_reading)
        out = batch(tmp_path)
    _, turns = read_csv(out / "turns.csv")
    assert len(turns) == 4 and {t["source"] for t in turns} == {"transcript"}
    written = {name: (out / name).read_bytes() for name in ("turns.csv", "rounds.csv")}
    write_tables(out, load_runs(out))  # as `maic report DIR` does: every transcript read from its file
    assert {name: (out / name).read_bytes() for name in written} == written


def test_a_report_does_not_depend_on_the_order_the_runs_finished_in(tmp_path: Path) -> None:
    from maic_cli.report.batch_summary import save_reports

    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--repeat", "6",
                 "--out", str(out))
    assert result.exit_code == 0, result.output
    runs = load_runs(out)
    for number, run_result in enumerate(runs):  # durations far apart: a resample drawn by position shows it
        run_result.duration = 1.0 + number**3
    written = save_reports(out, runs, {}).to_json()
    assert save_reports(out, [runs[i] for i in (3, 0, 5, 1, 4, 2)], {}).to_json() == written
    assert '"run_duration_s"' in written
