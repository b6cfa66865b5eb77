"""report.html (report/report_html.py) and ``maic replay --export x.html``: built, then opened in a real browser.

The page tests read the HTML; the browser tests open it in headless Chromium
(maic_cli/testing/browser.py, the Chrome DevTools Protocol over 127.0.0.1) and
check that it renders with no console error, no exception and no request but the
file itself, that every chart is an SVG with content, and that its screenshot is
not blank.  They are skipped, saying why, where Chromium is not installed or cannot
start headless.
"""

from __future__ import annotations

import io
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.evaluation.metrics import RoundSummary
from maic_cli.evaluation.run_results import RunResult
from maic_cli.report.batch_report import BatchReport, GroupJudge, JudgeOverview, MetaValue
from maic_cli.report.report_clean import cleaned_report
from maic_cli.report.report_html import report_html
from maic_cli.report.reports import build_report
from maic_cli.store.transcript import LearnerLine, read_transcript
from maic_cli.testing.browser import PageVisit, find_chromium, open_page
from tests.helpers import decision, modules_imported_by, reply
from tests.test_run import QA_SCENARIO, script, write

ROOT = Path(__file__).parent.parent
runner = CliRunner()
HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script> is $x^2$'
# What the browser tests read of a page: its charts with content, its tables, and any trace of a script.
INSPECT = """JSON.stringify({
  charts: [...document.querySelectorAll('figure.chart')].map(f => {
    const svg = f.querySelector('svg'); const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
    return {name: f.dataset.chart, marks: svg ? svg.querySelectorAll('path, rect, use, text').length : 0,
            width: box.width, height: box.height}; }),
  summaries: document.querySelectorAll('table.summary').length,
  scripts: document.scripts.length, handlers: document.querySelectorAll('[onerror], [onload]').length,
  pwned: window.pwned || null, text: document.body.innerText})"""


def round_summary(index: int, speakers: list[str], reason: str = "cue_user",
                  latencies: list[float] | None = None) -> RoundSummary:
    return RoundSummary(index=index, speakers=speakers, roles=["teacher"] * len(speakers), reason=reason,  # type: ignore[arg-type]
                        agent_turns=len(speakers), turn_latencies=latencies or [0.2] * len(speakers))


def run_result(model: str, repeat: int, rounds: list[RoundSummary], status: str = "complete") -> RunResult:
    return RunResult(run_id=f"sky__{repeat}__{len(model)}", scenario="sky", scenario_path="sky.yaml", model=model,
                     repeat=repeat, status=status, rounds=rounds)


def page_for(results: list[RunResult], meta: dict[str, MetaValue] | None = None) -> tuple[BatchReport, str]:
    built = build_report(results, meta or {"maic": "test"})
    report = cleaned_report(built)
    return report, report_html(report, results)


def charts_in(page: str) -> list[str]:
    return re.findall(r'<figure class="chart" data-chart="([^"]+)"', page)


def missing_in(page: str) -> list[str]:
    return re.findall(r'data-missing="([^"]+)"', page)


def two_models() -> list[RunResult]:
    return [run_result(model, k, [round_summary(0, ["teacher", "curious_student"], latencies=[0.1 * k, 0.3]),
                                  round_summary(1, ["teacher"], "end" if model == "a" else "max_turns")])
            for model in ("a", "b") for k in (1, 2)]


# -- the page ---------------------------------------------------------------------------------------------------


def test_the_page_has_every_chart_a_two_model_batch_calls_for_and_loads_nothing() -> None:
    _, page = page_for(two_models())
    assert charts_in(page) == ["speakers", "end_reasons", "routing_model", "latency"]
    assert missing_in(page) == []
    assert page.count("<svg") == 4 and '<table class="summary">' in page
    assert not re.search(r"<(script|link|iframe|object)\b|\b(src|href)=(?!\"#)", page)  # nothing to load (but #ids)
    assert "default-src 'none'" in page  # and the page's policy would refuse it anyway
    assert "<?xml" not in page and "<!DOCTYPE svg" not in page  # the SVGs are inline elements
    namespaces = ("http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink")
    assert re.findall(r"https?://[^\s\"'<>]*", page) and all(  # no address but the SVG namespaces
        url in namespaces for url in re.findall(r"https?://[^\s\"'<>]*", page)), \
        sorted(set(re.findall(r"https?://[^\s\"'<>]*", page)) - set(namespaces))


def test_names_from_files_are_escaped_and_a_dollar_is_not_mathtext() -> None:
    results = [run_result(HOSTILE, k, [round_summary(0, [HOSTILE, "teacher"])]) for k in (1, 2)]
    _, page = page_for(results, {"scenarios": HOSTILE})
    assert "<script" not in page and "<img" not in page
    assert "&lt;img src=x onerror=" in page  # shown as text, in the tables and the meta line
    svg_text = "".join(re.findall(r"<text[^>]*>(.*?)</text>", page, re.S))
    assert "$x^2$" in svg_text  # matplotlib drew the dollars as they are (mathtext would have eaten them)


