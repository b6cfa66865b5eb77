"""``maic run``: scenarios, expectations, metrics, reports, resume, shard, merge, router."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from maic_cli.cli.app import app
from maic_cli.errors import InputError
from maic_cli.evaluation.scenarios import load_scenario
from maic_cli.testing.openai_server import LoopbackOpenAIServer
from tests.helpers import action, decision, reply

runner = CliRunner()
ROOT = Path(__file__).parent.parent


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def script(tmp_path: Path, *replies: object, name: str = "script.json") -> str:
    return f"scripted:{write(tmp_path / name, json.dumps(list(replies)))}"


QA_SCENARIO = """id: sky
class:
  agents: [teacher, curious_student, class_clown]
learner: {nickname: Ana}
messages:
  - Why is the sky blue?
expect:
  first_speaker: teacher
  max_agents: 2
  must_not_include: [class_clown]
  end_reasons: [end, cue_user]
  no_disallowed_actions: true
"""

GOOD_ROUND = (decision("teacher"), reply("Scattering.", action("wb_draw_text", content="Rayleigh")),
              decision("curious_student"), reply("Why blue?"), decision("USER"))


def run(tmp_path: Path, *args: str) -> Result:
    return runner.invoke(app, ["run", *args, "--plain"])


def test_all_shipped_scenarios_are_valid() -> None:
    files = sorted((ROOT / "scenarios").glob("*.yaml"))
    assert len(files) >= 6
    kinds = {load_scenario(f).id for f in files}
    assert {"single_tutor", "qa_multi", "discussion", "slides_spotlight", "math_whiteboard",
            "profile_language", "lesson_photosynthesis"} <= kinds


def test_a_passing_run_writes_transcript_and_reports(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    overall = report["overall"]
    assert overall["runs"] == 1 and overall["passed"] == 1 and overall["rounds"] == 1
    assert overall["agent_turns"] == 2 and overall["end_reasons"] == {"cue_user": 1}
    assert overall["cue_user_rate"] == 1.0
    assert set(overall["tokens"]) == {"director", "agent:teacher", "agent:curious_student"}
    assert overall["tokens"]["director"]["calls"] == 3
    assert overall["ttft_p50"] is not None and overall["turn_latency_p95"] is not None
    run_entry = report["runs"][0]
    assert run_entry["speaker_sequence"] == [["teacher", "curious_student"]]
    assert Path(run_entry["transcript"]).exists()
    assert "sky" in report["by_scenario"] and len(report["by_model"]) == 1
    markdown = (out / "report.md").read_text()
    assert "## By scenario" in markdown
    assert "teacher → curious_student" in markdown  # the run's speaker sequence
    director_row = next(line for line in markdown.splitlines() if "| director |" in line)
    assert director_row.split("|")[3].strip() == "3"  # three director calls
    assert "sky" in result.stdout


def test_failed_expectations_exit_1_and_are_reported(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    bad = (decision("class_clown"), reply("Joke!", action("spotlight", elementId="x")),
           decision("teacher"), reply("Hello again."), decision("curious_student"), reply("Hi!"), decision("END"))
    out = tmp_path / "out"
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *bad), "--out", str(out))
    assert result.exit_code == 1
    failures = json.loads((out / "report.json").read_text())["runs"][0]["failures"]
    assert "round 1: first speaker was class_clown, expected teacher" in failures
    assert "round 1: 3 agent turns, expected at most 2" in failures
    assert "round 1: class_clown spoke but must not" in failures
    assert "round 1: 1 disallowed action(s) dropped" in failures
    assert "✗" in result.stdout


def test_metrics_count_roles_greetings_and_dropped_replies(tmp_path: Path) -> None:
    # Two students only: an empty reply is dropped whole (no turn), and a repeat pick once
    # everyone has spoken hands the round to the learner instead of passing.
    scenario = write(tmp_path / "s.yaml", QA_SCENARIO.replace("max_agents: 2", "max_agents: 9")
                     .replace("[teacher, curious_student, class_clown]", "[curious_student, class_clown]"))
    replies = (decision("curious_student"), "[]", decision("curious_student"), reply("Hello everyone!"),
               decision("class_clown"), reply("Hi hi!"), decision("curious_student"))
    out = tmp_path / "out"
    run(tmp_path, str(scenario), "--model", script(tmp_path, *replies), "--out", str(out))
    overall = json.loads((out / "report.json").read_text())["overall"]
    assert overall["rounds_with_repeated_speaker"] == 0 and overall["director_corrections"] == 1
    assert overall["same_role_in_a_row"] == 1
    assert overall["second_greetings"] == 1
    assert overall["empty_turns"] == 0 and overall["dropped_replies"] == 1
    assert overall["agent_turns"] == 2


def test_one_failing_run_does_not_stop_the_others(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    other = write(tmp_path / "other.yaml", QA_SCENARIO.replace("id: sky", "id: other"))
    out = tmp_path / "out"
    # Each run gets its own copy of the script; the first run's director call fails.
    result = run(tmp_path, str(scenario), str(other), "--model", script(tmp_path, {"error": "auth"}),
                 "--out", str(out), "--concurrency", "2")
    assert result.exit_code == 1
    report = json.loads((out / "report.json").read_text())
    assert report["overall"]["runs"] == 2 and report["overall"]["errors"] == 2
    assert all("authentication failed" in (r["error"] or "") for r in report["runs"])


def test_repeat_concurrency_shard_and_merge(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    model = script(tmp_path, *GOOD_ROUND)
    outs = []
    for index in (1, 2):
        out = tmp_path / f"shard{index}"
        result = run(tmp_path, str(scenario), "--model", model, "--repeat", "5", "--concurrency", "3",
                     "--shard", f"{index}/2", "--out", str(out))
        assert result.exit_code == 0, result.output
        outs.append(out)
    ids = [{r["run_id"] for r in json.loads((o / "report.json").read_text())["runs"]} for o in outs]
    assert len(ids[0]) == 3 and len(ids[1]) == 2 and not ids[0] & ids[1]
    merged = tmp_path / "merged"
    result = runner.invoke(app, ["run", "--merge", str(outs[0]), "--merge", str(outs[1]), "--out", str(merged)])
    assert result.exit_code == 0, result.output
    runs = json.loads((merged / "report.json").read_text())["runs"]
    assert [r["repeat"] for r in runs] == [1, 2, 3, 4, 5]


def test_runs_are_ordered_by_repeat_number_not_text(tmp_path: Path) -> None:
    from maic_cli.cli.batch_plan import expand

    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    specs = expand([scenario], ["m"], 12, None, [])
    assert [spec.repeat for spec in specs] == list(range(1, 13))  # r2 before r10: shards and launches follow it


def test_resume_skips_finished_runs(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    first = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--repeat", "2",
                "--out", str(out))
    assert first.exit_code == 0
    (out / "runs" / "sky__scripted-script__r2.json").unlink()  # as if the batch had stopped before it
    again = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--repeat", "2",
                "--resume", str(out))
    assert again.exit_code == 0, again.output
    assert "1 runs already done, 1 to go" in again.stderr
    assert json.loads((out / "report.json").read_text())["overall"]["runs"] == 2


def test_invalid_scenario_exits_2_with_file_line_field(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.yaml", QA_SCENARIO.replace("max_agents: 2", "max_agents: lots"))
    result = run(tmp_path, str(bad), "--model", "demo", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert f"{bad}:9: expect.max_agents: Input should be a valid integer" in result.stderr


@pytest.mark.parametrize(("text", "message"), [
    ("id: x\nclass: {agents: [nobody]}\nmessages: [hi]\n", "unknown agent id(s) nobody"),
    ("id: x\nclass: {agents: []}\nmessages: [hi]\n", "name at least one agent"),
    ("id: x\nclass: {agents: [teacher]}\nmode: discussion\n", "there is no discussion"),
    ("id: x\nclass: {agents: [teacher]}\nmessages: [hi]\nexpect: {end_reasons: [bored]}\n", "end_reasons.0"),
])
def test_scenario_problems_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "s.yaml", text)
    result = run(tmp_path, str(path), "--model", "demo", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_discussion_opening_round_and_language(tmp_path: Path) -> None:
    out = tmp_path / "out"
    replies = (reply("Discovered, I say."), decision("USER"), decision("teacher"), reply("Interesting."),
               decision("END"))
    result = run(tmp_path, str(ROOT / "scenarios" / "discussion.yaml"), "--model", script(tmp_path, *replies),
                 "--out", str(out))
    assert result.exit_code == 0, result.output
    run_entry = json.loads((out / "report.json").read_text())["runs"][0]
    assert run_entry["speaker_sequence"] == [["deep_thinker"], ["teacher"]]


def test_missing_scenario_path_is_input_error(tmp_path: Path) -> None:
    result = run(tmp_path, str(tmp_path / "nope.yaml"), "--model", "demo")
    assert result.exit_code == 2 and "no such scenario" in result.stderr
    with pytest.raises(InputError):
        from maic_cli.cli.batch_plan import parse_shard

        parse_shard("3/2")


def test_router_spreads_calls_over_two_loopback_servers(tmp_path: Path) -> None:
    with LoopbackOpenAIServer(default=decision("END")) as one, LoopbackOpenAIServer(default=decision("END")) as two:
        router = write(tmp_path / "router.yaml", f"""model_list:
  - model_name: classroom
    litellm_params: {{model: openai/loopback-a, api_base: "{one.base_url}", api_key: sk-a}}
  - model_name: classroom
    litellm_params: {{model: openai/loopback-b, api_base: "{two.base_url}", api_key: sk-b}}
