"""Named lessons: ``maic lesson list``, ``maic chat --lesson NAME``, ``/lesson NAME``, ``/ask ID``, ``@ID``,
the built-in lessons themselves, and the offline header that offers them."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.chat.notices import model_notice
from maic_cli.cli.app import app
from maic_cli.errors import InputError
from maic_cli.lessons.lesson import DiscussionScene, QuizScene, SlideScene
from maic_cli.llm.spec import ModelSpec
from maic_cli.store.lessons import list_lessons, load_lesson, named_lessons, resolve_lesson
from tests.helpers import decision, reply

runner = CliRunner()
ROOT = Path(__file__).parent.parent
BUILT_IN = sorted(p.stem for p in (ROOT / "lessons").glob("*.yaml"))


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_built_in_lesson_is_a_whole_lesson(name: str) -> None:
    lesson = load_lesson(ROOT / "lessons" / f"{name}.yaml")
    kinds = {type(scene) for scene in lesson.scenes}
    assert {SlideScene, DiscussionScene, QuizScene} <= kinds
    assert any(scene.script for scene in lesson.scenes if isinstance(scene, SlideScene))
    questions = [q for scene in lesson.scenes if isinstance(scene, QuizScene) for q in scene.questions]
    assert any(q.answer for q in questions) and any(q.rubric for q in questions)


def test_at_least_three_subjects_and_two_levels() -> None:
    lessons = [load_lesson(ROOT / "lessons" / f"{name}.yaml") for name in BUILT_IN]
    assert len(lessons) >= 4 and len({lesson.level for lesson in lessons}) >= 2


def test_the_wheel_ships_the_lessons() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert include["lessons"] == "maic_cli/_defaults/lessons"


def test_names_resolve_to_built_in_lessons_and_paths_stay_paths(maic_home: Path, tmp_path: Path) -> None:
    assert named_lessons()["photosynthesis"] == ROOT / "lessons" / "photosynthesis.yaml"
    assert resolve_lesson("fractions") == ROOT / "lessons" / "fractions.yaml"
    assert resolve_lesson("./fractions") == Path("./fractions")  # looks like a path: read as one
    assert resolve_lesson(str(tmp_path / "x.yaml")) == tmp_path / "x.yaml"
    with pytest.raises(InputError, match=r"no lesson named 'nope' \(lessons: .*photosynthesis.*; a .yaml file"):
        resolve_lesson("nope")


def test_a_users_lesson_shadows_the_built_in_one_and_a_broken_one_is_listed(maic_home: Path) -> None:
    mine = maic_home / "lessons"
    mine.mkdir()
    (mine / "photosynthesis.yaml").write_text((ROOT / "lessons" / "fractions.yaml").read_text(encoding="utf-8"),
                                              encoding="utf-8")
    (mine / "broken.yaml").write_text("title: x\nscenes: []\n", encoding="utf-8")
    assert resolve_lesson("photosynthesis") == mine / "photosynthesis.yaml"
    entries = {entry.name: entry for entry in list_lessons()}
    assert entries["broken"].lesson is None and "scenes" in (entries["broken"].problem or "")
    assert entries["photosynthesis"].lesson is not None and "Fractions" in entries["photosynthesis"].lesson.title


def test_lesson_list_names_title_level_and_scenes(maic_home: Path) -> None:
    result = runner.invoke(app, ["lesson", "list"])
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert "How plants make food: photosynthesis · beginner · 5 scenes (3 slides, 1 discussion, 1 quiz)" \
        in lines["photosynthesis"]
    assert "Why Earth has seasons · intermediate" in lines["seasons"]
    assert "fractions" in lines and "play one: maic chat --lesson NAME" in result.stdout


def script(tmp_path: Path, *replies: object) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(list(replies)), encoding="utf-8")
    return f"scripted:{path}"


def test_chat_plays_a_lesson_by_name(maic_home: Path, tmp_path: Path) -> None:
    model = script(tmp_path, decision("teacher"), reply("Light, water and carbon dioxide."), decision("END"))
    result = runner.invoke(app, ["chat", "--model", model, "--session", str(tmp_path / "s.json"),
                                 "--lesson", "photosynthesis"], input="What does a plant need?\n")
    assert result.exit_code == 0, result.output
    assert "Lesson: How plants make food: photosynthesis (photosynthesis)" in result.stdout
    assert "Ms. Rivera: Light, water and carbon dioxide." in result.stdout


def test_chat_with_an_unknown_lesson_name_is_one_line(maic_home: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(tmp_path / "s.json"),
                                 "--lesson", "nope"], input="")
    assert result.exit_code == 2
    assert "no lesson named 'nope'" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "s.json").exists()


def test_slash_lesson_by_name_then_ask_about_an_element(maic_home: Path, tmp_path: Path) -> None:
    model = script(tmp_path, decision("teacher"), reply("The 4 says how many equal slices."), decision("END"),
                   decision("teacher"), reply("Three slices of four are shaded."), decision("END"))
    stdin = "/lesson fractions\n/ask three_quarters what does the 4 mean?\n@pizza why three?\n/ask nope hi\n"
    result = runner.invoke(app, ["chat", "--model", model, "--session", str(tmp_path / "s.json")], input=stdin)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Lesson: Fractions: equal parts of a whole (fractions)" in out
    assert out.count("[spotlight on three_quarters]") >= 2  # the script's, then the question's
    assert "Ms. Rivera: The 4 says how many equal slices." in out
    assert "[spotlight on pizza]" in out and "Ms. Rivera: Three slices of four are shaded." in out
    assert "no element 'nope' on this slide (its elements: idea, three_quarters, numbers, pizza)" in result.stderr


def test_ask_without_a_lesson_says_how_to_open_one(maic_home: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(tmp_path / "s.json")],
                           input="/ask leaf why?\n")
    assert result.exit_code == 0
    assert "/ask: no lesson in this class; /lesson NAME opens one" in result.stderr


def test_the_offline_header_offers_the_lessons_unless_a_lesson_is_on() -> None:
    bare = model_notice(ModelSpec.parse("local")) or ""
    assert "small offline model" in bare and "--lesson photosynthesis" in bare and "maic lesson list" in bare
    assert "\n" not in bare
    assert "--lesson" not in (model_notice(ModelSpec.parse("local"), lesson=True) or "")
    assert model_notice(ModelSpec.parse("openai/gpt-4o-mini")) is None
