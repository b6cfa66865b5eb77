"""``maic lesson new`` may give a student a line of the lecture (``by:``), on scripted replies.

The lecture step's prompt names the students and its schema allows ``{"say", "by"}`` with their
ids; a line by a student of the class is kept as theirs, one by anyone else is the teacher's (a
counted fix-up).  Small models' fixed shapes do not get it.
"""

from __future__ import annotations

import json
from typing import Any

from maic_cli.authoring.schemas import COMPACT, script_schema
from maic_cli.lessons.lesson import SlideScene
from tests.lesson_steps import SCRIPT, generate, replies

SPOKEN = {"steps": [{"spotlight": "question"}, {"say": "A tree weighs tonnes. Where does that come from?"},
                    {"say": "From the soil, surely?", "by": "curious_student"},
                    {"say": "Not the soil, Mia: mostly the air.", "by": "ghost"},
                    {"laser": "inputs"}, {"say": "Carbon dioxide goes in through the leaves."}]}


def test_a_student_line_of_the_lecture_is_kept_and_a_stranger_s_is_the_teacher_s() -> None:
    result, llm = generate(replies((3, json.dumps(SPOKEN))))
    slide = next(s for s in result.lesson.scenes if isinstance(s, SlideScene))
    assert [(step.say, step.by) for step in slide.script if step.say] == [
        ("A tree weighs tonnes. Where does that come from?", None),
        ("From the soil, surely?", "curious_student"),
        ("Not the soil, Mia: mostly the air.", None),
        ("Carbon dioxide goes in through the leaves.", None)]
    assert result.fixes["script lines by someone outside the class given to the teacher"] == 1
    call = llm.calls[3]
    prompt = "\n".join(m["content"] for m in call.messages)
    assert "curious_student (Mia)" in prompt and '"by": the id of a student' in prompt
    variants: list[dict[str, Any]] = call.response_schema["properties"]["steps"]["items"]["anyOf"]  # type: ignore[index]
    spoken = [v for v in variants if "by" in v["properties"]]
    assert [v["properties"]["by"]["enum"] for v in spoken] == [["curious_student"]]


def test_no_students_no_by_and_small_models_keep_their_fixed_shapes() -> None:
    result, llm = generate(replies(), initiators=())
    prompt = "\n".join(m["content"] for m in llm.calls[3].messages)
    assert '"by"' not in prompt and "by" not in json.dumps(llm.calls[3].response_schema)
    slide = result.lesson.scenes[0]
    assert isinstance(slide, SlideScene) and SCRIPT["steps"][1]["say"] in [s.say for s in slide.script]
    assert '"by"' not in json.dumps(script_schema(["idea", "points"], COMPACT, ["curious_student"]))
