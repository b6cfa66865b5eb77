"""``maic lesson export L --out lesson.html``: the web player, opened from file:// in a real headless Chromium and
driven by a learner through its buttons — each line in its speaker's card with the spotlight and laser in step,
the quiz graded in the page — and a hostile lesson whose every field carries script that never runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.formats.player import json_block, player_html, rubric_data
from maic_cli.lessons.lesson import Lesson
from maic_cli.lessons.rubric import measure, read_rubric
from maic_cli.store.lessons import load_lesson
from maic_cli.store.personas import DEFAULT_CLASS, load_registry
from maic_cli.testing.browser import open_page
from maic_cli.testing.firefox import find_firefox, open_in_firefox
from tests.player_pages import ROOT, WALK, export, need_chromium

PHOTOSYNTHESIS = ROOT / "lessons" / "photosynthesis.yaml"


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> None:
    need_chromium(tmp_path_factory.mktemp("probe"))


def data_of(page: str) -> dict[str, object]:
    found = re.search(r"<script type='application/json' id='lesson-data'>(.*?)</script>", page, re.S)
    assert found is not None
    loaded: dict[str, object] = json.loads(found.group(1))
    return loaded


def test_json_block_cannot_be_closed_by_lesson_text() -> None:
    text = "</script><script>alert(1)</script> & <!-- \u2028"
    block = json_block({"say": text})
    assert "<" not in block and ">" not in block and "&" not in block and "\u2028" not in block
    assert json.loads(block) == {"say": text}


def test_the_page_is_one_file_that_reaches_nothing(tmp_path: Path) -> None:
    page = export(PHOTOSYNTHESIS, tmp_path / "lesson.html").read_text(encoding="utf-8")
    assert not re.search(r"(?:src|href)\s*=\s*['\"](?!#|data:)", page)  # no file, no URL, only in-page anchors
    names = re.sub(r"xmlns=[\"']http://www\.w3\.org/(?:1998/Math/MathML|2000/svg)[\"']", "", page)  # names
    assert "http://" not in names and "https://" not in page and "@import" not in page and "url(" not in page
    assert page.count("<script") == 2  # the data block and the player's own script
    policy = re.search(r"Content-Security-Policy' content=\"([^\"]+)\"", page)
    assert policy is not None and "script-src 'sha256-" in policy.group(1) and "default-src 'none'" in policy.group(1)
    data = data_of(page)
    lesson = load_lesson(PHOTOSYNTHESIS)
    said = [step["say"] for scene in data["scenes"] for step in scene["steps"] if "say" in step]  # type: ignore[attr-defined]
    assert said[0].startswith("Here is a puzzle to start.")
    assert len(data["scenes"]) == len(lesson.scenes)  # type: ignore[arg-type]


@pytest.mark.usefixtures("chromium")
def test_a_learner_goes_through_the_lesson_by_its_buttons(tmp_path: Path) -> None:
    page = export(PHOTOSYNTHESIS, tmp_path / "lesson.html")
    expression = "(async () => {" + WALK % {"doc": "document"} + """
      const names = [...document.querySelectorAll('button')].map(b => b.textContent.replace(/^[▶❚]+/, ''));
      const labels = [...document.querySelectorAll('section.kind-quiz input')].map(i => i.labels[0].textContent.trim());
      const shown = [];
      const now = quiz();
      document.querySelectorAll('section.scene').forEach(s => {
        s.hidden = false; shown.push(s.innerText); s.hidden = s !== now; });
      const graded = answer([[2], [0, 2], 'Light gives the plant energy to make sugar from water and carbon dioxide.']);
      for (let i = 0; i < 5; i++) $('next').click();
      return {seen, names, labels, graded, shown,
              end: doc().querySelector('section.kind-end .mel p').textContent, nextDisabled: $('next').disabled,
              live: $('band').getAttribute('aria-live')};
    })()"""
    visit = open_page(page, expression, width=1280, max_height=1200)
    assert visit.errors == []
    assert visit.requests == [page.resolve().as_uri()]
    value = visit.value
    seen = value["seen"]
    # the first line: the teacher's, in her card and in the band; nothing pointed at yet
    assert seen[0]["who"] == "Ms. Rivera" and seen[0]["line"].startswith("Here is a puzzle")
    assert seen[0]["card"] == "teacher" and seen[0]["cardLine"] == seen[0]["line"] and seen[0]["spot"] == []
    # the second line comes with the spotlight on the question; the fourth with the laser on the leaf's picture
    assert seen[1]["line"] == "A plant needs only three things to make its food."
    assert seen[1]["spot"] == ["Where does a tree's mass come from?"] and seen[1]["laser"] == []
    assert seen[3]["line"].startswith("The leaf takes in carbon dioxide") and len(seen[3]["laser"]) == 1
    assert "green leaf" in seen[3]["laser"][0]
    # a classmate's line is said in Leo's card
    leo = next(stop for stop in seen if stop["line"] == "So my burger is solar powered?")
    assert leo["who"] == "Leo" and leo["card"] == "class_clown"
    # every scripted line was shown once, in order, before the quiz
    lesson = load_lesson(PHOTOSYNTHESIS)
    script = [step.say for scene in lesson.scenes if scene.type != "quiz" for step in getattr(scene, "script", [])
              if step.say]
    lines = [stop["line"] for stop in seen]
    assert [line for line in dict.fromkeys(lines) if line in script] == script
    assert sorted(value["names"]) == ["Next", "Play", "Previous", "Submit"]
    assert value["labels"][:4] == ["A) The soil", "B) The water", "C) Carbon dioxide from the air", "D) Sunlight"]
    assert all(re.match(r"^[A-J]\) ", label) for label in value["labels"])
    # graded in the page: C is right (2), A+C is right (2), the short answer has the essential point (2 or 3 of 3)
    graded = value["graded"]
    assert graded["feedback"][0][0] == "feedback right" and graded["feedback"][1][0] == "feedback right"
    assert graded["feedback"][2][0] == "feedback right" and "energy" in graded["feedback"][2][1]
    question = next(q for s in lesson.scenes if s.type == "quiz" for q in s.questions if q.id == "q3")
    mine = measure(read_rubric(question.rubric or "", question.question),
                   "Light gives the plant energy to make sugar from water and carbon dioxide.", question.points)
    assert mine.points is not None and graded["result"] == f"Score: {4 + int(mine.points)} of 7"
    assert graded["focused"] == "result"  # Submit moves the focus to the score
    assert value["end"] == f"Your score: {graded['result'].split()[1]} of 7 points." and value["nextDisabled"]
    assert value["live"] == "polite"
    # no element id or type is shown on any slide: what a person reads is the slide's own words
    text = "\n".join(value["shown"])
    assert "Where does a tree's mass come from?" in text and "A green leaf with arrows" in text
    for scene in lesson.scenes:
        for element in getattr(scene, "elements", []):
            assert f"[{element.id}]" not in text and f"{element.id}:" not in text
    assert "why_it_matters" not in text  # a scene id that reads as no word


@pytest.mark.usefixtures("chromium")
def test_wrong_answers_and_an_answer_for_the_teacher(tmp_path: Path) -> None:
    page = export(PHOTOSYNTHESIS, tmp_path / "lesson.html")
    expression = "(async () => {" + WALK % {"doc": "document"} + """
      return answer([[0], [0], 'Chlorophyll is involved somehow.']); })()"""
    visit = open_page(page, expression)
    assert visit.errors == []
    graded = visit.value
    assert graded["feedback"][0] == ["feedback wrong", "✗ The answer is C. (0 of 2)"]
    assert graded["feedback"][1][0] == "feedback wrong" and "A, C" in graded["feedback"][1][1]
    assert graded["feedback"][2][0] in ("feedback wrong", "feedback teacher")
    assert graded["result"].startswith("Score: 0 of 7")


HOSTILE = "<script>window.__pwned=1;console.error('PWNED')</script>"
ATTRIBUTE = "\"'><img src=x onerror=\"window.__pwned=1;console.error('PWNED')\">"
LINK = "javascript:window.__pwned=1;console.error('PWNED')"


def hostile_lesson() -> dict[str, object]:
    evil = f"{HOSTILE} {ATTRIBUTE} {LINK} <svg onload=\"window.__pwned=1\"></svg> ]]> </style><style>*{{}}"
    return {
        "title": evil[:200], "description": evil, "level": "beginner",
        "scenes": [
            {"type": "slide", "id": "s1", "title": evil[:200],
             "elements": [{"id": "a", "type": "text", "content": evil},
                          {"id": "b\"><script>x</script>", "type": "bullets", "items": [evil, evil]},
                          {"id": "c", "type": "table", "rows": [[evil, evil], [evil, LINK]]},
                          {"id": "d", "type": "code", "content": evil, "language": "html"},
                          {"id": "e", "type": "formula", "content": evil},
                          {"id": "f", "type": "image", "content": evil}],
             "script": [{"say": evil}, {"spotlight": "a"}, {"say": evil}, {"laser": "f"}, {"say": evil}]},
            {"type": "quiz", "id": "q", "title": evil[:200],
             "questions": [{"id": "q1", "type": "single", "question": evil, "options": [evil, LINK], "answer": "A",
                            "explanation": evil},
                           {"id": "q2", "type": "short", "question": evil, "rubric": evil, "explanation": evil}]},
            {"type": "discussion", "id": "d", "title": evil[:200], "topic": evil[:500], "prompt": evil,
             "script": [{"say": evil}]},
        ]}


@pytest.mark.usefixtures("chromium")
def test_no_script_from_a_lesson_runs_in_the_player(tmp_path: Path) -> None:
    source = tmp_path / "hostile.yaml"
    source.write_text(yaml.safe_dump(hostile_lesson()), encoding="utf-8")
    page = export(source, tmp_path / "hostile.html")
    text = page.read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in text and "<img src=x" not in text and "<svg onload" not in text
    expression = "(async () => {" + WALK % {"doc": "document"} + """
      const graded = answer([[0], 'javascript: alert']);
      for (let i = 0; i < 5; i++) $('next').click();
      await new Promise(r => setTimeout(r, 300));
      return {pwned: window.__pwned === undefined ? null : window.__pwned, graded,
              scripts: document.scripts.length, images: document.images.length,
              links: [...document.querySelectorAll('a')].map(a => a.getAttribute('href')),
              shown: document.body.innerText.includes("<script>window.__pwned=1"),
              lines: seen.map(s => s.line)};
    })()"""
    visit = open_page(page, expression)
    assert visit.errors == []  # no PWNED on the console, no script refused by the page's policy either
    assert visit.requests == [page.resolve().as_uri()]  # no <img src=x> was fetched
    value = visit.value
    assert value["pwned"] is None and value["scripts"] == 2 and value["images"] == 0
    assert value["links"] == ["#controls"]
    assert value["shown"]  # the lesson's text is there, as text
    assert value["lines"][0].startswith("<script>window.__pwned=1")
    assert value["graded"]["result"].startswith("Score: 1 of 2")


def test_rubric_data_keeps_the_measures_points() -> None:
    rubric = read_rubric("Light provides the energy. Mentioning energy is essential; naming chlorophyll is a bonus.",
                         "Why do plants need light?")
    data = rubric_data(rubric)
    assert [point["l"] for point in data["ess"]] == [point.label for point in rubric.essential]
    assert any("energi" in term["s"] for point in data["ess"] for alt in point["a"] for term in alt)


def grading_items() -> list[tuple[str, str, int, str, str]]:
    """(question, rubric, points, answer, right|wrong) of tests/benchmarks/grading_set.yaml, its held-out set and
    the answers in the learner's own words (paraphrase_set.yaml)."""
    items = []
    for name in ("grading_set.yaml", "grading_heldout.yaml", "paraphrase_set.yaml"):
        for entry in yaml.safe_load((ROOT / "tests" / "benchmarks" / name).read_text(encoding="utf-8")):
            if "lesson" in entry:
                lesson = Lesson.model_validate(yaml.safe_load((ROOT / entry["lesson"]).read_text(encoding="utf-8")))
                question = next(q for s in lesson.scenes if s.type == "quiz" for q in s.questions
                                if q.id == entry["question"])
                asked, rubric, points = question.question, question.rubric or "", question.points
            else:
                asked, rubric, points = entry["question"], entry["rubric"], int(entry.get("points", 1))
            items += [(asked, rubric, points, answer, kind) for kind in ("right", "wrong")
                      for answer in entry.get(kind, [])]
    return items


