"""Export → import of generated lessons gives the same lesson (but a quiz scene's id: OpenMAIC has no place
for it): bullets, tables, code, formulas, classmates' ``by:`` lines, discussions with scripts and initiators."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maic_cli.engine.models import SlideElement
from maic_cli.formats.openmaic_read import read_classroom
from maic_cli.formats.openmaic_write import classroom_zip
from maic_cli.lessons.lesson import (
    LETTERS,
    DiscussionScene,
    Lesson,
    QuizQuestion,
    QuizScene,
    Scene,
    ScriptStep,
    SlideScene,
)
from maic_cli.store.lesson_class import class_agents
from maic_cli.store.personas import DEFAULT_CLASS

_word = st.text(st.sampled_from("abcxyzAZ019<>&'\"*_()=+-/\\éü中ß!?.,;:#%"), min_size=1, max_size=8)
_words = st.lists(_word, min_size=1, max_size=6).map(" ".join)
_ident = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
_classmate = st.sampled_from([agent for agent in DEFAULT_CLASS if agent != "teacher"])
_code_line = st.builds(lambda indent, words: " " * indent + words, st.integers(0, 8), _words)


@st.composite
def _element(draw: st.DrawFn, element_id: str) -> SlideElement:
    kind = draw(st.sampled_from(["text", "bullets", "table", "code", "formula", "image"]))
    if kind == "bullets":
        return SlideElement(id=element_id, type="bullets", items=draw(st.lists(_words, min_size=1, max_size=5)))
    if kind == "table":
        width = draw(st.integers(1, 3))
        rows = draw(st.lists(st.lists(_words, min_size=width, max_size=width), min_size=1, max_size=4))
        return SlideElement(id=element_id, type="table", rows=rows)
    if kind == "code":
        lines = draw(st.lists(_code_line, min_size=1, max_size=5))
        return SlideElement(id=element_id, type="code", content="\n".join(lines) + "\n",
                            language=draw(st.sampled_from([None, "python", "javascript", "text"])))
    if kind == "formula":
        return SlideElement(id=element_id, type="formula",
                            content=draw(st.sampled_from(["x^2 + y^2 = r^2", "\\frac{a}{b} < c", "E = mc^2"])))
    content = "\n".join(draw(st.lists(_words, min_size=1, max_size=1 if kind == "image" else 3)))
    return SlideElement(id=element_id, type=kind, content=content)  # type: ignore[arg-type]


@st.composite
def _slide(draw: st.DrawFn, scene_id: str) -> SlideScene:
    ids = draw(st.lists(_ident, min_size=0, max_size=4, unique=True))
    elements = [draw(_element(element_id)) for element_id in ids]
    script: list[ScriptStep] = []
    for _ in range(draw(st.integers(0, 5))):
        choice = draw(st.integers(0, 3))
        if ids and choice == 0:
            script.append(ScriptStep(spotlight=draw(st.sampled_from(ids))))
        elif ids and choice == 1:
            script.append(ScriptStep(laser=draw(st.sampled_from(ids))))
        else:
            script.append(ScriptStep(say=draw(_words), by=draw(st.none() | _classmate)))
    return SlideScene(type="slide", id=scene_id, title=draw(_words), elements=elements, script=script)


@st.composite
def _quiz(draw: st.DrawFn, scene_id: str) -> QuizScene:
    questions = []
    for number in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["single", "multiple", "short"]))
        common: dict[str, Any] = {"id": f"q{number + 1}", "question": draw(_words),
                                  "points": draw(st.integers(1, 10)), "explanation": draw(st.none() | _words)}
        if kind == "short":
            questions.append(QuizQuestion(type="short", rubric=draw(_words), **common))
            continue
        options = draw(st.lists(_words, min_size=2, max_size=5))
        letters = list(LETTERS[:len(options)])
        answer = [draw(st.sampled_from(letters))] if kind == "single" else \
            sorted(draw(st.lists(st.sampled_from(letters), min_size=1, unique=True)))
        questions.append(QuizQuestion(type=kind, options=options, answer=answer, **common))  # type: ignore[arg-type]
    return QuizScene(type="quiz", id=scene_id, title=draw(_words), questions=questions)


@st.composite
def _discussion(draw: st.DrawFn, scene_id: str) -> DiscussionScene:
    script = [ScriptStep(say=draw(_words), by=draw(st.none() | _classmate)) for _ in range(draw(st.integers(0, 3)))]
    return DiscussionScene(type="discussion", id=scene_id, topic=draw(_words), prompt=draw(st.none() | _words),
                           title=draw(st.none() | _words), initiator=draw(st.none() | _classmate), script=script)


@st.composite
def _lesson(draw: st.DrawFn) -> Lesson:
    kinds = draw(st.lists(st.sampled_from(["slide", "quiz", "discussion"]), min_size=1, max_size=6))
    scenes: list[Scene] = []
    for number, kind in enumerate(kinds):
        scene_id = f"{kind}_{number}"
        scenes.append(draw(_slide(scene_id)) if kind == "slide" else draw(_quiz(scene_id)) if kind == "quiz"
                      else draw(_discussion(scene_id)))
    return Lesson(title=draw(_words), description=draw(st.none() | _words),
                  language=draw(st.none() | st.sampled_from(["en", "fr-FR"])), scenes=scenes)


def _same(before: Lesson, after: Lesson) -> None:
    assert after.title == before.title and after.description == before.description
    assert after.language == before.language
    assert [scene.type for scene in after.scenes] == [scene.type for scene in before.scenes]
    for old, new in zip(before.scenes, after.scenes, strict=True):
        if isinstance(old, QuizScene):
            assert new.model_dump(exclude={"id"}) == old.model_dump(exclude={"id"})
        else:
            assert new.model_dump() == old.model_dump()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(_lesson())
def test_a_lesson_goes_to_openmaic_and_comes_back_the_same(tmp_path: Path, lesson: Lesson) -> None:
    data, _ = classroom_zip(lesson, class_agents(lesson))
    path = tmp_path / "round.maic.zip"
    path.write_bytes(data)
    back, _ = read_classroom(path)
    _same(lesson, back)


def test_a_lesson_of_discussions_only_comes_back_without_the_slide_that_held_them(tmp_path: Path) -> None:
    lesson = Lesson(title="Talk", scenes=[DiscussionScene(type="discussion", id="d1", topic="Why?"),
                                          DiscussionScene(type="discussion", id="d2", topic="How?",
                                                          initiator="deep_thinker")])
    data, _ = classroom_zip(lesson, class_agents(lesson))
    path = tmp_path / "talk.maic.zip"
    path.write_bytes(data)
    back, _ = read_classroom(path)
    _same(lesson, back)


def test_a_lesson_that_opens_with_a_discussion_keeps_it_first(tmp_path: Path) -> None:
    lesson = Lesson(title="T", scenes=[
        DiscussionScene(type="discussion", id="warmup", topic="What is a fraction?", initiator="curious_student",
                        script=[ScriptStep(say="Half a pizza!", by="class_clown")]),
        SlideScene(type="slide", id="s", title="Halves", elements=[SlideElement(id="t", content="Halves")],
                   script=[ScriptStep(say="Two equal parts.")])])
    data, _ = classroom_zip(lesson, class_agents(lesson))
    path = tmp_path / "first.maic.zip"
    path.write_bytes(data)
    back, _ = read_classroom(path)
    _same(lesson, back)
