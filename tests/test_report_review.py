"""Review fixes of the judge and the reports (issue 14 review): crafted results files, provider errors,
Ctrl-C while judging, transcripts that are not the run's, chart labels, the judge's reply reading."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.batch_report import BatchReport, RunRow
from maic_cli.store.run_results import RunResult
from tests.test_judge import verdict
from tests.test_run import GOOD_ROUND, QA_SCENARIO, run, script, write

runner = CliRunner()


def batch(tmp_path: Path, repeat: int = 1) -> Path:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "batch" / "out"
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--repeat", str(repeat),
                 "--out", str(out))
    assert result.exit_code == 0, result.output
    return out


def edit_run(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**data, **changes}), encoding="utf-8")


# -- 1. a results file never decides where maic writes ------------------------------------------------------
def test_a_run_id_that_is_not_its_file_name_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    out = batch(tmp_path)
    run_file = next((out / "runs").iterdir())
    edit_run(run_file, run_id="../../pwned", judge=None)
    judge = script(tmp_path, verdict(True, True), name="judge.json")
    result = runner.invoke(app, ["report", str(out), "--judge", judge])
    assert result.exit_code == 2 and run_file.name in result.stderr and "run_id" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "pwned.json").exists() and not list(tmp_path.rglob("pwned*"))


def test_a_run_id_matching_a_crafted_file_name_is_still_refused(tmp_path: Path) -> None:
    out = batch(tmp_path)
    run_file = next((out / "runs").iterdir())
    crafted = out / "runs" / "..json"  # stem "." : a run id that is not a plain name
    crafted.write_text(run_file.read_text(encoding="utf-8"), encoding="utf-8")
    edit_run(crafted, run_id=".")
    result = runner.invoke(app, ["report", str(out)])
    assert result.exit_code == 2 and "..json" in result.stderr


def test_save_run_refuses_a_target_outside_runs(tmp_path: Path) -> None:
    import pytest

    from maic_cli.errors import InputError
    from maic_cli.store.run_results import RunResult, save_run

    result = RunResult(run_id="../escape", scenario="s", scenario_path="s.yaml", model="m", repeat=1,
                       status="complete")
    with pytest.raises(InputError, match="not a plain name"):
        save_run(tmp_path / "out", result)
    assert not (tmp_path / "escape.json").exists()


# -- 2. rounds a failing judge call left are judged again ---------------------------------------------------
def test_a_round_left_by_a_provider_error_is_judged_again_without_rejudge(tmp_path: Path) -> None:
    out = batch(tmp_path, repeat=2)
    failing = script(tmp_path, *[{"error": "server_error"}] * 4, name="judge.json")
    first = runner.invoke(app, ["report", str(out), "--judge", failing])
    assert first.exit_code == 0, first.output
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in (out / "runs").iterdir()]
    assert all(r["judge"]["rounds"][0]["provider_error"] for r in runs)
    script(tmp_path, *[verdict(True, True)] * 2, name="judge.json")  # the provider is back
    second = runner.invoke(app, ["report", str(out), "--judge", failing])
    assert second.exit_code == 0, second.output
    assert "Judging 2 runs" in second.stderr
    judge = json.loads((out / "report.json").read_text(encoding="utf-8"))["overall"]["judge"]
    assert judge["turns_judged"] == 4 and judge["turns_missing"] == 0


def test_an_unusable_reply_is_not_a_provider_error_and_is_kept() -> None:
    import asyncio

    from maic_cli.engine.judge import judge_round
    from maic_cli.engine.prompt_set import PromptSet
    from maic_cli.llm.scripted import ScriptedLLM, ScriptedReply
    from tests.test_judge import ROUND

    garbage = asyncio.run(judge_round(ScriptedLLM(["no idea", "still none"]), PromptSet.builtin(), ROUND))
    assert garbage.status == "missing" and not garbage.provider_error
    outage = asyncio.run(judge_round(ScriptedLLM([ScriptedReply(error="server_error"), "no idea"]),
                                     PromptSet.builtin(), ROUND))
    assert outage.status == "missing" and outage.provider_error


# -- 3. Ctrl-C while the judge scores keeps the class --------------------------------------------------------
def test_ctrl_c_while_the_judge_scores_keeps_the_finished_class(tmp_path: Path, monkeypatch) -> None:
    import asyncio

    from maic_cli.cli import judging

    async def cancelled(*_args: object, **_kwargs: object) -> None:
        raise asyncio.CancelledError

    monkeypatch.setattr(judging, "judge_run", cancelled)
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                 "--judge", script(tmp_path, verdict(True, True), name="judge.json"))
    saved = [json.loads(p.read_text(encoding="utf-8")) for p in (out / "runs").iterdir()]
    assert [(r["status"], r["judge"]) for r in saved] == [("complete", None)], result.output
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["overall"]["runs"] == 1


# -- 12. error runs are not judged; Ctrl-C while judging a batch; the report line -----------------------------
def test_a_run_whose_model_failed_is_not_judged_and_the_user_is_told(tmp_path: Path) -> None:
    out = batch(tmp_path, repeat=2)
    failed = sorted((out / "runs").iterdir())[0]
    edit_run(failed, status="error", error="server_error")
    result = runner.invoke(app, ["report", str(out), "--judge", script(tmp_path, verdict(True, True),
                                                                          name="judge.json")])
    assert result.exit_code == 0, result.output
    assert "Not judged: 1 runs that ended in an error" in result.stderr and "Judging 1 runs" in result.stderr
    assert json.loads(failed.read_text(encoding="utf-8"))["judge"] is None


def test_ctrl_c_while_judging_a_batch_says_what_was_saved_and_that_reports_were_not_rebuilt(
        tmp_path: Path, monkeypatch) -> None:
    from maic_cli.cli import judging

    out = batch(tmp_path)
    before = (out / "report.json").read_text(encoding="utf-8")

    async def interrupted(*_args: object, **_kwargs: object) -> tuple[int, int]:
        raise KeyboardInterrupt

    monkeypatch.setattr(judging, "judge_folder", interrupted)
    result = runner.invoke(app, ["report", str(out), "--judge", script(tmp_path, verdict(True, True),
                                                                          name="judge.json")])
    assert result.exit_code == 130
    assert "0 of 1 runs judged and saved; the reports were not rebuilt" in result.stderr
    assert (out / "report.json").read_text(encoding="utf-8") == before


def test_maic_run_names_report_html(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(tmp_path / "o"))
    assert f"Report: {tmp_path / 'o' / 'report.html'}" in result.stderr


# -- 4. a transcript is read only when it is the run's --------------------------------------------------------
def test_a_symlinked_transcript_is_not_read(tmp_path: Path) -> None:
    from maic_cli.store.report_tables import transcript_path
    from maic_cli.store.reports import load_runs

    out = batch(tmp_path)
    transcript = next((out / "transcripts").iterdir())
    outside = tmp_path / "elsewhere.jsonl"
    transcript.rename(outside)
    transcript.symlink_to(outside)
    assert transcript_path(out, load_runs(out)[0]) is None


def test_a_transcript_of_another_scenario_is_neither_judged_nor_tabled(tmp_path: Path) -> None:
    import csv

    out = batch(tmp_path)
    transcript = next((out / "transcripts").iterdir())
    head, *body = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text(json.dumps({**json.loads(head), "scenario": "other"}) + "\n" + "".join(body),
                          encoding="utf-8")
    result = runner.invoke(app, ["report", str(out), "--judge", script(tmp_path, verdict(True, True),
                                                                          name="judge.json")])
    assert result.exit_code == 0, result.output
    saved = json.loads(next((out / "runs").iterdir()).read_text(encoding="utf-8"))
    assert "not this run's" in saved["judge"]["error"] and saved["judge"]["calls"] == []
    with (out / "turns.csv").open(encoding="utf-8", newline="") as handle:
        assert {row["source"] for row in csv.DictReader(handle)} == {"summary"}


def test_turns_csv_holds_only_the_rounds_the_run_reports(tmp_path: Path) -> None:
    import csv

    out = batch(tmp_path)
    transcript = next((out / "transcripts").iterdir())
    head, *body = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text(head + "".join(body) * 5, encoding="utf-8")  # five rounds recorded, one reported
    assert runner.invoke(app, ["report", str(out)]).exit_code == 0
    with (out / "turns.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and {row["round"] for row in rows} == {"1"}


# -- 8. one redactor per table --------------------------------------------------------------------------------
def test_a_table_looks_the_keys_up_once(monkeypatch) -> None:
    from maic_cli.store import report_tables

    made: list[int] = []
    real = report_tables.redactor

    def counting() -> object:
        made.append(1)
        return real()

    monkeypatch.setattr(report_tables, "redactor", counting)
    text = report_tables.to_csv(["a", "b"], [{"a": "x", "b": "y"}] * 50)
    assert text.count("x,y") == 50 and len(made) == 1


# -- 5. chart labels are never shared ---------------------------------------------------------------------------
def run_row(model: str, speakers: list[list[str]] | None = None) -> RunRow:
    """A run of a report, as the charts read it."""
    return RunRow(run_id="r", scenario="sky", model=model, prompts="builtin", director="llm", repeat=1,
                  status="complete", passed=True, speaker_sequence=speakers or [])


def test_two_models_sharing_a_file_name_get_their_own_chart_groups() -> None:
    from maic_cli.ui.report_data import speaker_counts

    runs = [run_row("scripted:/a/brisk.json", [["teacher"]]),
            run_row("scripted:/b/brisk.json", [["student", "student"]])]
    counts = speaker_counts(BatchReport(runs=runs))
    assert len(counts) == 2 and sorted(sum(c.values()) for c in counts.values()) == [1, 2]


def test_keys_sharing_their_last_39_characters_keep_separate_labels() -> None:
    from maic_cli.ui.report_data import display_names

    tail = "x" * 45
    names = display_names([f"a/{tail}", f"b/{tail}", "c"])
    assert len(set(names.values())) == 3 and names["c"] == "c"
    long_a, long_b = f"p:/a{tail}/m.json", f"p:/b{tail}/m.json"  # same short label, same last 39 characters
    names = display_names([long_a, long_b, "m.json"])
    assert len(set(names.values())) == 3 and names[long_b].endswith(" (2)")
    assert len(set(display_names(["p:/1/m.json", "p:/2/m.json", "m.json (2)"]).values())) == 3


def test_latency_groups_of_models_sharing_a_file_name_are_not_merged() -> None:
    from types import SimpleNamespace

    from maic_cli.ui.report_data import turn_latencies

    def result(model: str, latency: float) -> SimpleNamespace:
        return SimpleNamespace(model=model, prompts="builtin", director="llm",
                               rounds=[SimpleNamespace(turn_latencies=[latency])])

    report = BatchReport(runs=[run_row("scripted:/a/m.json"), run_row("scripted:/b/m.json")])
    samples = turn_latencies(report, [result("scripted:/a/m.json", 1.0), result("scripted:/b/m.json", 2.0)])
    assert sorted(samples.values()) == [[1.0], [2.0]]


# -- 6. the judge's reply: a brace in prose, a bare array of turns ---------------------------------------------
def test_a_valid_verdict_after_a_brace_in_prose_is_read_without_repair() -> None:
    from maic_cli.engine.judge import parse_verdict
    from tests.test_judge import ROUND

    reply = "Using the format {turn, reason}: " + verdict(True, False)
    result = parse_verdict(reply, ROUND)
    assert result.status == "ok" and not result.repaired and [t.new for t in result.turns] == [True, False]


def test_a_bare_array_of_turns_is_read_as_the_turns() -> None:
    from maic_cli.engine.judge import parse_verdict
    from tests.test_judge import ROUND

    turns = json.loads(verdict(True, True))["turns"]
    result = parse_verdict("Here: " + json.dumps(turns), ROUND)
    assert all(t.usable for t in result.turns) and result.answered is None and result.status == "partial"


# -- 9. a cut-off call is counted ------------------------------------------------------------------------------
def test_a_judge_reply_cut_off_at_its_limit_has_its_tokens_estimated() -> None:
    import asyncio

    from maic_cli.engine.judge import MAX_REPLY_CHARS, judge_round
    from maic_cli.engine.prompt_set import PromptSet
    from maic_cli.llm.recording import CallRecord, RecordingLLM
    from maic_cli.llm.scripted import ScriptedLLM
    from tests.test_judge import ROUND

    records: list[CallRecord] = []
    endless = "x" * (MAX_REPLY_CHARS * 2)
    llm = RecordingLLM(ScriptedLLM([endless, endless]), records.append)
    asyncio.run(judge_round(llm, PromptSet.builtin(), ROUND))
    assert [r.error_kind for r in records] == ["cancelled", "cancelled"]
    assert all(r.usage["prompt_tokens"] > 0 and r.usage["completion_tokens"] >= MAX_REPLY_CHARS // 4
               for r in records)


# -- 7. judge rates are compared over runs, not as independent turns --------------------------------------------
def judged_run(run_id: str, new: int, turns: int = 50) -> RunResult:
    from maic_cli.engine.judge import CRITERIA, RoundVerdict, TurnVerdict
    from maic_cli.store.run_results import RunJudgement

    verdicts = [TurnVerdict(turn=n, speaker="teacher", **{c: True for c in CRITERIA}, reason="")
                .model_copy(update={"new": n <= new}) for n in range(1, turns + 1)]
    judge = RunJudgement(model="j", rubric_version="v", rubric_fingerprint="f",
                         rounds=[RoundVerdict(round=1, status="ok", turns=verdicts)])
    return RunResult(run_id=run_id, scenario="s", scenario_path="s.yaml", model="m", repeat=1,
                     status="complete", judge=judge)


def test_correlated_turns_do_not_make_a_judge_rate_difference_look_real() -> None:
    from maic_cli.store import report_judge, report_stats

    mixed = [judged_run("a1", 50), judged_run("a2", 0), judged_run("a3", 50)]  # one run never adds anything
    steady = [judged_run("b1", 50), judged_run("b2", 50), judged_run("b3", 50)]
    pooled = report_stats.newcombe_difference(100, 150, 150, 150)
    assert pooled is not None and pooled[1] < 0  # as 150 independent turns: "larger than the noise"
    [pair] = report_judge.comparisons({"a": mixed, "b": steady})
    new = next(m for m in pair.metrics if m.metric == "judge_new")
    assert new.method == "cluster bootstrap" and new.verdict == "within the noise"
    assert new.difference == round(100 / 150 - 1, 4) and new.high == 0.0


def test_a_judge_rate_difference_every_run_shows_is_larger_than_the_noise() -> None:
    from maic_cli.store import report_judge

    low = [judged_run(f"a{n}", 10) for n in range(3)]
    high = [judged_run(f"b{n}", 45) for n in range(3)]
    [pair] = report_judge.comparisons({"a": low, "b": high})
    new = next(m for m in pair.metrics if m.metric == "judge_new")
    assert new.verdict == "larger than the noise" and new.low == new.high == -0.7


def test_maic_run_does_not_judge_a_run_whose_model_failed_and_says_so(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    judge = script(tmp_path, verdict(True, True), name="judge.json")
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *[{"error": "server_error"}] * 6),
                 "--out", str(out), "--judge", judge)
    saved = [json.loads(p.read_text(encoding="utf-8")) for p in (out / "runs").iterdir()]
    assert [(r["status"], r["judge"]) for r in saved] == [("error", None)], result.output
    assert "Not judged: 1 runs that ended in an error" in result.stderr


def test_only_the_rounds_a_provider_error_left_are_asked_again(tmp_path: Path) -> None:
    out = batch(tmp_path)
    transcript = next((out / "transcripts").iterdir())
    head, *body = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text(head + "".join(body) * 2, encoding="utf-8")  # two rounds recorded …
    run_file = next((out / "runs").iterdir())
    rounds = json.loads(run_file.read_text(encoding="utf-8"))["rounds"]
    edit_run(run_file, rounds=[rounds[0], {**rounds[0], "index": 1}])  # … and reported
    judge = script(tmp_path, verdict(True, False), {"error": "server_error"}, {"error": "server_error"},
                   name="judge.json")
    assert runner.invoke(app, ["report", str(out), "--judge", judge]).exit_code == 0
    first = json.loads(run_file.read_text(encoding="utf-8"))["judge"]
    assert [v["provider_error"] for v in first["rounds"]] == [False, True] and len(first["calls"]) == 3
    script(tmp_path, verdict(False, True), name="judge.json")  # one reply: a second call would fail the test
    again = runner.invoke(app, ["report", str(out), "--judge", judge])
    assert again.exit_code == 0, again.output
    second = json.loads(run_file.read_text(encoding="utf-8"))["judge"]
    assert [v["status"] for v in second["rounds"]] == ["ok", "ok"] and len(second["calls"]) == 4
    assert [t["new"] for t in second["rounds"][0]["turns"]] == [True, False]  # round 1 kept as it was
    assert [t["new"] for t in second["rounds"][1]["turns"]] == [False, True]