@pytest.mark.usefixtures("chromium")
def test_the_pages_rubric_check_agrees_with_maics(tmp_path: Path) -> None:
    """The page's check (JS) and maic's (lessons/rubric.py) on every answer of the grading sets: the verdicts and
    points agree on nearly all, and the page gives no points to any answer the sets call wrong."""
    items = grading_items()
    cases = [{"r": rubric_data(read_rubric(rubric, asked)), "a": answer, "p": points}
             for asked, rubric, points, answer, _ in items]
    registry = load_registry()
    agents = [registry.agents[i] for i in DEFAULT_CLASS if i in registry.agents]
    page = tmp_path / "page.html"
    page.write_text(player_html(load_lesson(PHOTOSYNTHESIS), agents), encoding="utf-8")
    expression = f"JSON.stringify({json.dumps(cases)}.map(c => window.maicRubric.measure(c.r, c.a, c.p)))"
    visit = open_page(page, expression, seconds=90)
    assert visit.errors == []
    page_verdicts = json.loads(visit.value)
    ours = [measure(read_rubric(rubric, asked), answer, points) for asked, rubric, points, answer, _ in items]
    agree = sum(1 for mine, theirs in zip(ours, page_verdicts, strict=True)
                if mine.verdict == theirs[0] and (mine.points or 0) == theirs[1])
    assert agree / len(items) >= 0.97, f"{agree} of {len(items)} verdicts agree"  # measured: 152 of 152
    for theirs, item in zip(page_verdicts, items, strict=True):
        assert item[4] == "right" or theirs[1] == 0, (item, theirs)  # a wrong answer never earns points in the page


