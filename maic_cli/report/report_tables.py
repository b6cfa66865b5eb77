"""``turns.csv`` and ``rounds.csv``: a batch's rows for pandas or a spreadsheet (no JSON to flatten).

``rounds.csv`` has one row per round, from the run results (lists joined with
spaces).  ``turns.csv`` has one row per agent turn, read from the run's
transcript in the batch folder (``transcripts/<run_id>.jsonl``): each ``done``
event of an agent turn gives its tokens, actions and dropped actions, and its
latency is the time since the previous ``done`` (or the round's start), as the
report's turn latencies are.  A run this batch process just played is not read
back: the batch kept those entries in memory as it wrote them (the same ones, so
``maic report DIR`` rebuilds the same rows from the files).  After ``--merge`` a
transcript is read in the batch folder its run was made in.  A run without a readable transcript (an
error before it opened, a folder moved away) gives rows from its round
summaries with the token and latency cells empty (``source`` says which).
Rounds and turns are numbered from 1.  A judged run (report/report_judge.py) fills the
``judge_*`` cells: 1/0 per criterion and the turn score (0–5) in ``turns.csv``, 1/0 for
``judge_answered`` in ``rounds.csv``, each with the judge's one-line reason; a missing
verdict leaves them empty (``judge_status`` says why).  A batch judged on the pedagogy rubric
adds a ``judge_<dimension>`` column per dimension to ``turns.csv`` (the label given) and its
``judge_score`` is the number of good labels (0–8); a default batch's columns are unchanged.

Cells come from files and models: each is one clean line, and a cell opening
with ``= + - @`` (or a tab / carriage return) is prefixed with ``'`` so that a
spreadsheet never runs it as a formula.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..evaluation.judge import CRITERIA
from ..evaluation.judge_rubrics import RUBRICS
from ..evaluation.run_results import RunResult, transcript_mismatch, transcript_path
from ..store.paths import write_atomic
from ..store.transcript import EventLine, RoundLine, Transcript, read_transcript
from ..untrusted import one_line, redactor

RUN_COLUMNS = ["run_id", "scenario", "model", "prompts", "director", "repeat"]
TURN_COLUMNS = [*RUN_COLUMNS, "round", "turn", "speaker", "role", "prompt_tokens", "completion_tokens",
                "cached_tokens", "cost", "latency", "actions", "dropped", "parse_recoveries", "empty", "source",
                *(f"judge_{name}" for name in CRITERIA), "judge_score", "judge_reason"]
ROUND_COLUMNS = [*RUN_COLUMNS, "round", "learner", "speakers", "roles", "reason", "error", "agent_turns",
                 "empty_turns", "invalid_picks", "director_corrections", "actions", "dropped_actions",
                 "parse_recoveries", "repeated_speakers", "same_role_in_a_row", "second_greetings", "cue_user",
                 "turn_latencies", "failures", "judge_answered", "judge_answered_reason", "judge_status"]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any, redact: Callable[[str], str] | None = None) -> Any:
    """A CSV cell: numbers as they are; text on one clean line, keys redacted (by ``redact``, one
    :func:`redactor` for a whole table: it looks the keys up in the environment), never a formula."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return value
    text = (redact or redactor())(one_line(str(value)))
    return "'" + text if starts_formula(text) else text


def starts_formula(text: str) -> bool:
    """Whether a spreadsheet could read ``text`` as a formula: it starts with ``= + - @`` (or a tab or
    carriage return), also after leading spaces, also written full-width (``＝``) or in any other form
    that Unicode compatibility maps to one of them."""
    if text.startswith(FORMULA_STARTS):
        return True
    first = text.lstrip()[:1]
    return bool(first) and unicodedata.normalize("NFKC", first)[:1] in FORMULA_STARTS


def _run_cells(result: RunResult) -> dict[str, Any]:
    return {"run_id": result.run_id, "scenario": result.scenario, "model": result.model,
            "prompts": result.prompts, "director": result.director, "repeat": result.repeat}


def round_rows(results: list[RunResult]) -> list[dict[str, Any]]:
    rows = []
    for result in results:
        cells = _run_cells(result)
        for summary in result.rounds:
            row = {**cells, **summary.model_dump()}
            row["round"] = summary.index + 1
            for key in ("speakers", "roles", "turn_latencies"):
                row[key] = " ".join(str(item) for item in row[key])
            row["failures"] = "; ".join(summary.failures)
            rows.append(row if result.judge is None else row | _round_verdict(result, summary.index + 1))
    return rows


def _round_verdict(result: RunResult, round_number: int) -> dict[str, Any]:
    if result.judge is None:
        return {}
    verdict = result.judge.verdict(round_number)
    if verdict is None:
        return {"judge_status": "missing"}
    return {"judge_answered": verdict.answered, "judge_answered_reason": verdict.answered_reason,
            "judge_status": verdict.status}


def _turn_verdict(result: RunResult, row: dict[str, Any]) -> dict[str, Any]:
    """The judge's cells of one turn row (matched by round, turn and speaker)."""
    verdict = result.judge.verdict(row["round"]) if result.judge else None
    turn = next((t for t in verdict.turns if t.turn == row["turn"]), None) if verdict else None
    if turn is None or not turn.usable or turn.speaker != row["speaker"] or result.judge is None:
        return {}
    rubric = RUBRICS[result.judge.rubric]
    if not rubric.boolean:
        if not all(turn.labels.get(c.name) in c.labels for c in rubric.criteria):
            return {}
        return {**{f"judge_{c.name}": turn.labels[c.name] for c in rubric.criteria},
                "judge_score": sum(turn.labels[c.name] == c.good for c in rubric.criteria), "judge_reason": turn.reason}
    return {**{f"judge_{name}": getattr(turn, name) for name in CRITERIA}, "judge_score": turn.score,
            "judge_reason": turn.reason}