def test_a_batch_with_no_rounds_says_what_it_cannot_chart() -> None:
    _, page = page_for([run_result("a", 1, [], status="error")])
    assert missing_in(page) == ["speakers", "end_reasons", "latency"]
    assert charts_in(page) == ["routing_model"]  # the pass rate is all there is to show
    assert "no agent turns in this batch" in page and "none recorded" in page


def test_one_run_without_latencies_has_no_latency_chart_and_no_intervals() -> None:
    results = [run_result("a", 1, [round_summary(0, ["teacher"], latencies=[])])]
    results[0].rounds[0].turn_latencies.clear()
    _, page = page_for(results)
    assert charts_in(page) == ["speakers", "end_reasons", "routing_model"]
    assert missing_in(page) == ["latency"]
    assert '<span class="ci">' not in page  # one run: a value, no interval


JUDGE_RATE = {"value": 0.8, "successes": 8, "trials": 10, "low": 0.49, "high": 0.94}
JUDGED = {  # the judge's section of a group in report.json (report/report_judge.py)
    "runs_judged": 2, "turns_judged": 10, "rates": {"on_topic": JUDGE_RATE, "in_role": JUDGE_RATE,
                                                    "answered": {**JUDGE_RATE, "trials": 4}},
    "means": {"turn_score": {"value": 3.9, "runs": 2, "low": 3.5, "high": 4.2}},
    "usage": {"calls": 4, "prompt": 900, "completion": 80, "cost": 0.0}}
JUDGE_OVERVIEW = {"criteria": {"on_topic": "on topic", "in_role": "in role and persona"},
                  "labels": {"judge_answered": "judge: learner answered (rounds)",
                             "judge_turn_score": "judge: turn score (0–5)"}}


@pytest.mark.parametrize(("section", "shares", "means"), [
    (JUDGED, ["on topic", "in role and persona", "learner answered (rounds)"], ["turn score (0–5)"]),
])
def test_judge_scores_are_charted_when_the_report_has_them(section: dict[str, Any], shares: list[str],
                                                           means: list[str]) -> None:
    results = two_models()
    report, page = page_for(results, {})
    assert "judge_model" not in charts_in(page)
    for group in report.by_model.values():
        group.judge = GroupJudge.model_validate(section)
    report.judge = JudgeOverview.model_validate(JUDGE_OVERVIEW)
    page = report_html(report, results)
    assert charts_in(page) == ["speakers", "end_reasons", "routing_model", "judge_model", "latency"]
    judge_svg = page.split('data-chart="judge_model"')[1].split("</svg>")[0]
    labels = re.findall(r"<text[^>]*>(.*?)</text>", judge_svg, re.S)
    assert [label for label in labels if label in shares] == shares[::-1]  # the rates, top to bottom
    assert [label for label in labels if label in means] == means  # the side panel's title
    assert not {"calls", "prompt", "usage", "runs judged"} & set(labels)  # counts are not scores


def test_a_big_batch_draws_its_boxes_from_every_turn_but_at_most_300_dots_a_row() -> None:
    latencies = [i / 1000 for i in range(5000)]
    results = [run_result("a", k, [round_summary(0, ["teacher"] * 2500, latencies=latencies[k::2])]) for k in (0, 1)]
    _, page = page_for(results)
    latency_svg = page.split('data-chart="latency"')[1].split("</svg>")[0]
    scatter = latency_svg.split('id="PathCollection_1"')[1].split("</g>")[0]  # the dots (the boxes are drawn apart)
    assert 150 <= scatter.count("<use ") <= 300  # each dot a <use> of one marker


def test_without_matplotlib_the_page_keeps_its_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    _, page = page_for(two_models())
    assert charts_in(page) == [] and '<table class="summary">' in page
    assert '<p class="none" data-missing="charts">No charts here' in page  # where the charts would be: how to
    assert "<code>pip install 'maic-cli[report]'</code>" in page  # get them


def test_the_page_is_the_same_for_the_same_report() -> None:
    report, page = page_for(two_models())
    assert report_html(report, two_models()) == page


def test_maic_help_does_not_import_matplotlib() -> None:
    for argv in (["--help"], ["run", "--help"], ["report", "--help"]):
        assert not any(m == "matplotlib" or m.startswith("matplotlib.") for m in modules_imported_by(argv)), argv


# -- maic run and maic report write it -----------------------------------------------------------------------

ROUND = (decision("teacher"), reply("Scattering."), decision("curious_student"), reply("Why blue?"), decision("USER"))


def small_batch(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO.replace("max_agents: 2", "max_agents: 3"))
    models = [script(tmp_path, *ROUND, name=f"{name}.json") for name in ("brisk", "slow")]
    result = runner.invoke(app, ["run", str(scenario), "--model", models[0], "--model", models[1],
                                 "--repeat", "2", "--out", str(out), "--plain"])
    assert result.exit_code == 0, result.output
    return out