def test_the_player_works_in_firefox_from_file(tmp_path: Path) -> None:
    """The same learner's walk in a real headless Firefox (WebDriver BiDi), the page opened from file://."""
    if find_firefox() is None:
        pytest.skip("Firefox is not installed, so the player is not opened in it (Debian: apt-get install "
                    "firefox-esr; .ci/run installs it when it runs as root)")
    page = export(PHOTOSYNTHESIS, tmp_path / "lesson.html")
    expression = "(async () => {" + WALK % {"doc": "document"} + """
      const graded = answer([[2], [0, 2], 'It gives the plant energy.']);
      return JSON.stringify({seen, graded}); })()"""
    try:
        visit = open_in_firefox(page, expression)
    except (OSError, RuntimeError, TimeoutError) as exc:
        pytest.skip(f"Firefox is installed but cannot open a page headless here: {exc}")
    assert visit.errors == []
    value = json.loads(visit.value)
    assert value["seen"][1]["spot"] == ["Where does a tree's mass come from?"]
    assert value["seen"][0]["who"] == "Ms. Rivera" and value["seen"][0]["card"] == "teacher"
    assert value["graded"]["result"].startswith("Score: 6 of 7") or value["graded"]["result"] == "Score: 7 of 7"
    assert value["graded"]["focused"] == "result"
    (tmp_path / "firefox.png").write_bytes(visit.screenshot)
    assert visit.screenshot.startswith(b"\x89PNG")


