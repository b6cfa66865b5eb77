"""A batch split into shards run as separate processes (as a cluster scheduler runs them: a
Kubernetes Indexed Job, a SLURM job array), then merged, reports what one run of the whole batch does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = [str(ROOT / "scenarios" / "qa_multi.yaml"), str(ROOT / "scenarios" / "single_tutor.yaml")]
SHARDS = 4
TIMING = ("duration", "ttft", "latency", "started_at", "finished_at")  # what differs from one run to the next


def maic(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "maic_cli", "run", *args, "--plain"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(proc: subprocess.Popen[str]) -> int:
    _, err = proc.communicate(timeout=240)
    assert proc.returncode in (0, 1), err  # 1: a run failed its expectations, which both sides must show alike
    return proc.returncode


def comparable(value: Any) -> Any:
    """The report without what depends on the clock or on where the runs were written."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()
                if k not in ("meta", "transcript") and not any(word in k for word in TIMING)}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def test_four_shards_in_four_processes_merge_into_the_report_of_one_run(tmp_path: Path) -> None:
    env = {**os.environ, "MAIC_HOME": str(tmp_path / "home")}
    batch = [*SCENARIOS, "--model", "demo", "--repeat", "3"]  # 6 runs: every shard gets one or two
    whole = maic(*batch, "--out", str(tmp_path / "whole"), env=env)
    shards = [maic(*batch, "--shard", f"{i}/{SHARDS}", "--out", str(tmp_path / f"shard-{i}"), env=env)
              for i in range(1, SHARDS + 1)]  # at once, like the pods of an Indexed Job
    whole_code = finish(whole)
    assert [finish(shard) for shard in shards] and all((tmp_path / f"shard-{i}" / "report.json").is_file()
                                                       for i in range(1, SHARDS + 1))
    merge_args = [arg for i in range(1, SHARDS + 1) for arg in ("--merge", str(tmp_path / f"shard-{i}"))]
    merged_code = finish(maic(*merge_args, "--out", str(tmp_path / "merged"), env=env))

    one = json.loads((tmp_path / "whole" / "report.json").read_text(encoding="utf-8"))
    merged = json.loads((tmp_path / "merged" / "report.json").read_text(encoding="utf-8"))
    shard_runs = [json.loads((tmp_path / f"shard-{i}" / "report.json").read_text(encoding="utf-8"))["runs"]
                  for i in range(1, SHARDS + 1)]
    assert all(shard_runs) and sum(len(runs) for runs in shard_runs) == len(one["runs"]) == 6
    assert sorted(r["run_id"] for runs in shard_runs for r in runs) == sorted(r["run_id"] for r in one["runs"])
    assert comparable(merged) == comparable(one)
    assert merged_code == whole_code
    assert one["overall"]["agent_turns"] > 0  # the classes really ran


FAILING = """id: clown_first
class: {agents: [teacher, curious_student]}
messages: ["Why is the sky blue?"]
expect: {first_speaker: curious_student}
"""


def test_run_merge_and_report_out_are_one_merge_with_one_exit_code(tmp_path: Path) -> None:
    """The same failing runs: both ways of combining batches write the same report and exit 1."""
    scenario = tmp_path / "failing.yaml"
    scenario.write_text(FAILING, encoding="utf-8")
    env = {**os.environ, "MAIC_HOME": str(tmp_path / "home")}
    parts = [maic(str(scenario), "--model", "demo", "--repeat", "2", "--shard", f"{i}/2",
                  "--out", str(tmp_path / f"part-{i}"), env=env) for i in (1, 2)]
    assert [finish(p) for p in parts] == [1, 1]  # the demo's teacher answers first: every run fails
    folders = [str(tmp_path / "part-1"), str(tmp_path / "part-2")]
    merged = finish(maic("--merge", folders[0], "--merge", folders[1], "--out", str(tmp_path / "merged"), env=env))
    combined = subprocess.run([sys.executable, "-m", "maic_cli", "report", *folders, "--out",
                               str(tmp_path / "combined")], env=env, capture_output=True, text=True, timeout=240)
    assert (merged, combined.returncode) == (1, 1), combined.stderr
    reports = [json.loads((tmp_path / name / "report.json").read_text(encoding="utf-8"))
               for name in ("merged", "combined")]
    assert reports[0]["overall"]["runs"] == 2 and reports[0]["overall"]["passed"] == 0
    assert comparable(reports[0]) == comparable(reports[1])
    assert reports[0]["meta"]["merged"] == reports[1]["meta"]["merged"] == ", ".join(folders)
