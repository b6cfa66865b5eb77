"""``maic judge calibrate LABELS.jsonl --judge MODEL``: how far the judge agrees with a person.

The judge (evaluation/judging.py's, with the rubric of the prompt set in use) scores each turn a
person has labelled (evaluation/calibration.py), one call per turn as a one-turn round; its
yes/no per criterion is set against the person's, and agreement is reported per criterion:
accuracy, macro-F1 and Cohen's κ, each with a 95% bootstrap interval (evaluation/agreement.py).
A verdict the judge could not give (an unusable reply, a provider error) is counted as
missing, not as a disagreement.  ``--out FILE`` keeps the numbers as JSON.  ``--rubric pedagogy``
judges the labelled turns on the pedagogy rubric's dimensions, three labels each (yes / to some
extent / no; the tone encouraging / neutral / offensive), and agreement is over those labels.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..untrusted import clean
from .errors import friendly
from .help_option import help_option

if TYPE_CHECKING:
    from ..evaluation.judge_rubrics import Rubric

app = typer.Typer(help="The judge: calibrate it against turns a person has labelled.", no_args_is_help=True)


@app.callback()
def _judge(show_help: bool = help_option()) -> None:
    """The judge: calibrate it against turns a person has labelled."""


async def judge_labelled(llm: Any, prompts: Any, items: list[Any],
                         rubric: Rubric | None = None) -> tuple[list[dict[str, str | None]], list[Any]]:
    """The judge's label per criterion for each item (``None``: missing), and its calls."""
    from ..evaluation.judge import RoundToJudge, TurnToJudge, judge_round
    from ..evaluation.judge_rubrics import DEFAULT
    from ..llm.recording import CallRecord, RecordingLLM

    rubric = rubric or DEFAULT
    calls: list[CallRecord] = []
    recording = RecordingLLM(llm, calls.append)
    found: list[dict[str, str | None]] = []
    for index, item in enumerate(items):
        round_ = RoundToJudge(index=index, learner=item.learner, turns=(TurnToJudge(
            item.speaker, item.name, item.role, item.persona, item.text),))
        verdict = await judge_round(recording, prompts, round_, rubric=rubric)
        turn = verdict.turns[0] if verdict.turns else None
        if rubric.boolean:
            found.append({name: None if turn is None or not turn.usable else ("yes" if getattr(turn, name) else "no")
                          for name in rubric.names})
        else:
            found.append({name: turn.labels.get(name) if turn else None for name in rubric.names})
    return found, calls


def calibration_report(items: list[Any], judged: list[dict[str, str | None]],
                       rubric: Rubric | None = None) -> dict[str, Any]:
    from ..evaluation.agreement import agreement
    from ..evaluation.judge_rubrics import DEFAULT

    rubric = rubric or DEFAULT
    dimensions: dict[str, Any] = {}
    for name in rubric.names:
        labelled = [(item.labels[name], verdict.get(name)) for item, verdict in zip(items, judged, strict=True)
                    if name in item.labels]
        pairs = [(person, judge) for person, judge in labelled if judge is not None]
        dimensions[name] = {**agreement(pairs), "missing": len(labelled) - len(pairs)}
    return {"turns": len(items), "dimensions": dimensions}


@app.command("calibrate")
@friendly
def calibrate(
    labels: Path = typer.Argument(..., help="A JSONL file of turns a person has labelled (format: README)."),
    judge: str = typer.Option(..., "--judge", help="The judge model (any --model string)."),
    judge_api_base: str = typer.Option(None, "--judge-api-base", help="Base URL of an OpenAI-compatible server "
                                       "for the judge."),
    prompts: Path = typer.Option(None, "--prompts", help="A prompt set whose judge/ templates are the rubric "
                                 "(default: $MAIC_HOME/prompts, then the built-in rubric)."),
    structured: str = typer.Option("auto", "--structured", help="auto, off, json_schema or json_object."),
    out: Path = typer.Option(None, "--out", "-o", help="Also write the numbers to this JSON file."),
    rubric: str = typer.Option("default", "--rubric", help="default (yes/no criteria) or pedagogy (the BEA 2025 "
                               "tutor dimensions, three labels each)."),
) -> None:
    """Run the judge on labelled turns; report agreement per criterion (accuracy, macro-F1, Cohen's κ)."""
    import asyncio

    from rich.console import Console
    from rich.table import Table

    from ..evaluation.calibration import read_labels
    from ..evaluation.judging import judge_rubric, make_judge
    from ..llm.port import close_llm
    from ..store.paths import write_atomic
    from ..store.prompts import load_prompt_set

    kind = judge_rubric(rubric)
    items = read_labels(labels, kind)
    made = make_judge(judge, load_prompt_set(prompts), api_base=judge_api_base, structured=structured, rubric=rubric)
    llm = made.clients.get(made.spec)

    async def run() -> tuple[list[dict[str, str | None]], list[Any]]:
        try:
            return await judge_labelled(llm, made.prompts, items, kind)
        finally:
            await close_llm(llm)
            await made.aclose()

    judged, calls = asyncio.run(run())
    named = {} if kind.boolean else {"rubric_name": kind.name}
    report = {"judge": judge, **named, "rubric": made.rubric.version, "rubric_fingerprint": made.rubric.fingerprint,
              **calibration_report(items, judged, kind),
              "judge_calls": len(calls), "judge_cost": round(sum(c.usage.cost for c in calls), 6)}
    table = Table(title=f"judge {clean(judge)} vs the labels ({len(items)} turns)", box=None, pad_edge=False)
    for column in ("criterion", "pairs", "missing", "accuracy", "macro-F1", "Cohen's κ"):
        table.add_column(column, justify="left" if column == "criterion" else "right")

    def shown(entry: dict[str, Any]) -> str:
        if entry["value"] is None:
            return "–"
        return f"{entry['value']:.2f}" + ("" if entry["low"] is None else f" [{entry['low']:.2f}, {entry['high']:.2f}]")

    for name, d in report["dimensions"].items():
        table.add_row(kind.criterion(name).label, str(d["items"]), str(d["missing"]), shown(d["accuracy"]),
                      shown(d["macro_f1"]), shown(d["kappa"]))
    Console(width=160).print(table)
    if out is not None:
        try:
            write_atomic(out, json.dumps(report, indent=1, ensure_ascii=False))
        except OSError as exc:
            from ..errors import MaicError

            raise MaicError(f"{out}: cannot write: {exc.strerror or exc}") from None
        typer.echo(f"Written: {out}", err=True)
