"""report.json's ``speech`` and report.md's Voice section: what ``maic run --voice`` synthesized, over the batch,
apart from the model's calls (evaluation/batch_voice.py voices each run)."""

from __future__ import annotations

from ..evaluation.run_results import RunResult
from ..untrusted import one_line
from .batch_report import BatchReport, SpeechTotals


def add_to_report(report: BatchReport, results: list[RunResult]) -> None:
    """The report's ``speech`` section: set only in a batch that was voiced."""
    voiced = [r.speech for r in results if r.speech is not None]
    if not voiced:
        return
    costs = [s.cost for s in voiced if s.error is None]
    report.speech = SpeechTotals(
        engine=", ".join(sorted({s.engine for s in voiced})), runs=len(voiced),
        sentences=sum(s.sentences for s in voiced), characters=sum(s.characters for s in voiced),
        seconds=round(sum(s.seconds for s in voiced), 3),
        cost=None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 6),
        errors=sum(1 for s in voiced if s.error is not None))


def markdown(report: BatchReport) -> list[str]:
    speech = report.speech
    if speech is None:
        return []
    cost = "unknown (no price for this engine)" if speech.cost is None else f"{speech.cost:.4f}"
    return ["## Voice", "", f"{speech.runs} runs voiced with {one_line(speech.engine)}: {speech.sentences} sentences, "
            f"{speech.characters} characters, {speech.seconds:.1f} s of audio; cost {cost} (apart from the model's "
            f"calls); {speech.errors} failed.", ""]
