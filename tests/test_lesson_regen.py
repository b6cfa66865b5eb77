"""``maic lesson regen``: one scene written again by a (scripted) model, every other byte of the file kept."""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.lessons.lesson import QuizScene, SlideScene
from maic_cli.store.lesson_splice import scene_lines
from maic_cli.store.lessons import load_lesson
from tests.lesson_steps import DISCUSSION, ELEMENTS, QUIZ, SCRIPT, script_file

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "lessons" / "photosynthesis.yaml"


def _regen(tmp_path: Path, lesson: Path, replies: list[object], *args: str) -> tuple[object, Path]:
    model = script_file(tmp_path, [json.dumps(r) for r in replies])
    result = CliRunner().invoke(app, ["lesson", "regen", str(lesson), "--model", f"scripted:{model}", *args])
    return result, model


def _changed_lines(old: str, new: str) -> list[tuple[int, int]]:
    """The ranges of ``old``'s lines that differ in ``new``."""
    matcher = difflib.SequenceMatcher(None, old.splitlines(keepends=True), new.splitlines(keepends=True),
                                      autojunk=False)
    return [(i1, i2) for tag, i1, i2, _, _ in matcher.get_opcodes() if tag != "equal"]


@pytest.mark.parametrize(("scene", "replies"), [("equation", [ELEMENTS, SCRIPT]), ("needs", [ELEMENTS, SCRIPT]),
                                                ("talk", [DISCUSSION]), ("check", [QUIZ])])
def test_one_scene_is_replaced_and_every_other_byte_kept(tmp_path: Path, scene: str, replies: list[object]) -> None:
    lesson = tmp_path / "photosynthesis.yaml"
    shutil.copy(SAMPLE, lesson)
    old_text = lesson.read_text(encoding="utf-8")
    before = load_lesson(lesson)
    index = [s.id for s in before.scenes].index(scene)
    result, _ = _regen(tmp_path, lesson, replies, "--scene", scene, "--instruction", "use a kitchen example")
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    out = tmp_path / "photosynthesis-2.yaml"
    assert result.stdout.strip() == str(out)  # type: ignore[attr-defined]
    assert lesson.read_text(encoding="utf-8") == old_text  # the old file is kept
    new_text = out.read_text(encoding="utf-8")
    first, last, _ = scene_lines(old_text, index, lesson)
    old_lines = old_text.splitlines(keepends=True)
    assert new_text.startswith("".join(old_lines[:first])) and new_text.endswith("".join(old_lines[last:]))
    assert all(first <= i1 and i2 <= last for i1, i2 in _changed_lines(old_text, new_text))
    after = load_lesson(out)
    assert [s.id for s in after.scenes] == [s.id for s in before.scenes]
    assert [s for i, s in enumerate(after.scenes) if i != index] == [s for i, s in enumerate(before.scenes)
                                                                      if i != index]
    assert after.scenes[index] != before.scenes[index]
    changed = after.scenes[index]
    if isinstance(changed, SlideScene):
        assert [e.id for e in changed.elements] == ["question", "inputs", "parts"]
    if isinstance(changed, QuizScene):
        assert changed.questions[0].explanation


def test_the_model_sees_the_outline_the_neighbours_and_the_instruction(tmp_path: Path) -> None:
    import asyncio

    from maic_cli.authoring.generation import LessonBrief
    from maic_cli.authoring.scenes import regenerate_scene
    from maic_cli.llm.scripted import ScriptedLLM

    lesson = load_lesson(SAMPLE)
    llm = ScriptedLLM([json.dumps(ELEMENTS), json.dumps(SCRIPT)])
    result = asyncio.run(regenerate_scene(lesson, 1, LessonBrief(topic=lesson.title), llm,
                                          instruction="use a kitchen example"))
    slide_prompt, script_prompt = (call.messages[-1]["content"] for call in llm.calls)
    assert "The teacher asks for this slide: use a kitchen example" in slide_prompt
    assert "What a plant needs" in slide_prompt and "Why it matters" in slide_prompt  # the neighbours
    assert "1. What a plant needs; 2. The overall reaction; 3. Why it matters" in script_prompt  # the outline
    assert "carry on without a greeting" in script_prompt
    assert 'ended with: "The leaf takes in carbon dioxide through tiny pores, and the roots send water up the stem."' \
        in script_prompt
    assert result.lesson.scenes[0] == lesson.scenes[0] and result.lesson.scenes[1].id == "equation"


def test_force_replaces_the_scene_in_the_file_itself(tmp_path: Path) -> None:
    lesson = tmp_path / "l.yaml"
    shutil.copy(SAMPLE, lesson)
    result, _ = _regen(tmp_path, lesson, [DISCUSSION], "--scene", "4", "--force")
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".yaml") == ["l.yaml", "replies.yaml"]
    assert load_lesson(lesson).scenes[3].topic == DISCUSSION["topic"]  # type: ignore[union-attr]


@pytest.mark.parametrize(("args", "problem"), [(["--scene", "nope"], "'nope' is not a scene of"),
                                               (["--scene", "9"], "is not a scene of"),
                                               (["--scene", "talk", "--instruction", " "], "--instruction")])
def test_a_bad_scene_or_instruction_is_one_line_before_any_call(tmp_path: Path, args: list[str], problem: str) -> None:
    result, _ = _regen(tmp_path, SAMPLE, [], *args)
    assert result.exit_code == 2 and problem in result.stderr  # type: ignore[attr-defined]
    assert result.stderr.count("\n") == 1  # type: ignore[attr-defined]


def test_a_failed_generation_writes_nothing(tmp_path: Path) -> None:
    lesson = tmp_path / "l.yaml"
    shutil.copy(SAMPLE, lesson)
    result, _ = _regen(tmp_path, lesson, ["no json", "still none", "nope"], "--scene", "talk")
    assert result.exit_code == 1 and "failed" in result.stderr  # type: ignore[attr-defined]
    assert not (tmp_path / "l-2.yaml").exists()


def test_a_scene_written_in_flow_style_is_replaced_too(tmp_path: Path) -> None:
    lesson = tmp_path / "flow.yaml"
    lesson.write_text("title: T  # a comment\nscenes:\n- {type: slide, id: a, title: A}\n"
                      "# between\n- {type: discussion, id: b, topic: old}\n- type: slide\n  id: c\n  title: C\n",
                      encoding="utf-8")
    result, _ = _regen(tmp_path, lesson, [DISCUSSION], "--scene", "b", "--force")
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    text = lesson.read_text(encoding="utf-8")
    assert text.startswith("title: T  # a comment\nscenes:\n- {type: slide, id: a, title: A}\n# between\n- type: "
                           "discussion\n  id: b\n")
    assert text.endswith("- type: slide\n  id: c\n  title: C\n")
    assert load_lesson(lesson).scenes[1].topic == DISCUSSION["topic"]  # type: ignore[union-attr]