router_settings:
  routing_strategy: simple-shuffle
""")
        scenario = write(tmp_path / "sky.yaml", QA_SCENARIO.replace("  first_speaker: teacher\n", ""))
        out = tmp_path / "out"
        result = run(tmp_path, str(scenario), "--router", str(router), "--model", "classroom", "--repeat", "20",
                     "--concurrency", "5", "--out", str(out))
        assert result.exit_code == 0, result.output
        # per run: END (corrected by the routing guard: nobody has answered) → the teacher → END
        assert len(one.requests) + len(two.requests) == 60
        assert one.requests and two.requests  # both deployments served part of the batch


def test_rate_limits_slow_the_batch_down_instead_of_failing_it(tmp_path: Path) -> None:
    from maic_cli.testing.openai_server import ServedReply

    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO.replace("  first_speaker: teacher\n", ""))
    with LoopbackOpenAIServer([ServedReply(status=429), ServedReply(status=429)],
                              default=decision("END")) as server:
        out = tmp_path / "out"
        result = run(tmp_path, str(scenario), "--model", "openai/loopback", "--api-base", server.base_url,
                     "--repeat", "3", "--concurrency", "3", "--out", str(out))
        assert result.exit_code == 0, result.output
        # per run three calls (END is corrected to the teacher, then END), plus two rate-limited retries
        assert len(server.requests) == 11
    assert json.loads((out / "report.json").read_text())["overall"]["passed"] == 3


def test_ctrl_c_writes_a_partial_report_and_resume_finishes(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    slow = [decision("teacher"), {"reply": reply("Slowly " * 40), "chunk_size": 2, "chunk_delay": 0.05},
            decision("USER")]
    model = script(tmp_path, *slow)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "maic_cli", "run", str(scenario), "--model", model,
                             "--repeat", "4", "--concurrency", "2", "--out", str(out), "--plain"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    def speaking() -> bool:  # the condition: an agent is mid-reply in some run's transcript
        return any('"text_delta"' in path.read_text(encoding="utf-8", errors="replace")
                   for path in (out / "transcripts").glob("*.jsonl"))

    deadline = time.monotonic() + 30
    while not speaking():
        assert time.monotonic() < deadline and proc.poll() is None, "no run started speaking"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "partial report written" in stderr
    report = json.loads((out / "report.json").read_text())
    assert report["meta"]["interrupted"] is True
    assert report["overall"]["cancelled"] >= 1
    assert not list((out / "runs").glob("*.json")) or report["overall"]["complete"] < 4
    again = run(tmp_path, str(scenario), "--model", model, "--repeat", "4", "--resume", str(out))
    assert again.exit_code == 0, again.output
    assert json.loads((out / "report.json").read_text())["overall"]["passed"] == 4


def test_greeting_check_reads_only_a_reply_opening() -> None:
    from maic_cli.engine.events import AgentEndEvent, AgentStartEvent, TextDeltaEvent
    from maic_cli.evaluation.metrics import GREETING_CHARS, RoundLog

    log = RoundLog(0, "hi")
    log.observe(AgentStartEvent(message_id="m", agent_id="teacher", agent_name="T", avatar="", color=""), {})
    for piece in ["Hel", "lo, class! ", *["More words. "] * 5000]:  # a greeting split across deltas
        log.observe(TextDeltaEvent(message_id="m", content=piece), {})
    log.observe(AgentEndEvent(message_id="m", agent_id="teacher"), {})
    assert log.greetings == 1
    assert len(log._speech["m"]) < GREETING_CHARS + 20  # kept bounded: no quadratic growth per delta
