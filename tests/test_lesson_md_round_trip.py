"""``maic lesson export --out x.md`` then ``maic lesson import x.md`` gives the same scenes.

The export escapes whatever the import would read as structure: a slide titled "Discussion: …" or
"Quiz: warm up", a line starting "1.", inline marks (``*stars*``, backticks, ``[link](…)``, ``&amp;``),
script lines that look like markers or name a classmate.  Ids, kinds and empty elements travel in
comments a viewer hides; a classmate's line (``by:``) is written ``Name: …`` and read back as theirs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maic_cli.engine.models import SlideElement
from maic_cli.formats.importer import import_lesson
from maic_cli.formats.pptx_write import export_lesson
from maic_cli.lessons.lesson import DiscussionScene, Lesson, QuizQuestion, QuizScene, ScriptStep, SlideScene

pytest.importorskip("markdown_it")

_WORDS = st.sampled_from([
    "Quiz:", "Discussion:", "quiz", "Discussion", "1.", "2)", "#", "##", "C#", "*stars*", "`tick`", "``", "[link](x)",
    "![alt](p.png)", "&amp;", "&#81;", "<b>", "<!--", "-->", "<!-- id: x -->", "\\", "\\*", "|", "$$", "$$x$$", "-",
    "+",
    ">", "=", "===", "---", "~~~", "```", "_", "__init__", "snake_case", "_lead", "trail_", "!", "[spotlight: t]",
    "[laser: t]", "[script]", "[quiz: a b single]", "[discussion: d]", "Sam:", "Mia:", "mia:", "Ms. Rivera:",
    "teacher:", "Note:", "Points:", "Rubric:", "Answer:", "Explanation:", "Opened by:", "Title:", "- [x]", "e.g.",
    "x²", "Ünïcødé", "日本語", "word", "light", "Plants", "a", "42", "３", "3.14", "%", "@", "{", "}", "(", ")", "'",
    '"'])
_TEXT = st.lists(_WORDS, min_size=1, max_size=8).map(" ".join)
_ID = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
_BY = st.sampled_from([None, None, "assistant", "curious_student", "deep_thinker", "note_taker", "class_clown",
                       "teacher"])


@st.composite
def _elements(draw: st.DrawFn) -> list[SlideElement]:
    ids = draw(st.lists(_ID, max_size=5, unique=True))
    elements = []
    for element_id in ids:
        kind = draw(st.sampled_from(["text", "formula", "chart", "video", "shape", "bullets", "table", "code",
                                     "image"]))
        empty = draw(st.integers(0, 6)) == 0
        if kind == "bullets":
            items, level = [], -1
            for said in draw(st.lists(_TEXT, min_size=1, max_size=5)):
                level = draw(st.integers(0, max(level + 1, 0)))
                items.append("  " * min(level, 4) + said)
            elements.append(SlideElement(id=element_id, type="bullets", items=[] if empty else items))
        elif kind == "table":
            columns = draw(st.integers(1, 3))
            rows = draw(st.lists(st.lists(st.one_of(_TEXT, st.just("")), min_size=columns, max_size=columns)
                                 .filter(lambda row: any(row)), min_size=1, max_size=3))
            elements.append(SlideElement(id=element_id, type="table", rows=[] if empty else rows))
        elif kind == "code":
            code = draw(st.lists(st.one_of(_TEXT, st.just(""), st.just("    indented ```")), max_size=4)
                        .map("\n".join))
            elements.append(SlideElement(id=element_id, type="code", content=code,
                                         language=draw(st.sampled_from([None, "python", "c++"]))))
        elif kind in ("text", "chart", "video", "shape"):
            parts = draw(st.lists(_TEXT, min_size=1, max_size=3))
            joins = [draw(st.sampled_from(["\n", "\n\n"])) for _ in parts[1:]]
            content = parts[0] + "".join(join + part for join, part in zip(joins, parts[1:], strict=True))
            elements.append(SlideElement(id=element_id, type=kind, content="" if empty else content))  # type: ignore[arg-type]
        else:
            elements.append(SlideElement(id=element_id, type=kind, content="" if empty else draw(_TEXT)))  # type: ignore[arg-type]
    return elements


@st.composite
def _script(draw: st.DrawFn, targets: list[str], *, speech_only: bool = False) -> list[ScriptStep]:
    steps = []
    for _ in range(draw(st.integers(0, 5))):
        if targets and not speech_only and draw(st.booleans()):
            target = draw(st.sampled_from(targets))
            steps.append(ScriptStep(spotlight=target) if draw(st.booleans()) else ScriptStep(laser=target))
        else:
            steps.append(ScriptStep(say=draw(_TEXT), by=draw(_BY)))
    return steps


@st.composite
def _question(draw: st.DrawFn, number: int) -> QuizQuestion:
    kind = draw(st.sampled_from(["single", "multiple", "short"]))
    question_id = draw(st.one_of(st.just(f"q{number}"), _ID.map(lambda i: f"{i}{number}")))
    points, explanation = draw(st.integers(1, 100)), draw(st.one_of(st.none(), _TEXT))
    if kind == "short":
        return QuizQuestion(id=question_id, type="short", question=draw(_TEXT), rubric=draw(_TEXT), points=points,
                            explanation=explanation)
    options = draw(st.lists(_TEXT, min_size=2, max_size=5))
    letters = "ABCDEFGHIJ"[:len(options)]
    answer = draw(st.lists(st.sampled_from(letters), min_size=1, max_size=1 if kind == "single" else len(options),
                           unique=True))
    return QuizQuestion(id=question_id, type=kind, question=draw(_TEXT), options=options,  # type: ignore[arg-type]
                        answer=sorted(answer), points=points, explanation=explanation)


@st.composite
def _lessons(draw: st.DrawFn) -> Lesson:
    scenes: list[SlideScene | QuizScene | DiscussionScene] = []
    for number in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["slide", "slide", "quiz", "discussion"]))
        scene_id = f"{draw(_ID)}-{number}"
        if kind == "slide":
            elements = draw(_elements())
            scenes.append(SlideScene(type="slide", id=scene_id, title=draw(_TEXT), elements=elements,
                                     script=draw(_script([e.id for e in elements]))))
        elif kind == "quiz":
            questions = [draw(_question(n)) for n in range(1, draw(st.integers(1, 3)) + 1)]
            scenes.append(QuizScene(type="quiz", id=scene_id, title=draw(_TEXT), questions=questions))
        else:
            scenes.append(DiscussionScene(type="discussion", id=scene_id, title=draw(st.one_of(st.none(), _TEXT)),
                                          topic=draw(_TEXT), prompt=draw(st.one_of(st.none(), _TEXT)),
                                          initiator=draw(st.sampled_from([None, "curious_student"])),
                                          script=draw(_script([], speech_only=True))))
    agents = draw(st.one_of(st.none(), st.permutations(["teacher", "assistant", "curious_student", "deep_thinker",
                                                        "note_taker", "class_clown"])))
    return Lesson(title=draw(_TEXT), description=draw(st.one_of(st.none(), _TEXT)), agents=agents, scenes=scenes)


def _round_trip(lesson: Lesson, folder: Path) -> Lesson:
    out = folder / "notes.md"
    out.unlink(missing_ok=True)
    export_lesson(lesson, out)
    return import_lesson(out).lesson


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lesson=_lessons())
def test_markdown_export_then_import_gives_the_same_scenes(lesson: Lesson) -> None:
    with tempfile.TemporaryDirectory() as folder:
        back = _round_trip(lesson, Path(folder))
    assert (back.title, back.description, back.agents) == (lesson.title, lesson.description, lesson.agents)
    assert back.scenes == lesson.scenes


def test_a_lesson_of_its_own_class_keeps_it_and_its_classmates_lines(tmp_path: Path) -> None:
    lesson = Lesson.model_validate({"title": "Small class", "agents": ["teacher", "class_clown"], "scenes": [
        {"type": "slide", "id": "s", "title": "Puns",
         "script": [{"say": "A pun.", "by": "class_clown"}, {"say": "Mia: not in this class, so the teacher's"}]}]})
    back = _round_trip(lesson, tmp_path)
    assert back.agents == ["teacher", "class_clown"] and back.scenes == lesson.scenes
    assert "Leo: A pun." in (tmp_path / "notes.md").read_text()


def test_the_reported_titles_and_marks_come_back(tmp_path: Path) -> None:
    """The findings as reported: a "Discussion: …" slide, a "Quiz: warm up" slide, "1.", inline marks."""
    lesson = Lesson.model_validate({"title": "Marks", "scenes": [
        {"type": "slide", "id": "talk", "title": "Discussion: why is the sky blue?",
         "elements": [{"id": "points", "type": "bullets", "items": ["*stars*", "`tick`", "[link](https://x.y)"]}],
         "script": [{"say": "1. First, light scatters."}, {"spotlight": "points"}, {"say": "Fish &amp; chips."}]},
        {"type": "slide", "id": "warm", "title": "Quiz: warm up", "script": [{"say": "Sam: not a classmate here"}]}]})
    back = _round_trip(lesson, tmp_path)
    assert back.scenes == lesson.scenes
    text = (tmp_path / "notes.md").read_text()
    assert "1\\. First" in text and "\\\\1." not in text


def test_a_classmates_line_is_written_by_name_and_read_back_as_theirs(tmp_path: Path) -> None:
    lesson = Lesson.model_validate({"title": "Class", "scenes": [
        {"type": "slide", "id": "s", "title": "Light",
         "script": [{"say": "Light bends."}, {"say": "Why does it bend?", "by": "curious_student"},
                    {"say": "Mia: this one is the teacher quoting Mia"}]},
        {"type": "discussion", "id": "d", "topic": "Is light a wave?",
         "script": [{"say": "It is a wave.", "by": "deep_thinker"}, {"say": "Both, in a way."}]}]})
    back = _round_trip(lesson, tmp_path)
    assert back.scenes == lesson.scenes
    text = (tmp_path / "notes.md").read_text()
    assert "Mia: Why does it bend?" in text and "Theo: It is a wave." in text


def test_a_hand_written_name_line_is_that_classmates_and_an_unknown_name_the_teachers(tmp_path: Path) -> None:
    notes = tmp_path / "hand.md"
    notes.write_text("# Light\n\n## Bending\n\nLight bends in water. It slows down.\n\n"
                     "SAM: Try it with a glass of water.\n\nBob: nobody in the class is Bob.\n\n"
                     "## Discussion: Is light a wave?\n\nThink about it.\n\nTheo: It is a particle.\n\n"
                     "Curious_Student: Or both?\n")
    slide, talk = import_lesson(notes).lesson.scenes
    assert isinstance(slide, SlideScene) and isinstance(talk, DiscussionScene)
    said = [(s.by, s.say) for s in slide.script if s.say]
    assert ("assistant", "Try it with a glass of water.") in said
    assert (None, "Bob: nobody in the class is Bob.") in said
    assert talk.prompt == "Think about it."
    assert [(s.by, s.say) for s in talk.script] == [("deep_thinker", "It is a particle."),
                                                    ("curious_student", "Or both?")]
