"""OpenMAIC's classroom ZIP, in and out: `maic lesson import class.maic.zip`, `maic lesson export --out x.maic.zip`.

The classroom made here follows OpenMAIC's own format (lib/export/classroom-zip-types.ts: manifest.json with
stage, agents, scenes of PPTist canvases and actions, mediaIndex), as its web app writes it; the checks of
`manifest_problems` are the ones its importer makes before it accepts a classroom.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.errors import InputError
from maic_cli.formats.openmaic_format import manifest_problems
from maic_cli.formats.openmaic_read import read_classroom
from maic_cli.formats.openmaic_write import classroom_manifest, classroom_zip
from maic_cli.lessons.lesson import DiscussionScene, QuizScene, SlideScene
from maic_cli.store.lesson_class import class_agents
from maic_cli.store.lessons import load_lesson

LESSONS = Path(__file__).resolve().parent.parent / "lessons"


def _text(element_id: str, html: str, top: float, **extra: Any) -> dict[str, Any]:
    return {"id": element_id, "type": "text", "left": 60, "top": top, "width": 800, "height": 60, "rotate": 0,
            "content": html, "defaultFontName": "Microsoft YaHei", "defaultColor": "#333333", **extra}


def web_app_classroom() -> dict[str, Any]:
    """A classroom as OpenMAIC's web app exports it: nanoid-like element ids, HTML text, PPTist elements."""
    canvas = {
        "id": "Ab3kZ9", "viewportSize": 1000, "viewportRatio": 0.5625,
        "theme": {"backgroundColor": "#fff", "themeColors": ["#5b9bd5"], "fontColor": "#333", "fontName": "YaHei"},
        "elements": [
            {"id": "shape_1", "type": "shape", "left": 0, "top": 500, "width": 1000, "height": 62, "rotate": 0,
             "viewBox": [200, 200], "path": "M 0 0 L 200 0", "fixedRatio": False, "fill": "#5b9bd5"},
            _text("vC1_title", '<p><strong><span style="font-size: 32px">Light and plants</span></strong></p>', 20,
                  textType="title"),
            _text("k8_body", "<p>Plants turn light into sugar.</p>", 120),
            _text("k9_list", "<ul><li><p>water</p></li><li><p>carbon dioxide</p></li>"
                             "<li><p>light <script>alert(1)</script>&amp; warmth</p></li></ul>", 200),
            {"id": "eq", "type": "latex", "left": 60, "top": 300, "width": 400, "height": 60, "rotate": 0,
             "latex": "6CO_2 + 6H_2O \\rightarrow C_6H_{12}O_6 + 6O_2"},
            {"id": "tbl", "type": "table", "left": 60, "top": 380, "width": 600, "height": 90, "rotate": 0,
             "outline": {}, "colWidths": [0.5, 0.5], "cellMinHeight": 36,
             "data": [[{"id": "c1", "colspan": 1, "rowspan": 1, "text": "In"},
                       {"id": "c2", "colspan": 1, "rowspan": 1, "text": "Out"}],
                      [{"id": "c3", "colspan": 1, "rowspan": 1, "text": "CO2"},
                       {"id": "c4", "colspan": 1, "rowspan": 1, "text": "O2"}]]},
            {"id": "img1", "type": "image", "left": 700, "top": 120, "width": 200, "height": 150, "rotate": 0,
             "fixedRatio": True, "src": "gen_img_1", "name": "A leaf in sunlight"},
            {"id": "ln", "type": "line", "left": 0, "top": 100, "width": 3, "start": [0, 0], "end": [900, 0],
             "style": "solid", "color": "#999", "points": ["", ""]},
            {"id": "vid", "type": "video", "left": 0, "top": 0, "width": 10, "height": 10, "rotate": 0,
             "src": "https://example.org/v.mp4", "autoplay": False},
        ],
    }
    return {
        "formatVersion": 1, "exportedAt": "2026-11-30T10:00:00.000Z", "appVersion": "0.9.1",
        "stage": {"name": "Photosynthesis \x1b[31mlive\x1b[0m", "description": "How plants eat.",
                  "language": "en-US", "createdAt": 1, "updatedAt": 2},
        "agents": [{"name": "Dr. Lin", "role": "teacher", "persona": "Kind.", "avatar": "👩", "color": "#336",
                    "priority": 10},
                   {"name": "Bo", "role": "student", "persona": "Curious.", "avatar": "🧒", "color": "#633",
                    "priority": 5}],
        "scenes": [
            {"type": "quiz", "title": "Check", "order": 3, "content": {"type": "quiz", "questions": [
                {"id": "q1", "type": "single", "question": "What do plants make?",
                 "options": [{"label": "Sugar", "value": "A"}, {"label": "Salt", "value": "B"}], "answer": ["A"],
                 "analysis": "Glucose is a sugar.", "points": 2},
                {"id": "q2", "type": "multiple", "question": "What do they need?",
                 "options": [{"label": "Light", "value": "A"}, {"label": "Noise", "value": "B"},
                             {"label": "Water", "value": "C"}], "answer": ["A", "C"]},
                {"id": "q3", "type": "short_answer", "question": "Why are leaves green?",
                 "commentPrompt": "Chlorophyll reflects green light."},
                {"id": "q4", "type": "single", "question": "Broken", "options": [], "answer": ["A"]},
            ]}},
            {"type": "slide", "title": "Light and plants", "order": 1, "content": {"type": "slide", "canvas": canvas},
             "actions": [
                 {"id": "a1", "type": "speech", "text": "Plants make food from light.", "audioRef": "audio/a1.mp3"},
                 {"id": "a2", "type": "spotlight", "elementId": "k9_list"},
                 {"id": "a3", "type": "speech", "text": "They need three things."},
                 {"id": "a4", "type": "laser", "elementId": "vid"},
                 {"id": "a5", "type": "wb_draw_text", "content": "hi", "x": 1, "y": 2},
                 {"id": "a6", "type": "discussion", "topic": "Could a plant live in the dark?", "prompt": "Why?",
                  "agentIndex": 1},
             ]},
            {"type": "interactive", "title": "Simulation", "order": 2,
             "content": {"type": "interactive", "url": "https://example.org/sim"}},
        ],
        "mediaIndex": {"audio/a1.mp3": {"type": "audio", "format": "mp3"}},
    }


