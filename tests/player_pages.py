"""What the player and SCORM tests share: a Chromium that can open pages (else a skip saying why), lessons
exported through the CLI, and the script that drives a learner through a player page by its buttons."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.testing.browser import find_chromium, open_page

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def need_chromium(folder: Path) -> None:
    if find_chromium() is None:
        pytest.skip("Chromium is not installed, so the player is not opened in a browser "
                    "(Debian: apt-get install chromium; .ci/run installs it when it runs as root)")
    probe = folder / "probe.html"
    probe.write_text("<!doctype html><title>probe</title><p>ok</p>", encoding="utf-8")
    try:
        open_page(probe, seconds=60)
    except (OSError, RuntimeError, TimeoutError) as exc:
        pytest.skip(f"Chromium is installed but cannot open a page headless here: {exc}")


def export(lesson: Path, out: Path, *extra: str) -> Path:
    result = runner.invoke(app, ["lesson", "export", str(lesson), "--out", str(out), "--force", *extra])
    assert result.exit_code == 0, result.output
    assert out.is_file()
    return out


# In the page (or in the SCO's frame: DOC is the expression of its document): click Next until the quiz shows,
# recording each stop (where, who is speaking, the line, what is spotlit and under the laser); answer; Submit.
WALK = """
const doc = () => %(doc)s;
const $ = (id) => doc().getElementById(id);
const quiz = () => doc().querySelector('section.kind-quiz:not([hidden])');
const seen = [];
const look = () => {
  const card = doc().querySelector('.card.speaking');
  const band = doc().querySelector('#band .mband');
  seen.push({where: $('where').textContent, who: band.querySelector('.mname').textContent,
             line: band.querySelector('.mline').textContent,
             card: card ? card.getAttribute('data-sp') : null,
             cardLine: card ? card.querySelector('.line').textContent : '',
             spot: [...doc().querySelectorAll('section:not([hidden]) .mel.spot')].map(e => e.innerText.trim()),
             laser: [...doc().querySelectorAll('section:not([hidden]) .mel.laser')].map(e => e.innerText.trim()),
             focus: doc().activeElement ? doc().activeElement.tagName : ''});
};
look();
for (let i = 0; i < 200 && !quiz(); i++) { $('next').click(); look(); }
const answer = (answers) => {
  const q = quiz();
  q.querySelectorAll('fieldset').forEach((set, k) => {
    const given = answers[k];
    if (typeof given === 'string') { set.querySelector('textarea').value = given; }
    else { given.forEach(n => set.querySelectorAll('input')[n].click()); }
  });
  [...q.querySelectorAll('button')].find(b => b.textContent === 'Submit').click();
  return {result: q.querySelector('.result').textContent,
          feedback: [...q.querySelectorAll('.feedback')].map(f => [f.className, f.textContent]),
          focused: doc().activeElement.className};
};
"""
