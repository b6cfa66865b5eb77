"""Hardening 3 (issue 18), items 5, 6, 8 and 9: templates that would hang or eat memory, files that are not
files, charts of 40,000 speakers, numbers of thousands of digits."""

from __future__ import annotations

import json
import os
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.batch_report import BatchReport, GroupSummary, RunRow
from maic_cli.engine.prompt_set import MAX_RENDERED_CHARS, PromptError, PromptSet, TemplateSource
from maic_cli.errors import InputError, SessionError
from maic_cli.files import read_bounded
from maic_cli.store.reports import previous_meta
from maic_cli.store.run_results import load_runs
from maic_cli.store.session import load_session
from maic_cli.ui import report_data
from maic_cli.yamlfile import read_yaml
from tests.test_run import GOOD_ROUND, QA_SCENARIO, script, write

runner = CliRunner()


def render(text: str) -> str:
    prompts = PromptSet.builtin().with_overrides({"t.j2": TemplateSource(text, "prompts/t.j2")}, "test")
    return prompts.render("t.j2", {})


def refused_small(text: str) -> str:
    """The sandbox's refusal of ``text``, checked to come before the big value was made (memory stays small)."""
    tracemalloc.start()
    try:
        with pytest.raises(PromptError) as caught:
            render(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20, f"{peak:,} bytes allocated before the refusal"
    message = str(caught.value)
    assert message.startswith("prompts/t.j2:1:") and "\n" not in message
    return message


# -- 5. templates: measured before computed ---------------------------------------------------------------

@pytest.mark.parametrize(("text", "problem"), [
    ("{{ (((10**64)**64)**64)**64 }}", "exponent too large"),
    ("{{ (2**4000) * (2**4000) }}", "product"),
    ("{{ '%0999999999d' % 1 }}", "% width"),
    ("{{ '%*d' % (999999999, 1) }}", "% width"),
    ("{{ '%0999999999d' | format(1) }}", "% width"),
    ("{{ '{:>999999999}'.format(1) }}", "format width"),
    ("{{ '{:{}}'.format(1, 999999999) }}", "nested field"),
    ("{{ '{x:>999999999}'.format_map({'x': 1}) }}", "format width"),
    ("{% set s = 'x' * 100000 %}{{ s | replace('', s) }}", "replace result"),
    ("{% set s = 'x' * 100000 %}{{ s.replace('', s) }}", "replace result"),
    ("{% set s = 'a\\n' * 60000 %}{{ s | indent(width=90000) }}", "indent result"),
    ("{% set s = 'a\\n' * 60000 %}{{ s | indent(width='x' * 90000) }}", "indent result"),
    ("{% set a = 'x' * 150000 %}{% set a = a ~ a %}{{ a }}", "concatenation"),
    ("{% set a = 'x' * 150000 %}{{ a + a }}", "concatenation"),
    ("{% set a = ['x' * 1000] * 200 %}{{ ''.join(a) }}", "repetition"),
    ("{% set a = ['x' * 100] * 1900 %}{{ a | join('y' * 1000) }}", "join result"),
    ("{{ 'x' * 100 | wordwrap(1, wrapstring='y' * 99999) }}", "wordwrap result"),
    ("{{ ('\t' * 100000).expandtabs(100) }}", "expandtabs result"),
])
def test_an_expensive_operation_is_refused_before_it_runs(text: str, problem: str) -> None:
    assert problem in refused_small(text)


def test_ordinary_arithmetic_formatting_and_filters_still_render() -> None:
    text = ("{{ 10 ** 64 > 0 }} {{ 2 ** 10 }} {{ 'ab' ~ 'c' }} {{ '%5d|' % 3 }}{{ '{:>4}|'.format(1) }}"
            "{{ 'a b' | replace(' ', '_') }} {{ [1, 2] + [3] }} {{ 'x' | center(5) }}|{{ 'p\nq' | indent(2) }} "
            "{{ ['a', 'b'] | join(', ') }} {{ '%s=%d' | format('n', 4) }} {{ 'ab'.replace('', '-') }}")
    assert render(text) == "True 1024 abc     3|   1|a_b [1, 2, 3]   x  |p\n  q a, b n=4 -a-b-"


def test_the_bounds_are_below_the_rendered_prompt_limit() -> None:
    from maic_cli.engine.template_bounds import MAX_INT_BITS, MAX_VALUE, MAX_WIDTH

    assert MAX_VALUE <= MAX_RENDERED_CHARS and MAX_WIDTH < MAX_VALUE and MAX_INT_BITS <= 8192


# -- 6. one bounded reader for every file -----------------------------------------------------------------

def test_a_session_that_is_a_fifo_or_a_link_to_dev_zero_is_refused_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    for path in (fifo, zero):
        with pytest.raises(SessionError, match="not a regular file"):
            load_session(path)
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(fifo)], input="")
    assert result.exit_code == 1 and "not a regular file" in result.stderr
    shown = runner.invoke(app, ["prompts", "show", "agent", "teacher", "--session", str(zero)])
    assert shown.exit_code != 0 and "not a regular file" in shown.stderr and "Traceback" not in shown.stderr