def zip_of(manifest: Any, extra: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", manifest if isinstance(manifest, (str, bytes)) else json.dumps(manifest))
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_classroom_of_the_web_app_imports_with_what_did_not_carry_listed(tmp_path: Path) -> None:
    path = tmp_path / "class.maic.zip"
    path.write_bytes(zip_of(web_app_classroom(), {"audio/a1.mp3": b"ID3"}))
    lesson, notes = read_classroom(path)
    assert lesson.title.startswith("Photosynthesis") and "\x1b" not in lesson.title
    assert lesson.description == "How plants eat." and lesson.language == "en-US"
    kinds = [scene.type for scene in lesson.scenes]
    assert kinds == ["slide", "discussion", "quiz"]  # by order; the interactive page is left out
    slide = lesson.scenes[0]
    assert isinstance(slide, SlideScene) and slide.title == "Light and plants" and slide.id == "Ab3kZ9"
    by_id = {e.id: e for e in slide.elements}
    assert [e.type for e in slide.elements] == ["text", "image", "bullets", "formula", "table"]
    assert by_id["k8_body"].content == "Plants turn light into sugar."
    assert by_id["k9_list"].items == ["water", "carbon dioxide", "light & warmth"]  # no script text
    assert by_id["eq"].content.startswith("6CO_2")
    assert by_id["tbl"].rows == [["In", "Out"], ["CO2", "O2"]]
    assert by_id["img1"].content == "A leaf in sunlight"
    steps = [(s.say, s.spotlight, s.laser) for s in slide.script]
    assert steps == [("Plants make food from light.", None, None), (None, "k9_list", None),
                     ("They need three things.", None, None)]  # the laser at the video was dropped
    discussion = lesson.scenes[1]
    assert isinstance(discussion, DiscussionScene)
    assert discussion.topic == "Could a plant live in the dark?" and discussion.prompt == "Why?"
    quiz = lesson.scenes[2]
    assert isinstance(quiz, QuizScene) and [q.id for q in quiz.questions] == ["q1", "q2", "q3"]
    assert quiz.questions[0].answer == ["A"] and quiz.questions[0].points == 2
    assert quiz.questions[0].explanation == "Glucose is a sugar."
    assert quiz.questions[1].type == "multiple" and quiz.questions[1].answer == ["A", "C"]
    assert quiz.questions[2].type == "short" and quiz.questions[2].rubric == "Chlorophyll reflects green light."
    said = "\n".join(notes)
    for expected in ("class of 2 (Dr. Lin, Bo)", "interactive scenes", "whiteboard drawing actions",
                     "pointers at elements that were not kept", "video elements", "line elements",
                     "shapes without text", "quiz questions maic cannot grade"):
        assert expected in said, expected
    assert all("\n" not in note for note in notes)


@pytest.mark.parametrize("name", ["fractions", "photosynthesis", "seasons", "python_loops"])
def test_every_built_in_lesson_goes_out_and_comes_back_the_same(name: str, tmp_path: Path) -> None:
    lesson = load_lesson(LESSONS / f"{name}.yaml")
    data, _ = classroom_zip(lesson, class_agents(lesson))
    path = tmp_path / f"{name}.maic.zip"
    path.write_bytes(data)
    back, _ = read_classroom(path)
    assert back.title == lesson.title and back.description == lesson.description
    assert [s.type for s in back.scenes] == [s.type for s in lesson.scenes]
    for before, after in zip(lesson.scenes, back.scenes, strict=True):
        if isinstance(before, QuizScene):  # a quiz scene's own id has no place in OpenMAIC
            assert isinstance(after, QuizScene)
            assert [q.model_dump() for q in after.questions] == [q.model_dump() for q in before.questions]
        else:
            assert after.model_dump() == before.model_dump()


def test_an_exported_classroom_passes_openmaic_s_import_checks() -> None:
    lesson = load_lesson(LESSONS / "fractions.yaml")
    agents = class_agents(lesson)
    manifest, notes = classroom_manifest(lesson, agents)
    assert manifest_problems(manifest) == []
    assert manifest["formatVersion"] == 1 and manifest["mediaIndex"] == {}
    assert [a["name"] for a in manifest["agents"]] == [a.name for a in agents]
    ids = [a["id"] for scene in manifest["scenes"] for a in scene["actions"]]
    assert len(ids) == len(set(ids))  # every action has its own id
    for scene in manifest["scenes"]:
        assert scene["content"]["type"] == scene["type"]
        if scene["type"] == "slide":
            canvas = scene["content"]["canvas"]
            on_canvas = {element["id"] for element in canvas["elements"]}
            pointed = {a["elementId"] for a in scene["actions"] if a["type"] in ("spotlight", "laser")}
            assert pointed <= on_canvas
            for element in canvas["elements"]:
                assert 0 <= element["top"] and element["top"] + element["height"] <= 562.5
    discussion = next(a for s in manifest["scenes"] for a in s["actions"] if a["type"] == "discussion")
    assert discussion["topic"].startswith("Would you rather") and "agentIndex" not in discussion
    assert any("discussion" in note for note in notes) and any("picture" in note for note in notes)


def test_the_commands_move_a_class_both_ways(tmp_path: Path) -> None:
    out = tmp_path / "fractions.maic.zip"
    result = CliRunner().invoke(app, ["lesson", "export", str(LESSONS / "fractions.yaml"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with zipfile.ZipFile(out) as archive:
        assert archive.namelist() == ["manifest.json"]
    back = tmp_path / "back.yaml"
    result = CliRunner().invoke(app, ["lesson", "import", str(out), "--out", str(back)])
    assert result.exit_code == 0, result.output
    assert "not carried" in result.output
    assert load_lesson(back).title == load_lesson(LESSONS / "fractions.yaml").title


@pytest.mark.parametrize(("content", "said"), [
    (b"not a zip", "not a readable classroom zip"),
    (None, "no manifest.json"),
    ("{not json", "not JSON (line 1, column 2)"),
    ("[" * 5000 + "]" * 5000, "manifest"),
    (json.dumps({"stage": {}, "scenes": "no"}), "no stage object or no scenes list"),
    (json.dumps({"stage": {}, "scenes": [{"type": "video", "content": {}}]}), "no slide, quiz or discussion"),
    (json.dumps({"stage": {}, "scenes": [{"type": "slide", "content": {"type": "slide"}}]}),
     "no slide, quiz or discussion"),
    (json.dumps({"stage": {}, "scenes": [], "agents": [{"name": "x"}]}), "no slide, quiz or discussion"),
    (json.dumps({"formatVersion": 9, "stage": {}, "scenes": []}), "formatVersion: 9 is newer"),
    (json.dumps({"stage": {}, "scenes": [{"type": "interactive", "content": {"type": "interactive", "url": "x"}}]}),
     "no slide, quiz or discussion maic can play"),
])
def test_a_broken_classroom_is_one_line(tmp_path: Path, content: Any, said: str) -> None:
    path = tmp_path / "bad.maic.zip"
    if content is None:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("other.json", "{}")
        path.write_bytes(buffer.getvalue())
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(zip_of(content))
    with pytest.raises(InputError) as caught:
        read_classroom(path)
    message = str(caught.value)
    assert said in message and message.startswith(str(path)) and "\n" not in message
    result = CliRunner().invoke(app, ["lesson", "import", str(path), "--out", str(tmp_path / "x.yaml")])
    assert result.exit_code == 2 and "a bug in maic" not in result.output


def test_a_zip_bomb_and_a_zip_of_many_files_are_refused_unopened(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.maic.zip"
    bomb.write_bytes(zip_of(json.dumps({"stage": {}, "scenes": [], "pad": " " * (30 * 2**20)})))
    with pytest.raises(InputError, match=r"manifest\.json unpacks to"):
        read_classroom(bomb)
    many = tmp_path / "many.maic.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for number in range(5_001):
            archive.writestr(f"media/{number}", b"")
    many.write_bytes(buffer.getvalue())
    with pytest.raises(InputError, match="5,001 files"):
        read_classroom(many)


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                 max_size=4), max_leaves=30)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_manifest_imports_or_is_one_input_error(tmp_path: Path, data: st.DataObject) -> None:
    """Hostile manifests: the web app's classroom with any of its values replaced by any JSON."""
    manifest = web_app_classroom()
    for _ in range(data.draw(st.integers(1, 4))):
        node: Any = manifest
        while isinstance(node, (dict, list)) and node and data.draw(st.booleans()):
            key = data.draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
            if not isinstance(node[key], (dict, list)) or not node[key]:
                node[key] = data.draw(_json)
                break
            node = node[key]
    path = tmp_path / "fuzz.maic.zip"
    path.write_bytes(zip_of(manifest))
    try:
        lesson, notes = read_classroom(path)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    for scene in lesson.scenes:
        if isinstance(scene, SlideScene):
            for element in scene.elements:
                assert "\x1b" not in element.content and "<" not in " ".join(element.items)
    assert all(isinstance(note, str) for note in notes)
