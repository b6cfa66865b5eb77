"""The pedagogy rubric (``--rubric pedagogy``): the BEA 2025 tutor dimensions, three labels each,
teacher-side turns only — the judge's request and reply, ``maic run``/``maic report --judge``, the
reports' rates and label counts, and ``maic judge calibrate --rubric pedagogy``."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.prompt_set import PromptSet
from maic_cli.errors import InputError
from maic_cli.evaluation.calibration import read_labels
from maic_cli.evaluation.judge import RoundToJudge, TurnToJudge, judge_round, parse_verdict, rubric_identity
from maic_cli.evaluation.judge_rubrics import DEFAULT, PEDAGOGY, normalise_label
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.testing.openai_server import LoopbackOpenAIServer
from tests.test_judge import read_csv
from tests.test_run import GOOD_ROUND, QA_SCENARIO, run, script, write

runner = CliRunner()
ROOT = Path(__file__).parent.parent
FIXTURE = ROOT / "examples" / "calibration" / "pedagogy.jsonl"
TEACHER = TurnToJudge("teacher", "Ms. Rivera", "teacher", "Warm.", "Close! What is 3 groups of 4?")
STUDENT = TurnToJudge("curious_student", "Sam", "student", "Curious.", "Is it 12?")
ASSISTANT = TurnToJudge("assistant", "Kai", "assistant", "Helpful.", "Try counting in fours.")
ROUND = RoundToJudge(index=0, learner="3 x 4 is 7", turns=(TEACHER, STUDENT, ASSISTANT), learner_name="Ana")
GOOD = {"mistake_identification": "yes", "mistake_location": "to some extent", "revealing_answer": "no",
        "providing_guidance": "yes", "actionability": "yes", "coherence": "yes", "tutor_tone": "encouraging",
        "humanlikeness": "yes"}  # 7 good labels (the location is only "to some extent")
TELLS = {**GOOD, "mistake_location": "no", "revealing_answer": "yes", "providing_guidance": "to some extent",
         "tutor_tone": "neutral"}  # 4 good labels


def labelled(*turns: tuple[int, dict[str, Any]]) -> str:
    return json.dumps({"turns": [{"turn": n, "reason": f"turn {n}", **labels} for n, labels in turns]})


# -- the request and the reply ------------------------------------------------------------------------
def test_only_teacher_side_turns_are_asked_for_with_their_labels_in_the_schema() -> None:
    judge = ScriptedLLM([labelled((1, GOOD), (3, TELLS))])
    result = asyncio.run(judge_round(judge, PromptSet.builtin(), ROUND, rubric=PEDAGOGY))
    request = judge.calls[0]
    turns = (request.response_schema or {})["properties"]["turns"]
    assert turns["minItems"] == turns["maxItems"] == 2
    assert turns["items"]["properties"]["turn"] == {"type": "integer", "enum": [1, 3]}
    assert turns["items"]["properties"]["tutor_tone"]["enum"] == ["encouraging", "neutral", "offensive"]
    assert turns["items"]["properties"]["revealing_answer"]["enum"] == ["yes", "to some extent", "no"]
    assert "answered" not in (request.response_schema or {})["properties"]
    assert request.facts is not None and request.facts.spoken == ("teacher", "assistant")
    user = request.messages[1]["content"]
    assert "Turn 2: Sam (student), 9 characters, context only:" in user and "Label turns 1, 3." in user
    assert "Turn 1: Ms. Rivera (teacher), 29 characters, judge this turn:" in user
    assert "mistake_identification" in request.messages[0]["content"]
    assert result.status == "ok" and result.answered is None
    assert [(t.turn, t.speaker, t.labels) for t in result.turns] == [(1, "teacher", GOOD), (3, "assistant", TELLS)]
    assert result.turns[0].score is None  # the default's 0-5 score is not this rubric's


def test_labels_are_read_leniently_and_by_turn_number() -> None:
    loose = {**{k: v.upper().replace(" ", "_") for k, v in GOOD.items()}, "revealing_answer": False}
    reply = json.dumps({"turns": [{"turn": 3, **TELLS}, {"turn": 1, **loose}]})
    result = parse_verdict(reply, ROUND, PEDAGOGY)
    assert result.status == "ok" and [t.labels for t in result.turns] == [GOOD, TELLS]
    assert normalise_label(" To-Some  extent. ") == "to some extent" and normalise_label(True) == "yes"
    assert normalise_label(["yes"]) is None and normalise_label("x" * 41) is None


@pytest.mark.parametrize("hostile", [
    {**GOOD, "tutor_tone": "sarcastic"},  # an unknown label
    {k: v for k, v in GOOD.items() if k != "humanlikeness"},  # a dimension missing
    {**GOOD, "coherence": "yes\ud800"},  # a lone surrogate
    {**GOOD, "actionability": {"yes": True}},  # not a label at all
    {**GOOD, "mistake_location": "yes" * 100},  # far too long
])
def test_a_hostile_turn_verdict_is_missing_never_a_crash(hostile: dict[str, Any]) -> None:
    reply = json.dumps({"turns": [{"turn": 1, "reason": "r\ud800\x1b[2J", **hostile}, {"turn": 3, **GOOD}]})
    result = parse_verdict(reply, ROUND, PEDAGOGY)
    assert result.status == "partial" and result.error == "1 of 2 verdicts unusable"
    assert [t.usable for t in result.turns] == [False, True] and result.turns[0].labels == {}
    json.dumps(result.model_dump())  # writable as it is


def test_an_incomplete_verdict_is_asked_again_then_kept_missing() -> None:
    half = labelled((1, GOOD))
    judge = ScriptedLLM([half, "no JSON at all"])
    result = asyncio.run(judge_round(judge, PromptSet.builtin(), ROUND, rubric=PEDAGOGY))
    assert len(judge.calls) == 2 and result.status == "partial" and result.attempts == 2
    assert [t.usable for t in result.turns] == [True, False]


def test_a_round_with_only_students_needs_no_call() -> None:
    judge = ScriptedLLM([])
    only = RoundToJudge(index=1, learner="Hi", turns=(STUDENT,))
    result = asyncio.run(judge_round(judge, PromptSet.builtin(), only, rubric=PEDAGOGY))
    assert judge.calls == [] and result.status == "no_turns" and result.answered is None and result.turns == []


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=25), inner,
                                                                                 max_size=10), max_leaves=30)


@settings(deadline=None, max_examples=150)
@given(st.lists(st.dictionaries(st.sampled_from([*PEDAGOGY.names, "turn", "reason"]),
                                st.sampled_from(["yes", "No", "to_some_extent", "encouraging", "offensive", "?"])
                                | st.integers(0, 4) | _JSON, max_size=10), max_size=4) | _JSON)
def test_any_reply_gives_a_verdict_with_allowed_labels_only(turns: Any) -> None:
    result = parse_verdict(json.dumps({"turns": turns}), ROUND, PEDAGOGY)
    assert len(result.turns) == 2 and result.status in {"ok", "partial", "missing"}
    for turn in result.turns:
        assert turn.labels == {} or all(turn.labels[c.name] in c.labels for c in PEDAGOGY.criteria)


def test_each_rubric_is_fingerprinted_on_its_own_templates() -> None:
    prompts = PromptSet.builtin()
    digest = hashlib.sha256()
    for name in ("judge/round.j2", "judge/rubric.j2"):  # the default rubric's two templates
        digest.update(f"{name}\0{prompts.source(name).text}\0".encode())
    assert rubric_identity(prompts, DEFAULT).fingerprint == digest.hexdigest()[:12]
    pedagogy = rubric_identity(prompts, PEDAGOGY)
    assert pedagogy.version == "maic-pedagogy-1" and pedagogy.fingerprint != digest.hexdigest()[:12]


# -- maic run --judge --rubric pedagogy, maic report --judge --rubric pedagogy ---------------------------------
TWO_ROUNDS = QA_SCENARIO.replace("  - Why is the sky blue?\n", "  - Why is the sky blue?\n  - And sunsets?\n") \
    .replace("  end_reasons: [end, cue_user]\n", "")
# each run: round 1 labelled GOOD (an extra item for the student turn is ignored); round 2 first a hostile
# verdict (an unknown tone, a dimension missing), asked again, then TELLS
JUDGE = (json.dumps({"turns": [{"turn": 1, "reason": "hints", **GOOD}, {"turn": 2, **GOOD}]}),
         labelled((1, {**{k: v for k, v in GOOD.items() if k != "coherence"}, "tutor_tone": "rude\ud800"})),
         labelled((1, TELLS)))


def check_pedagogy_report(out: Path, judge: str) -> None:
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    top = report["judge"]
    assert top["rubric"] == "pedagogy" and top["rubrics"] == ["pedagogy"] and top["models"] == [judge]
    assert top["rubric_versions"] == ["maic-pedagogy-1"] and top["runs_judged"] == 2
    assert top["criteria"]["revealing_answer"] == "revealing the answer (no)"  # its rate is of "no"
    assert top["criterion_labels"]["revealing_answer"] == {"labels": ["yes", "to some extent", "no"], "good": "no"}
    overall = report["overall"]["judge"]
    # 2 runs x 2 rounds, one teacher turn each; the students' turns are not judged, none missing
    assert (overall["turns_judged"], overall["turns_missing"], overall["rounds_judged"],
            overall["rounds_missing"]) == (4, 0, 4, 0)
    rates = overall["rates"]
    assert set(rates) == set(PEDAGOGY.names)
    assert (rates["mistake_identification"]["successes"], rates["mistake_identification"]["trials"]) == (4, 4)
    assert (rates["mistake_location"]["successes"], rates["revealing_answer"]["successes"],
            rates["tutor_tone"]["successes"], rates["providing_guidance"]["successes"]) == (0, 2, 2, 2)
    assert rates["revealing_answer"]["value"] == 0.5 and rates["mistake_location"]["value"] == 0.0
    assert overall["labels"]["mistake_location"] == {"yes": 0, "to some extent": 2, "no": 2}
    assert overall["labels"]["tutor_tone"] == {"encouraging": 2, "neutral": 2, "offensive": 0}
    assert overall["means"]["pedagogy_score"]["value"] == 5.5  # (7 + 4) / 2 in every run
    assert overall["usage"]["calls"] == 6  # 3 per run: round 2 was asked twice
    run_entry = report["runs"][0]["judge"]
    assert run_entry["rubric"] == "pedagogy" and run_entry["rounds"][0]["turns"][0]["labels"] == GOOD
    assert len(run_entry["rounds"][0]["turns"]) == 1  # the student's turn is not judged
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "rubric pedagogy maic-pedagogy-1" in markdown
    assert "| mistake location (good: yes) | yes: 0 | to some extent: 2 | no: 2 |" in markdown
    # mistake id., location, revealing (good: no), guidance, actionability, coherence, tone, humanlike, score, calls
    assert ("| all runs | 2 | 4 | 0 | 0 | 1 [0.5101, 1] | 0 [0, 0.4899] | 0.5 [0.15, 0.85] | 0.5 [0.15, 0.85] | "
            "1 [0.5101, 1] | 1 [0.5101, 1] | 0.5 [0.15, 0.85] | 1 [0.5101, 1] | 5.5 [5.5, 5.5] | 6 |") in markdown
    turns = read_csv(out / "turns.csv")
    assert [(t["speaker"], t["judge_mistake_location"], t["judge_tutor_tone"], t["judge_score"]) for t in turns[:4]] \
        == [("teacher", "to some extent", "encouraging", "7"), ("curious_student", "", "", ""),
            ("teacher", "no", "neutral", "4"), ("curious_student", "", "", "")]
    assert "judge_on_topic" in turns[0] and turns[0]["judge_on_topic"] == ""
    assert "data-chart=\"judge_model\"" in (out / "report.html").read_text(encoding="utf-8")


def test_run_judges_teacher_turns_on_the_pedagogy_rubric(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", TWO_ROUNDS)
    out = tmp_path / "out"
    judge = script(tmp_path, *JUDGE, name="judge.json")
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND, *GOOD_ROUND), "--repeat", "2",
                 "--out", str(out), "--judge", judge, "--rubric", "pedagogy")
    assert result.exit_code == 0, result.output
    check_pedagogy_report(out, judge)


def test_report_judges_a_finished_batch_on_the_pedagogy_rubric(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", TWO_ROUNDS)
    out = tmp_path / "out"
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND, *GOOD_ROUND), "--repeat", "2",
                 "--out", str(out))
    assert result.exit_code == 0, result.output
    judge = script(tmp_path, *JUDGE, name="judge.json")
    judged = runner.invoke(app, ["report", str(out), "--judge", judge, "--rubric", "pedagogy"])
    assert judged.exit_code == 0, judged.output
    check_pedagogy_report(out, judge)
    # the same judge on the default rubric is another judging: every run is judged again
    again = runner.invoke(app, ["report", str(out), "--judge", judge])
    assert again.exit_code == 0 and "Judging 2 runs" in again.stderr
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["judge"].get("rubric") is None


def test_a_loopback_judge_gets_the_label_schema_through_litellm(tmp_path: Path,
                                                               loopback_server: LoopbackOpenAIServer) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    assert run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out)).exit_code == 0
    loopback_server.enqueue(labelled((1, {**TELLS, "tutor_tone": "Offensive"}))[:-2])  # cut off: repaired
    result = runner.invoke(app, ["report", str(out), "--judge", "openai/judge-model", "--rubric", "pedagogy",
                                 "--judge-api-base", loopback_server.base_url])
    assert result.exit_code == 0, result.output
    request = loopback_server.requests[0]
    assert request["stream"] is True and "mistake_identification" in json.dumps(request["messages"])
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    entry = report["runs"][0]["judge"]["rounds"][0]
    assert entry["status"] == "ok" and entry["repaired"] is True
    assert entry["turns"][0]["labels"]["tutor_tone"] == "offensive"
    assert report["overall"]["judge"]["labels"]["tutor_tone"] == {"encouraging": 0, "neutral": 0, "offensive": 1}


def test_runs_judged_on_two_rubrics_are_reported_on_the_most_used_one_with_a_warning(tmp_path: Path) -> None:
    from maic_cli.evaluation.run_results import load_runs
    from maic_cli.report.reports import build_report, report_markdown

    scenario = write(tmp_path / "sky.yaml", TWO_ROUNDS)
    out = tmp_path / "out"
    result = run(tmp_path, str(scenario), "--model", script(tmp_path, *GOOD_ROUND, *GOOD_ROUND), "--repeat", "3",
                 "--out", str(out), "--judge", script(tmp_path, *JUDGE, name="judge.json"), "--rubric", "pedagogy")
    assert result.exit_code == 0, result.output
    results = load_runs(out)
    other = results[0].judge
    assert other is not None
    other.rubric = "default"  # as if judged on the default rubric (its verdicts hold no yes/no fields)
    report = build_report(results, {})
    assert report.judge is not None and report.overall.judge is not None
    assert report.judge.rubric == "pedagogy" and report.judge.rubrics == ["default", "pedagogy"]
    overall = report.overall.judge
    assert (overall.runs_judged, overall.runs_not_judged, overall.turns_judged) == (2, 1, 4)
    assert "**Warning:** runs were judged by different judges or rubrics" in report_markdown(report)
    other.rubric = "pedagogy"
    for judged in results[1:]:
        assert judged.judge is not None
        judged.judge.rubric = "default"  # then the default is the most used: reported on it, and warned
    report = build_report(results, {})
    assert report.judge is not None and report.overall.judge is not None
    assert report.judge.rubric is None and report.judge.rubrics == ["default", "pedagogy"]
    assert report.overall.judge.turns_judged == 0  # pedagogy verdicts are not yes/no ones
    assert "**Warning:** runs were judged by different judges or rubrics" in report_markdown(report)


def test_an_unknown_rubric_or_one_without_a_judge_is_refused(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    model = script(tmp_path, *GOOD_ROUND)
    unknown = run(tmp_path, str(scenario), "--model", model, "--out", str(tmp_path / "a"), "--judge", model,
                  "--rubric", "strict")
    assert unknown.exit_code == 2 and "--rubric: unknown rubric 'strict' (known: default, pedagogy)" in unknown.stderr
    lonely = run(tmp_path, str(scenario), "--model", model, "--out", str(tmp_path / "b"), "--rubric", "pedagogy")
    assert lonely.exit_code == 2 and "--rubric goes with --judge" in lonely.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


# -- maic judge calibrate --rubric pedagogy ---------------------------------------------------------------
def test_calibrate_on_the_pedagogy_rubric_reports_agreement_per_dimension(tmp_path: Path) -> None:
    items = read_labels(FIXTURE, PEDAGOGY)
    assert len(items) == 8 and items[1].labels["revealing_answer"] == "yes"
    # the judge's mistake identification: yes except on p4 and p7; every other dimension as in GOOD;
    # p8's replies are unusable (asked twice), so it is missing
    said = ["yes", "yes", "yes", "no", "yes", "yes", "no"]
    replies = [labelled((1, {**GOOD, "mistake_identification": label})) for label in said]
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps([*replies, "no verdict", labelled((1, {"tutor_tone": "kind"}))]), encoding="utf-8")
    out = tmp_path / "calibration.json"
    result = runner.invoke(app, ["judge", "calibrate", str(FIXTURE), "--judge", f"scripted:{judge}",
                                 "--rubric", "pedagogy", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "mistake identification" in result.output and "tutor tone" in result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["rubric_name"] == "pedagogy" and report["rubric"] == "maic-pedagogy-1" and report["turns"] == 8
    assert set(report["dimensions"]) == set(PEDAGOGY.names) and report["judge_calls"] == 9
    mistake = report["dimensions"]["mistake_identification"]
    # person p1-p7: yes yes yes no yes yes yes; judge: yes yes yes no yes yes no → 6 of 7 agree;
    # p_e = (6*5 + 1*2) / 49, so κ = (42 - 32) / (49 - 32) = 10/17
    assert (mistake["items"], mistake["missing"], mistake["agree"]) == (7, 1, 6)
    assert mistake["person"] == {"no": 1, "yes": 6} and mistake["judge"] == {"no": 2, "yes": 5}
    assert mistake["kappa"]["value"] == pytest.approx(10 / 17, abs=1e-4)
    assert mistake["accuracy"]["value"] == pytest.approx(6 / 7, abs=1e-4)
    # macro-F1: yes tp 5 fp 0 fn 1 → 10/11; no tp 1 fp 1 fn 0 → 2/3
    assert mistake["macro_f1"]["value"] == pytest.approx((10 / 11 + 2 / 3) / 2, abs=1e-4)
    tone = report["dimensions"]["tutor_tone"]  # the judge always says encouraging: 4 of 7 agree, κ 0
    assert tone["person"] == {"encouraging": 4, "neutral": 2, "offensive": 1} and tone["agree"] == 4
    assert tone["kappa"]["value"] == 0.0
    assert tone["macro_f1"]["value"] == pytest.approx((8 / 11) / 3, abs=1e-4)  # neutral and offensive: 0
    revealing = report["dimensions"]["revealing_answer"]  # always "no": p1-p7 hold 4 noes
    assert revealing["person"] == {"no": 4, "to some extent": 1, "yes": 2} and revealing["agree"] == 4


@pytest.mark.parametrize(("line", "problem"), [
    ('{"id": "a", "text": "x", "labels": {"on_topic": "yes"}}',
     r"labels\.jsonl:1: labels: .*unknown criterion 'on_topic' \(the pedagogy rubric's: mistake_identification"),
    ('{"id": "a", "text": "x", "labels": {"tutor_tone": "yes"}}',
     r"labels\.jsonl:1: labels\.tutor_tone: 'yes' is not one of encouraging, neutral, offensive"),
    ('{"id": "a", "text": "x", "labels": {"coherence": "maybe\\ud800"}}',
     r"labels\.jsonl:1: labels\.coherence: 'maybe.?' is not one of yes, to some extent, no"),
    ('{"id": "a", "text": "x", "role": "student", "labels": {"coherence": "yes"}}',
     r"labels\.jsonl:1: role: the pedagogy rubric judges only assistant and teacher turns, not a student's"),
])
def test_a_bad_pedagogy_labels_file_is_refused_with_its_line(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=problem):
        read_labels(path, PEDAGOGY)
    result = runner.invoke(app, ["judge", "calibrate", str(path), "--judge", "demo", "--rubric", "pedagogy"])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_three_level_labels_are_accepted_in_any_spelling(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "x", "labels": {"coherence": "To_Some_Extent",
                                                                   "tutor_tone": "Encouraging"}}) + "\n")
    assert read_labels(path, PEDAGOGY)[0].labels == {"coherence": "to some extent", "tutor_tone": "encouraging"}