def test_a_template_or_report_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    folder = tmp_path / "prompts" / "snippets"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "speech.md")  # not a file: never opened (opening would wait for a writer)
    (folder / "extra.md").symlink_to("/dev/zero")  # not a file either: never read
    result = runner.invoke(app, ["prompts", "list", "--prompts", str(tmp_path / "prompts")])
    assert result.exit_code == 0, result.output
    assert "speech.md" in result.stdout and str(folder / "speech.md") not in result.stdout  # the built-in one
    with pytest.raises(InputError, match="not a regular file"):
        read_bounded(folder / "speech.md", 100)
    batch = tmp_path / "batch"
    (batch / "runs").mkdir(parents=True)
    os.mkfifo(batch / "report.json")
    assert previous_meta(batch) == {}  # a FIFO where report.json was: not waited on


# -- 8. charts draw the top N, then "others" --------------------------------------------------------------

def run_row(run_id: str, model: str, speakers: list[list[str]]) -> RunRow:
    """A run of a report, as the charts read it."""
    return RunRow(run_id=run_id, scenario="sky", model=model, prompts="builtin", director="llm", repeat=1,
                  status="complete", passed=True, speaker_sequence=speakers)


def test_speaker_charts_cap_what_they_draw() -> None:
    runs = [run_row(f"r{n}", f"m{n % 30}", [[f"s{n}", f"s{n + 1}", "teacher"]]) for n in range(40_000)]
    counts = report_data.speaker_counts(BatchReport(runs=runs))
    assert len(counts) == report_data.MAX_SHOWN + 1 and any(key.startswith("others (18") for key in counts)
    parts = {part for counter in counts.values() for part in counter}
    assert len(parts) <= report_data.MAX_SHOWN + 1 and "teacher" in parts
    assert sum(sum(c.values()) for c in counts.values()) == 3 * 40_000  # every turn still counted
    panels = report_data.end_reason_panels(BatchReport(by_model={
        f"m{n}": GroupSummary(runs=1, end_reasons={f"r{n}": 1}) for n in range(5_000)}))
    (_, rows), = panels
    assert len(rows) <= report_data.MAX_SHOWN and all(len(c) <= report_data.MAX_SHOWN + 1 for c in rows.values())
    assert report_data.top_parts(Counter({"a": 5, "b": 1, "c": 1}), ["a"], "others") == {"a": 5, "others": 2}


def test_report_of_a_batch_with_thousands_of_speakers_is_drawn(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    assert runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                               "--plain"]).exit_code == 0
    run_file = next((out / "runs").glob("*.json"))
    data = json.loads(run_file.read_text(encoding="utf-8"))
    data["rounds"][0]["speakers"] = [f"agent{n}" for n in range(20_000)]
    run_file.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["report", str(out)])
    assert result.exit_code == 0, result.output
    html = (out / "report.html").read_text(encoding="utf-8")
    chart = html[html.index('data-chart="speakers"'):]
    chart = chart[:chart.index("</figure>")]
    assert "others (19,988 speakers)" in chart and "agent19999" not in chart


# -- 9. numbers out of range are a one-line error --------------------------------------------------------

def test_a_yaml_or_json_number_of_thousands_of_digits_is_a_one_line_error(tmp_path: Path) -> None:
    path = write(tmp_path / "s.yaml", QA_SCENARIO + "max_turns: " + "9" * 5000 + "\n")
    with pytest.raises(InputError, match=r"s.yaml:\d+: a number of 5,000 characters is out of range"):
        read_yaml(path)
    result = runner.invoke(app, ["run", str(path), "--model", "demo", "--plain"])
    assert result.exit_code == 2 and "out of range" in result.stderr and "unexpected" not in result.stderr
    session = tmp_path / "big.json"
    session.write_text('{"version": 1, "config": {"max_turns": ' + "9" * 5000 + "}}", encoding="utf-8")
    with pytest.raises(SessionError, match=r"big\.json"):
        load_session(session)
    runs = tmp_path / "batch" / "runs"
    runs.mkdir(parents=True)
    (runs / "r1.json").write_text('{"run_id": "r1", "repeat": ' + "9" * 5000 + "}", encoding="utf-8")
    with pytest.raises(InputError, match="damaged run result"):
        load_runs(tmp_path / "batch")


def test_slide_with_a_5000_digit_number_is_one_line_and_the_class_goes_on(tmp_path: Path) -> None:
    lesson = Path(__file__).resolve().parent.parent / "lessons" / "photosynthesis.yaml"
    result = runner.invoke(app, ["chat", "--model", "demo", "--lesson", str(lesson), "--session",
                                 str(tmp_path / "s.json")], input="/slide " + "9" * 5000 + "\n/outline\n")
    assert result.exit_code == 0, result.output
    assert "out of range" in result.stderr and "unexpected" not in result.output


def test_a_render_of_many_allowed_but_slow_steps_stops_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    from maic_cli.engine import prompt_set

    monkeypatch.setattr(prompt_set, "MAX_RENDER_SECONDS", 0.05)
    text = ("{% set s = 'x' * 199999 %}{% for i in range(1000) %}{% for j in range(1000) %}"
            "{{ (s | replace('x', 'y')) | length }}{% endfor %}{% endfor %}")
    assert "takes more than 0.05 s to render" in refused_small(text)
