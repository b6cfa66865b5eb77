"""A generated multi-group batch's report files keep the exact bytes they had before the report was made
cheaper (report/reports.py, report/report_stats.py): the digests below were taken on the code
before that change, so any changed digit, string or column shows here."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest

from maic_cli.evaluation.run_results import RunResult, save_run
from maic_cli.evaluation.tutoring import TutoringOutcome
from maic_cli.lessons.learner_quiz import LearningGain
from maic_cli.report.reports import write_reports

SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sample_batch" / "out" / "runs"
KEY = "maic-test-secret-4242424242"  # a key in the environment: redacted wherever it appears

SCENARIOS = ["fractions", "leaves | stems", "<b>bold</b> & [a link](http://x)", "ünïcode `code`"]
MODELS = ["openai/gpt-x", "scripted:m\x1b[31mred\x1b[0m.yaml", "model*with_stars_"]
PROMPTS = ["builtin", "brief", "=SUM(A1)"]
DIRECTORS = ["llm", "round_robin"]


def _template_runs() -> list[dict[str, Any]]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(SAMPLE.glob("*.json"))]


def generated_batch(out: Path, seed: int = 20) -> list[RunResult]:
    """A deterministic batch: several scenarios, models, prompt sets, directors and repeats, judged and
    unjudged runs, failures, errors, provider error text with a key, tutoring and learning outcomes,
    strings that need cleaning (control sequences, Markdown, formulas), built from the sample's runs with
    their numbers jittered by a seeded generator."""
    rng = random.Random(seed)
    templates = _template_runs()
    results: list[RunResult] = []
    count = 0
    for s, scenario in enumerate(SCENARIOS):
        for m, model in enumerate(MODELS):
            for p, prompts in enumerate(PROMPTS[: 2 + (s % 2)]):
                director = DIRECTORS[(s + m + p) % 2]
                for repeat in range(1, 2 + (s + m) % 4):  # groups of 1 to 4 runs
                    count += 1
                    data = json.loads(json.dumps(rng.choice(templates)))
                    data.update(run_id=f"g{count:03d}__r{repeat}", scenario=scenario, model=model, prompts=prompts,
                                director=director, repeat=repeat, transcript=None,
                                duration=rng.uniform(0.5, 40.0), started_at=1_800_000_000.0 + count)
                    for round_ in data["rounds"]:
                        round_["turn_latencies"] = [round(rng.expovariate(2.0), 4)
                                                    for _ in round_["turn_latencies"]]
                        round_["repeated_speakers"] = int(rng.random() < 0.2)
                        round_["empty_turns"] = int(rng.random() < 0.1)
                        round_["reason"] = rng.choice(["cue_user", "cue_user", "end", "max_turns"])
                    for call in data["calls"]:
                        call["prompt_tokens"] = rng.randrange(300, 3000)
                        call["completion_tokens"] = rng.randrange(1, 200)
                        call["cost"] = round(rng.uniform(0, 0.002), 6)
                        call["ttft"] = None if rng.random() < 0.1 else round(rng.uniform(0.01, 2.0), 4)
                    if rng.random() < 0.3:
                        data["judge"] = None
                    elif data.get("judge"):
                        for verdict in data["judge"]["rounds"]:
                            for turn in verdict["turns"]:
                                for criterion in ("on_topic", "correct", "in_role", "brief", "new"):
                                    turn[criterion] = rng.random() < 0.8
                    roll = rng.random()
                    if roll < 0.1:
                        data.update(status="error", error=f"provider said: bad key {KEY} \x07|nope|")
                    elif roll < 0.25:
                        data["failures"] = ["expected `teacher` first | got <i>assistant</i>", "=1+1"]
                    if rng.random() < 0.4:
                        student = rng.choice([None, 0, 1, 2, 4])
                        data["tutoring"] = TutoringOutcome(
                            qid=f"q{rng.randrange(6)}", answer="42", student=student,
                            teacher=rng.choice([None, 0, 1, 3]), student_utterances=5,
                            teacher_utterances=5).model_dump()
                        data["learner"] = "sim-learner"
                    if rng.random() < 0.3:
                        pre = round(rng.random(), 4)
                        data["learning"] = LearningGain.of(pre, min(1.0, pre + rng.random() / 2)).model_dump()
                    result = RunResult.model_validate(data)
                    save_run(out, result)
                    results.append(result)
    return sorted(results, key=lambda r: r.run_id + ".json")


# sha256 of each file, taken on the code before the report was made cheaper.
DIGESTS = {
    "learning.csv": "7149d877a9f64fe54c5d2c56b09dc2cf33242ebf5254134b229fcc9853bbdb34",
    "report.json": "5152cf3df3320821874bb2839515dc73d2a6514ea7f51ca6fa592c6c41d6f9a8",
    "report.md": "4068d7b01b932b828fc6daa78073f838ae6da8fa964851b3a28c443ece84151f",
    "rounds.csv": "ca01dcbb16234d4a9b558dd571d26f4f33df14ae963899ff5fd974a1ad5b388f",
    "turns.csv": "e1fe56afb321a3f9e4e1ce9889231d6e93a79a60487ca3404705215954e14463",
    "tutoring.csv": "fce0318cf14885dcf931a85828b2e31c20638805f3635170c58017ff2cd00b0e",
    "tutoring_curves.csv": "8b805d39b4a9861e0cd25e586f99ac3497b13e9608a6f29e5551ccf7fe37b410",
}


def digests(folder: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.iterdir()) if path.suffix in (".json", ".md", ".csv")}


def test_a_generated_multi_group_batch_reports_the_bytes_it_always_did(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    results = generated_batch(tmp_path)
    assert len({r.scenario for r in results}) == 4 and len({r.model for r in results}) == 3
    assert any(r.judge for r in results) and any(r.tutoring for r in results) and any(r.learning for r in results)
    write_reports(tmp_path, results, {"maic": "test", "scenarios": "generated", "runs planned": len(results)})
    report = (tmp_path / "report.json").read_text(encoding="utf-8")
    assert KEY not in report and "\x1b" not in report and KEY not in (tmp_path / "report.md").read_text("utf-8")
    assert digests(tmp_path) == DIGESTS
