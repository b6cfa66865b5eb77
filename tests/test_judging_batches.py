"""Judging a batch: rounds a provider error left are judged again (and only those), a run whose model
failed is not judged, Ctrl-C while judging keeps the class and says what was saved, the judge's reply
is read however it is wrapped, a cut-off reply's tokens are estimated, and judge rates are compared over
runs rather than as independent turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.evaluation.run_results import RunResult
from tests.test_judge import verdict
from tests.test_report_inputs import batch, edit_run
from tests.test_run import GOOD_ROUND, QA_SCENARIO, run, script, write

runner = CliRunner()


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

    from maic_cli.engine.prompt_set import PromptSet
    from maic_cli.evaluation.judge import judge_round
    from maic_cli.llm.scripted import ScriptedLLM, ScriptedReply
    from tests.test_judge import ROUND

    garbage = asyncio.run(judge_round(ScriptedLLM(["no idea", "still none"]), PromptSet.builtin(), ROUND))
    assert garbage.status == "missing" and not garbage.provider_error
    outage = asyncio.run(judge_round(ScriptedLLM([ScriptedReply(error="server_error"), "no idea"]),
                                     PromptSet.builtin(), ROUND))
    assert outage.status == "missing" and outage.provider_error


def test_ctrl_c_while_the_judge_scores_keeps_the_finished_class(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from maic_cli.evaluation import judging

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
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from maic_cli.evaluation import judging

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


def test_a_valid_verdict_after_a_brace_in_prose_is_read_without_repair() -> None:
    from maic_cli.evaluation.judge import parse_verdict
    from tests.test_judge import ROUND

    reply = "Using the format {turn, reason}: " + verdict(True, False)
    result = parse_verdict(reply, ROUND)
    assert result.status == "ok" and not result.repaired and [t.new for t in result.turns] == [True, False]


def test_a_bare_array_of_turns_is_read_as_the_turns() -> None:
    from maic_cli.evaluation.judge import parse_verdict
    from tests.test_judge import ROUND

    turns = json.loads(verdict(True, True))["turns"]
    result = parse_verdict("Here: " + json.dumps(turns), ROUND)
    assert all(t.usable for t in result.turns) and result.answered is None and result.status == "partial"


def test_a_judge_reply_cut_off_at_its_limit_has_its_tokens_estimated() -> None:
    import asyncio

    from maic_cli.engine.prompt_set import PromptSet
    from maic_cli.evaluation.judge import MAX_REPLY_CHARS, judge_round
    from maic_cli.llm.recording import CallRecord, RecordingLLM
    from maic_cli.llm.scripted import ScriptedLLM
    from tests.test_judge import ROUND

    records: list[CallRecord] = []
    endless = "x" * (MAX_REPLY_CHARS * 2)
    llm = RecordingLLM(ScriptedLLM([endless, endless]), records.append)
    asyncio.run(judge_round(llm, PromptSet.builtin(), ROUND))
    assert [r.error_kind for r in records] == ["cancelled", "cancelled"]
    assert all(r.usage.prompt_tokens > 0 and r.usage.completion_tokens >= MAX_REPLY_CHARS // 4
               for r in records)


def judged_run(run_id: str, new: int, turns: int = 50) -> RunResult:
    from maic_cli.evaluation.judge import CRITERIA, RoundVerdict, TurnVerdict
    from maic_cli.evaluation.run_results import RunJudgement

    criteria: dict[str, Any] = {c: True for c in CRITERIA}
    verdicts = [TurnVerdict(turn=n, speaker="teacher", **criteria, reason="")
                .model_copy(update={"new": n <= new}) for n in range(1, turns + 1)]
    judge = RunJudgement(model="j", rubric_version="v", rubric_fingerprint="f",
                         rounds=[RoundVerdict(round=1, status="ok", turns=verdicts)])
    return RunResult(run_id=run_id, scenario="s", scenario_path="s.yaml", model="m", repeat=1,
                     status="complete", judge=judge)


def test_correlated_turns_do_not_make_a_judge_rate_difference_look_real() -> None:
    from maic_cli.report import report_judge, report_stats

    mixed = [judged_run("a1", 50), judged_run("a2", 0), judged_run("a3", 50)]  # one run never adds anything
    steady = [judged_run("b1", 50), judged_run("b2", 50), judged_run("b3", 50)]
    pooled = report_stats.newcombe_difference(100, 150, 150, 150)
    assert pooled is not None and pooled[1] < 0  # as 150 independent turns: "larger than the noise"
    [pair] = report_judge.comparisons({"a": mixed, "b": steady})
    new = next(m for m in pair.metrics if m.metric == "judge_new")
    assert new.method == "cluster bootstrap" and new.verdict == "within the noise"
    assert new.difference == round(100 / 150 - 1, 4) and new.high == 0.0


def test_a_judge_rate_difference_every_run_shows_is_larger_than_the_noise() -> None:
    from maic_cli.report import report_judge

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