def test_maic_run_writes_report_html_and_maic_report_rebuilds_it(tmp_path: Path) -> None:
    out = small_batch(tmp_path)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert charts_in(page) == ["speakers", "end_reasons", "routing_model", "latency"]
    assert "scripted:brisk.json" in page and "scripted:slow.json" in page  # chart labels: the file names
    (out / "report.html").unlink()
    result = runner.invoke(app, ["report", str(out)])
    assert result.exit_code == 0, result.output
    assert charts_in((out / "report.html").read_text(encoding="utf-8")) == charts_in(page)


# -- in a real browser ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Skip (saying why) where no Chromium can open a page: not installed, or unable to start headless here."""
    if find_chromium() is None:
        pytest.skip("Chromium is not installed, so the pages are not opened in a browser "
                    "(Debian: apt-get install chromium; .ci/run installs it when it runs as root)")
    probe = tmp_path_factory.mktemp("probe") / "probe.html"
    probe.write_text("<!doctype html><title>probe</title><p>ok</p>", encoding="utf-8")
    try:
        open_page(probe, seconds=60)
    except (OSError, RuntimeError, TimeoutError) as exc:
        pytest.skip(f"Chromium is installed but cannot open a page headless here: {exc}")


def assert_rendered_cleanly(visit: PageVisit, page: Path) -> None:
    assert visit.errors == []
    assert visit.requests == [page.resolve().as_uri()]  # nothing but the page itself
    import matplotlib.image

    pixels = matplotlib.image.imread(io.BytesIO(visit.screenshot), format="png")
    height, width = pixels.shape[:2]
    assert width >= 800 and height >= 400 and (width, height) == (visit.size[0], min(visit.size[1], 20000))
    assert float(pixels.std()) > 0.05  # not one flat colour


@pytest.mark.usefixtures("chromium")
def test_the_browser_check_sees_errors_and_outside_requests(tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text('<!doctype html><title>t</title><img src="http://example.invalid/x.png">'
                    '<script>console.error("said"); throw new Error("boom")</script>', encoding="utf-8")
    visit = open_page(page)
    assert any("boom" in e for e in visit.errors) and any("said" in e for e in visit.errors)
    assert any(e.startswith("failed load") for e in visit.errors)  # the browser reaches no host
    assert "http://example.invalid/x.png" in visit.requests


@pytest.mark.usefixtures("chromium")
def test_report_html_renders_in_chromium(tmp_path: Path) -> None:
    out = small_batch(tmp_path)
    visit = open_page(out / "report.html", INSPECT)
    assert_rendered_cleanly(visit, out / "report.html")
    seen = json.loads(visit.value)
    assert [c["name"] for c in seen["charts"]] == ["speakers", "end_reasons", "routing_model", "latency"]
    assert all(c["marks"] > 10 and c["width"] > 300 and c["height"] > 100 for c in seen["charts"]), seen["charts"]
    assert seen["summaries"] == 2 and seen["scripts"] == 0
    chart = 'figure[data-chart="end_reasons"]'  # the page down to that chart, as for the README picture
    top = open_page(out / "report.html", f"document.querySelector('{chart}').getBoundingClientRect().bottom",
                    cut_after=chart)
    assert top.errors == [] and top.size == visit.size
    import matplotlib.image

    height = matplotlib.image.imread(io.BytesIO(top.screenshot), format="png").shape[0]
    assert 400 < height == math.ceil(top.value) + 16 < visit.size[1]


@pytest.mark.usefixtures("chromium")
def test_hostile_names_stay_text_in_chromium(tmp_path: Path) -> None:
    results = [run_result(HOSTILE, k, [round_summary(0, [HOSTILE])]) for k in (1, 2)]
    _, page = page_for(results, {"scenarios": HOSTILE})
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    visit = open_page(path, INSPECT)
    assert_rendered_cleanly(visit, path)
    seen = json.loads(visit.value)
    assert seen["pwned"] is None and seen["scripts"] == 0 and seen["handlers"] == 0
    assert HOSTILE in seen["text"]


@pytest.mark.usefixtures("chromium")
@pytest.mark.parametrize("transcript", sorted((ROOT / "transcripts").glob("*.jsonl")), ids=lambda p: p.stem)
def test_replay_export_html_renders_in_chromium(tmp_path: Path, transcript: Path) -> None:
    target = tmp_path / "class.html"
    result = runner.invoke(app, ["replay", str(transcript), "--export", str(target)])
    assert result.exit_code == 0, result.output
    visit = open_page(target, "document.body.innerText")
    assert_rendered_cleanly(visit, target)
    said = [e.text for e in read_transcript(transcript).entries if isinstance(e, LearnerLine)]
    assert said and " ".join(said[0].split()) in " ".join(visit.value.split())  # the first question, as text