def turn_columns(results: list[RunResult]) -> list[str]:
    """turns.csv's columns: a label column per dimension of each other rubric some run was judged on."""
    used = {r.judge.rubric for r in results if r.judge is not None}
    extra = [f"judge_{c.name}" for rubric in RUBRICS.values() if rubric.name in used and not rubric.boolean
             for c in rubric.criteria]
    return TURN_COLUMNS if not extra else [*TURN_COLUMNS[:-2], *extra, *TURN_COLUMNS[-2:]]


def read_run_transcript(out: Path, result: RunResult) -> Transcript | None:
    """The run's transcript when it can be read and is the run's (else None: its round summaries are used);
    a run this process played is read from what it kept in memory of the transcript it wrote (the same
    entries: rebuilding the report from the files gives the same turns.csv)."""
    if result.recorded is not None:
        return result.recorded
    path = transcript_path(out, result)
    if path is None:
        return None
    try:
        transcript = read_transcript(path)
    except (InputError, OSError):
        return None
    return None if transcript_mismatch(result, transcript) else transcript


def _turns_from_transcript(result: RunResult, transcript: Transcript) -> list[dict[str, Any]]:
    roles = {agent.id: agent.role for agent in transcript.header.agents}
    cells = _run_cells(result)
    rows: list[dict[str, Any]] = []
    round_number, turn, last_t, speaker = 0, 0, 0.0, None
    in_lecture = False  # a lesson's scripted lecture is no round of the class (as in the run's report)
    for entry in transcript.entries:
        if isinstance(entry, RoundLine):
            in_lecture = entry.lecture
            if not in_lecture:
                round_number, turn, last_t, speaker = round_number + 1, 0, entry.t, None
            continue
        if not isinstance(entry, EventLine) or in_lecture:
            continue
        event = entry.event
        if event.type == "agent_start":
            speaker = event.agent_id
        elif event.type == "done":
            latency, last_t = entry.t - last_t, entry.t
            if event.outcome is None or event.outcome.kind != "agent" or event.reply_dropped:
                continue  # a reply dropped whole took no turn
            turn += 1
            who = event.outcome.agent_id or speaker or ""
            usage = event.usage.agent
            rows.append({**cells, "round": max(round_number, 1), "turn": turn, "speaker": who,
                         "role": roles.get(who, "?"), "prompt_tokens": usage.prompt_tokens,
                         "completion_tokens": usage.completion_tokens, "cached_tokens": usage.cached_tokens,
                         "cost": usage.cost, "latency": round(latency, 4), "actions": event.total_actions,
                         "dropped": event.dropped_actions, "parse_recoveries": event.parse_recoveries,
                         "empty": not event.agent_had_content, "source": "transcript"})
    return rows


def _turns_from_summaries(result: RunResult) -> list[dict[str, Any]]:
    return [{**_run_cells(result), "round": summary.index + 1, "turn": number, "speaker": speaker,
             "role": role, "source": "summary"}
            for summary in result.rounds
            for number, (speaker, role) in enumerate(zip(summary.speakers, summary.roles, strict=False), 1)]


def turn_rows(out: Path, results: list[RunResult]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for result in results:
        transcript = read_run_transcript(out, result)
        found = _turns_from_transcript(result, transcript) if transcript else _turns_from_summaries(result)
        found = [row for row in found if row["round"] <= len(result.rounds)]  # only the rounds the run reports
        rows += found if result.judge is None else [row | _turn_verdict(result, row) for row in found]
    return rows


def to_csv(columns: list[str], rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as CSV text under a header of ``columns`` (a missing cell is empty), each cell made safe by
    :func:`safe_cell`: a text cell once per distinct text (a batch repeats its names), a number as it is."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    redact, cells = redactor(), dict[str, Any]()

    def line(row: Mapping[str, Any]) -> list[Any]:
        out: list[Any] = []
        for column in columns:  # the common cases inline: a table has tens of thousands of cells
            value: Any = row.get(column)
            kind = type(value)
            if kind is str:
                if (found := cells.get(value)) is None:
                    found = cells[value] = safe_cell(value, redact)
                out.append(found)
            elif kind is int or kind is float:
                out.append(value)
            elif value is None:
                out.append("")
            else:
                out.append(safe_cell(value, redact))  # a bool, anything else
        return out

    writer.writerows(map(line, rows))
    return buffer.getvalue()


def write_tables(out: Path, results: list[RunResult]) -> None:
    """``turns.csv`` and ``rounds.csv`` next to ``report.json`` (private files, written atomically)."""
    ordered = sorted(results, key=lambda r: (r.scenario, r.model, r.prompts, r.director, r.repeat, r.run_id))
    write_atomic(out / "rounds.csv", to_csv(ROUND_COLUMNS, round_rows(ordered)))
    write_atomic(out / "turns.csv", to_csv(turn_columns(ordered), turn_rows(out, ordered)))