@pytest.mark.usefixtures("chromium")
def test_keys_and_focus(tmp_path: Path) -> None:
    page = export(PHOTOSYNTHESIS, tmp_path / "lesson.html")
    expression = """(async () => {
      const $ = (id) => document.getElementById(id), where = () => $('where').textContent;
      const key = (k) => document.body.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true}));
      const out = {start: where()};
      key('ArrowRight'); out.right = where();
      key('ArrowLeft'); out.left = where();
      $('next').focus();
      for (let i = 0; i < 4; i++) $('next').click();
      out.crossed = where(); out.focusAfterButton = document.activeElement.id;
      document.activeElement.blur();
      for (let i = 0; i < 3; i++) $('next').click();
      out.focusAfterBlur = document.activeElement.tagName + ' ' + document.activeElement.textContent;
      key(' '); out.pressed = $('play').getAttribute('aria-pressed');
      key(' '); out.released = $('play').getAttribute('aria-pressed');
      return out; })()"""
    visit = open_page(page, expression)
    assert visit.errors == []
    value = visit.value
    assert value["start"].endswith("line 1 of 4") and value["right"].endswith("line 2 of 4")
    assert value["left"] == value["start"]
    assert value["crossed"].startswith("Scene 2 of 5") and value["focusAfterButton"] == "next"  # kept on Next
    assert value["focusAfterBlur"] == "H3 Why it matters"  # focus that was lost goes to the new scene's heading
    assert (value["pressed"], value["released"]) == ("true", "false")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_json_block_round_trips_any_text(text: str) -> None:
    block = json_block({"t": text, "k": [text]})
    assert not set(block) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(block) == {"t": text, "k": [text]}
