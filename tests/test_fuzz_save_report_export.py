"""Fuzz: model replies with lone surrogates, huge numbers and deep nesting go through save,
report and export; prompt templates made of the expensive operations stay bounded.

The replies: a judge's verdict (saved in a run result, read back, reported as report.json, report.md,
the CSV tables), a quiz grade (kept as the answer's event in a transcript, read back) and
the steps of ``maic lesson new`` (the lesson written, read back).  Nothing may raise, every file is strict
UTF-8 (and report.json strict JSON).  The templates: random compositions of ``**``, ``*``, ``+``, ``~``,
``%``, ``format``, ``replace``, ``indent``, ``join``, ``center`` on growing values; each renders within the
prompt limit or is refused by the sandbox, and what the render allocates stays small (tracemalloc), so
the bound is the sandbox's, not a timer's.  ``MAIC_FUZZ_EXAMPLES`` sets the number of examples.
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from maic_cli.authoring.generation import GenerationError, Initiator, LessonBrief, generate_lesson
from maic_cli.engine.events import QuizAnswerEvent
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.prompt_set import MAX_RENDERED_CHARS, PromptError, PromptSet, TemplateSource
from maic_cli.evaluation.judge import parse_verdict
from maic_cli.evaluation.metrics import RoundSummary
from maic_cli.evaluation.run_results import RunJudgement, RunResult, load_runs, save_run
from maic_cli.lessons.lesson import QuizScene
from maic_cli.lessons.player import answer_event
from maic_cli.lessons.quiz import grade
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM, ScriptedLLM
from maic_cli.report.reports import write_reports
from maic_cli.store.lesson_writer import write_lesson
from maic_cli.store.lessons import load_lesson
from maic_cli.store.transcript import TranscriptHeader, TranscriptWriter, read_transcript
from tests.helpers import agent
from tests.test_fuzz_model_steps import ROUND, SHORT, model_text, step_reply
from tests.test_fuzz_replies_end_to_end import FUZZ

HOSTILE = st.sampled_from(['"\\ud800"', '"half \\udfff emoji"', '"\\ud83d"', "1" * 5000, "-" + "9" * 4400,
                           "1e999", "[" * 3000 + "]" * 3000, '{"a":' * 500 + "1" + "}" * 500, "NaN", "Infinity"])


@st.composite
def hostile_reply(draw: st.DrawFn, base: dict[str, Any]) -> str:
    """``base`` as a model would write it, with one value (or the whole) swapped for a hostile JSON text."""
    text = draw(model_text(base))
    if draw(st.booleans()):
        return text
    raw = json.dumps(base)
    value = json.dumps(draw(st.sampled_from(sorted(_leaves(base)))) if _leaves(base) else "x")
    at = raw.find(value)
    return raw[:at] + draw(HOSTILE) + raw[at + len(value):] if at != -1 else draw(HOSTILE)


def _leaves(value: Any) -> set[str]:
    if isinstance(value, dict):
        return {leaf for item in value.values() for leaf in _leaves(item)}
    if isinstance(value, list):
        return {leaf for item in value for leaf in _leaves(item)}
    return {value} if isinstance(value, str) else set()


def _strict(constant: str) -> None:
    raise AssertionError(f"report.json is not strict JSON: {constant}")


VERDICT = {"turns": [{"turn": n, "on_topic": True, "correct": True, "in_role": True, "brief": True, "new": True,
                      "reason": f"reason {n}"} for n in (1, 2)], "answered": True, "answered_reason": "yes"}


@FUZZ
@given(reply=hostile_reply(VERDICT))
def test_any_judge_reply_is_saved_reported_and_read_back(tmp_path_factory: Any, reply: str) -> None:
    out: Path = tmp_path_factory.mktemp("batch")
    verdict = parse_verdict(reply, ROUND)
    result = RunResult(run_id="sky__m__r1", scenario="sky", scenario_path="sky.yaml", model="m", repeat=1,
                       status="complete", rounds=[RoundSummary(index=0, speakers=["teacher", "mia"])],
                       judge=RunJudgement(model="judge", rubric_version="v", rubric_fingerprint="f", rounds=[verdict]))
    save_run(out, result)
    loaded = load_runs(out)
    assert loaded[0].judge is not None and len(loaded[0].judge.rounds[0].turns) == 2
    write_reports(out, loaded, {"judge": reply[:80]})
    json.loads((out / "report.json").read_text(encoding="utf-8"), parse_constant=_strict)
    for name in ("report.md", "turns.csv", "rounds.csv"):
        (out / name).read_bytes().decode("utf-8")  # strict UTF-8: no surrogate made it into a file


QUIZ = QuizScene(type="quiz", id="check", questions=[SHORT])


@FUZZ
@given(reply=hostile_reply({"points": 2, "comment": "Good answer."}))
def test_any_grade_reply_is_kept_in_the_transcript_and_read_back(tmp_path_factory: Any, reply: str) -> None:
    graded = asyncio.run(grade(SHORT, "Light gives energy.", ScriptedLLM([reply])))
    event = answer_event(QUIZ, SHORT, graded)
    graded.model_dump_json().encode("utf-8")
    path: Path = tmp_path_factory.mktemp("t") / "class.jsonl"
    header = TranscriptHeader(model="m", produced_by="fuzz", agents=[agent("teacher", "teacher")],
                              config=TurnConfig(agent_ids=["teacher"]))
    writer = TranscriptWriter(path, header)
    writer.event(event)
    writer.close()
    kept = [e for _, e in read_transcript(path).events() if isinstance(e, QuizAnswerEvent)]
    assert len(kept) == 1 and kept[0].points == graded.points and kept[0].comment == graded.comment


@FUZZ
@given(data=st.data())
def test_any_generation_replies_write_a_lesson_that_reads_back(tmp_path_factory: Any,
                                                                data: st.DataObject) -> None:
    def respond(request: LLMRequest) -> str:
        assert request.response_schema is not None
        return data.draw(hostile_reply(step_reply(request.response_schema)))

    brief = LessonBrief(topic="photosynthesis", scenes=3, initiators=(Initiator("curious_student", "Mia"),))
    try:
        result = asyncio.run(generate_lesson(brief, FunctionLLM(respond)))
    except GenerationError as exc:
        assert "\n" not in str(exc)
        return
    path: Path = tmp_path_factory.mktemp("l") / "lesson.yaml"
    write_lesson(path, result.lesson, ["a header"], force=True)
    assert load_lesson(path) == result.lesson


# -- templates made of the expensive operations --------------------------------------------------------------

SEEDS = st.sampled_from(["10", "2", "64", "'x'", "'ab\\n'", "['x']", "'%09d'", "'{:>9}'", "1000"])
BIG = st.sampled_from(["64", "99999", "999999999", "4096", "'x' * 1000", "200000"])


@st.composite
def expression(draw: st.DrawFn, depth: int = 0) -> str:
    if depth >= 4 or draw(st.integers(0, 3)) == 0:
        return draw(SEEDS)
    inner = draw(expression(depth + 1))
    big = draw(BIG)
    form = draw(st.sampled_from([
        "({a}) ** {b}", "({a}) * {b}", "({a}) * ({a})", "({a}) + ({a})", "({a}) ~ ({a})", "({a}) % {b}",
        "({a}) | format({b})", "'{{:>{b}}}'.format({a})", "({a}) | string | replace('', ({a}) | string)",
        "({a}) | string | indent(width={b})", "[{a}] * {b} | join(({a}) | string)", "({a}) | string | center({b})",
        "(({a}) | string).ljust({b})", "'%*d' % ({b}, 1)"]))
    return form.format(a=inner, b=big)


@FUZZ
@given(expressions=st.lists(expression(), min_size=1, max_size=3))
def test_any_template_of_expensive_operations_is_bounded_by_the_sandbox(expressions: list[str]) -> None:
    text = "".join(f"{{% set v{n} = {e} %}}{{{{ v{n} }}}}" for n, e in enumerate(expressions))
    prompts = PromptSet.builtin().with_overrides({"t.j2": TemplateSource(text, "prompts/t.j2")}, "fuzz")
    tracemalloc.start()
    try:
        try:
            rendered = prompts.render("t.j2", {})
        except PromptError as exc:
            assert str(exc).startswith("prompts/t.j2") and "\n" not in str(exc)
        else:
            assert len(rendered) <= MAX_RENDERED_CHARS
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"{peak:,} bytes for {text!r}"


# -- the new readers of untrusted names and text ------------------------------------------------------------

@FUZZ
@given(stem=st.text(st.characters(exclude_categories=()), max_size=300))
def test_any_file_name_gives_a_plain_scenario_id(stem: str) -> None:
    from maic_cli.evaluation.run_results import plain_run_id
    from maic_cli.evaluation.scenarios import MAX_ID, id_from_file_name

    found = id_from_file_name(stem)
    assert plain_run_id(found) and len(found) <= MAX_ID


@FUZZ
@given(text=st.text(st.characters(exclude_categories=()), max_size=200)
       | st.sampled_from(["<script>x</script>", "[a](javascript:x)", "[a]: http://x", "`x`", "\\`", "a]\n(b)"]))
def test_any_text_is_inert_in_report_md(text: str) -> None:
    from maic_cli.untrusted import markdown_text

    shown = markdown_text(text)
    shown.encode("utf-8")
    assert "<" not in shown and ">" not in shown and "\n" not in shown
    assert "](" not in shown.replace("\\](", "") and "]:" not in shown.replace("\\]:", "")
    assert "`" not in shown.replace("\\`", "")
