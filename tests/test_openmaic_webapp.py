"""Format fidelity with OpenMAIC (THU-MAIC/OpenMAIC): what its web app writes imports into maic, and what maic
writes carries every field OpenMAIC's types (lib/types/slides.ts, stage.ts, action.ts) and renderer need.

The fixture follows lib/export/use-export-classroom.ts: scenes with their ``order`` (0-based, out of sequence),
``actions`` with ``audioRef`` into ``audio/``, ``whiteboards``, ``multiAgent`` with ``agentIndices``; a
``mediaIndex`` of audio and generated media (``media/<element id>.<ext>`` with its prompt); PPTist elements of
every kind (shapes holding text, charts, code, KaTeX-rendered LaTeX, grouped and rotated elements).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from maic_cli.formats.openmaic_format import manifest_problems
from maic_cli.formats.openmaic_read import read_classroom
from maic_cli.formats.openmaic_write import classroom_manifest, classroom_zip
from maic_cli.lessons.lesson import DiscussionScene, QuizScene, SlideScene
from maic_cli.store.lesson_class import class_agents
from maic_cli.store.lessons import load_lesson

LESSONS = Path(__file__).resolve().parent.parent / "lessons"


def _el(kind: str, eid: str, top: float, left: float = 60, **fields: Any) -> dict[str, Any]:
    return {"id": eid, "type": kind, "left": left, "top": top, "width": 400, "height": 60, "rotate": 0, **fields}


def _shape_text(html: str, kind: str | None = None) -> dict[str, Any]:
    return {"content": html, "defaultFontName": "Microsoft YaHei", "defaultColor": "#333333", "align": "middle",
            **({"type": kind} if kind else {})}


def web_app_manifest() -> dict[str, Any]:
    katex = ('<span class="katex-display"><span class="katex"><span class="katex-mathml"><math><semantics><mrow>'
             '<mi>E</mi></mrow><annotation encoding="application/x-tex">E=mc^2</annotation></semantics></math>'
             '</span><span class="katex-html" aria-hidden="true">E=mc²</span></span></span>')
    shape: dict[str, Any] = {"viewBox": [200, 200], "path": "M 0 0 L 200 0 L 200 200 L 0 200 Z", "fixedRatio": False,
             "fill": "#5b9bd5"}
    elements = [
        _el("shape", "bg", 0, 0, **shape),  # a bare decoration
        _el("shape", "titleShape", 20, **shape, text=_shape_text("<p>Energy</p>", "title")),
        _el("text", "sub", 90, content="<p>Where it comes from</p>", defaultFontName="YaHei", defaultColor="#333",
            textType="subtitle"),
        _el("shape", "callout", 150, 600, **shape, pathFormula="roundRect",
            text=_shape_text("<p>Energy is <strong>conserved</strong>.</p>")),
        _el("text", "pts", 150, groupId="g1", rotate=15, content="<ol><li><p>kinetic</p></li><li><p>potential</p>"
            "</li></ol>", defaultFontName="YaHei", defaultColor="#333", textType="content"),
        _el("chart", "ch", 250, chartType="bar", themeColors=["#5b9bd5"],
            data={"labels": ["2020", "2021"], "legends": ["Solar", "Wind"], "series": [[1, 2], [3, 4.5]]}),
        _el("code", "py", 330, language="python", showLineNumbers=True, fontSize=14, fileName="e.py",
            lines=[{"id": "L1", "content": "def energy(m):"}, {"id": "L2", "content": "    return m * C ** 2"}]),
        _el("latex", "emc", 420, latex="E=mc^2", html=katex, fixedRatio=True, align="center"),
        _el("image", "gen_img_1", 150, 700, fixedRatio=True, src="gen_img_1"),
        _el("video", "vid", 480, 700, src="gen_vid_1", autoplay=False),
        _el("audio", "snd", 480, 900, fixedRatio=True, color="#000", loop=False, autoplay=False, src="x.mp3"),
        {"id": "ln", "type": "line", "left": 0, "top": 140, "width": 2, "start": [0, 0], "end": [900, 0],
         "style": "solid", "color": "#999", "points": ["", "arrow"]},
    ]
    canvas = {"id": "slide_xYz", "viewportSize": 1000, "viewportRatio": 0.5625, "type": "content",
              "theme": {"backgroundColor": "#fff", "themeColors": ["#5b9bd5"], "fontColor": "#333",
                        "fontName": "YaHei"}, "background": {"type": "solid", "color": "#fff"},
              "elements": elements}
    slide = {"type": "slide", "title": "Energy", "order": 0, "content": {"type": "slide", "canvas": canvas},
             "actions": [
                 {"id": "s1", "type": "speech", "text": "Energy never disappears.", "audioRef": "audio/s1.mp3",
                  "voice": "alloy", "speed": 1},
                 {"id": "p1", "type": "spotlight", "elementId": "ch", "dimOpacity": 0.5},
                 {"id": "s2", "type": "speech", "text": "Here it is in code.",
                  "audioUrl": "https://tts.example/s2.mp3"},
                 {"id": "p2", "type": "laser", "elementId": "py", "color": "#ff0000"},
                 {"id": "v1", "type": "play_video", "elementId": "vid"},
                 {"id": "w1", "type": "wb_open"},
                 {"id": "w2", "type": "wb_draw_latex", "latex": "E_k = \\frac12 mv^2", "x": 10, "y": 10},
                 {"id": "w3", "type": "wb_close"},
                 {"id": "d1", "type": "discussion", "topic": "Is a battery a source of energy?",
                  "prompt": "Think about where its energy came from.", "agentId": "agent-2"},
             ],
             "whiteboards": [{"id": "wb1", "viewportSize": 1000, "viewportRatio": 0.5625, "theme": {},
                              "elements": []}],
             "multiAgent": {"enabled": True, "agentIndices": [0, 1], "directorPrompt": "Let the student ask."}}
    quiz = {"type": "quiz", "title": "Check", "order": 1, "actions": [], "content": {"type": "quiz", "questions": [
        {"id": "q_a", "type": "single", "question": "Which is kinetic?", "hasAnswer": True, "points": 5,
         "options": [{"label": "A moving car", "value": "A"}, {"label": "A book on a shelf", "value": "B"}],
         "answer": ["A"], "analysis": "Kinetic energy is energy of motion."},
        {"id": "q_b", "type": "multiple", "question": "Which are renewable?", "hasAnswer": True,
         "options": [{"label": "Solar", "value": "A"}, {"label": "Coal", "value": "B"},
                     {"label": "Wind", "value": "C"}], "answer": ["A", "C"]},
        {"id": "q_c", "type": "short_answer", "question": "Explain conservation of energy.", "hasAnswer": False,
         "commentPrompt": "Full marks if it says energy changes form but the total stays the same.",
         "analysis": "Energy is neither created nor destroyed."}]}}
    interactive = {"type": "interactive", "title": "Lab", "order": 2,
                   "content": {"type": "interactive", "url": "", "html": "<html><script>x()</script></html>",
                               "widgetType": "simulation"},
                   "actions": [{"id": "h1", "type": "widget_highlight", "target": "#slider"}]}
    return {"formatVersion": 1, "exportedAt": "2026-11-30T10:00:00.000Z", "appVersion": "0.2.0",
            "stage": {"name": "Energy", "description": "A short lecture.", "language": "en-US",
                      "style": "professional", "createdAt": 1764000000000, "updatedAt": 1764000000000},
            "agents": [{"name": "Prof", "role": "teacher", "persona": "Friendly.", "avatar": "👨‍🏫",
                        "color": "#4A90D9", "priority": 10},
                       {"name": "Lee", "role": "student", "persona": "", "avatar": "", "color": "#999",
                        "priority": 1}],  # an agent OpenMAIC's importer takes, though fields are empty
            "scenes": [interactive, quiz, slide],  # out of order in the list; order says 0, 1, 2
            "mediaIndex": {"audio/s1.mp3": {"type": "audio", "format": "mp3", "duration": 2.5, "voice": "alloy"},
                           "audio/gone.mp3": {"type": "audio", "missing": True},
                           "media/gen_img_1.png": {"type": "generated", "mimeType": "image/png", "size": 3,
                                                   "prompt": "A wind turbine on a hill at sunset"},
                           "media/gen_vid_1.mp4": {"type": "generated", "mimeType": "video/mp4", "size": 3}}}


def test_the_web_app_s_classroom_imports_with_its_real_element_shapes(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(web_app_manifest(), ensure_ascii=False, indent=2))
        for name in ("audio/s1.mp3", "media/gen_img_1.png", "media/gen_vid_1.mp4", "media/gen_vid_1.poster.jpg"):
            archive.writestr(name, b"\x00\x01\x02")
    path = tmp_path / "Energy.maic.zip"
    path.write_bytes(buffer.getvalue())
    lesson, notes = read_classroom(path)
    assert [scene.type for scene in lesson.scenes] == ["slide", "discussion", "quiz"]
    slide = lesson.scenes[0]
    assert isinstance(slide, SlideScene) and slide.id == "slide_xYz"
    by_id = {element.id: element for element in slide.elements}
    assert "titleShape" not in by_id  # a shape's title text is the scene's title
    assert by_id["sub"].content == "Where it comes from"
    assert by_id["callout"].content == "Energy is conserved."
    assert by_id["pts"].type == "bullets" and by_id["pts"].items == ["kinetic", "potential"]
    assert by_id["ch"].type == "table" and by_id["ch"].rows == [["", "2020", "2021"], ["Solar", "1", "2"],
                                                                ["Wind", "3", "4.5"]]
    assert by_id["py"].type == "code" and by_id["py"].language == "python"
    assert by_id["py"].content == "def energy(m):\n    return m * C ** 2\n"
    assert by_id["emc"].type == "formula" and by_id["emc"].content == "E=mc^2"
    assert by_id["gen_img_1"].type == "image" and by_id["gen_img_1"].content == "A wind turbine on a hill at sunset"
    assert not {"bg", "vid", "snd", "ln"} & set(by_id)
    assert [(s.say, s.spotlight, s.laser) for s in slide.script] == [
        ("Energy never disappears.", None, None), (None, "ch", None), ("Here it is in code.", None, None),
        (None, None, "py")]
    discussion = lesson.scenes[1]
    assert isinstance(discussion, DiscussionScene)
    assert discussion.topic == "Is a battery a source of energy?"
    assert discussion.prompt == "Think about where its energy came from."
    quiz = lesson.scenes[2]
    assert isinstance(quiz, QuizScene) and [q.id for q in quiz.questions] == ["q_a", "q_b", "q_c"]
    assert quiz.questions[0].points == 5 and quiz.questions[0].explanation == "Kinetic energy is energy of motion."
    assert quiz.questions[1].answer == ["A", "C"]
    assert quiz.questions[2].rubric is not None and quiz.questions[2].rubric.startswith("Full marks")
    assert quiz.questions[2].explanation == "Energy is neither created nor destroyed."
    said = "\n".join(notes)
    for expected in ("class of 2 (Prof, Lee)", "video elements", "audio elements", "line elements",
                     "shapes without text", "chart(s) read as the table", "play_video actions",
                     "whiteboard drawing actions", "scenes' whiteboards", "multiAgent",
                     "interactive scenes"):
        assert expected in said, expected


_NEEDS: dict[str, tuple[str, ...]] = {  # what lib/types/slides.ts requires of each element (besides the base)
    "text": ("content", "defaultFontName", "defaultColor"),
    "latex": ("latex", "html"),  # the renderer (BaseLatexElement) draws html, else path + viewBox, else nothing
    "table": ("outline", "colWidths", "cellMinHeight", "data"),
    "code": ("language", "lines"),
}


def test_what_maic_writes_has_every_field_openmaic_needs() -> None:
    for name in ("fractions", "photosynthesis", "seasons", "python_loops"):
        lesson = load_lesson(LESSONS / f"{name}.yaml")
        manifest, _ = classroom_manifest(lesson, class_agents(lesson))
        assert manifest_problems(manifest) == []
        assert set(manifest) == {"formatVersion", "exportedAt", "appVersion", "stage", "agents", "scenes",
                                 "mediaIndex"}
        assert {"name", "createdAt", "updatedAt"} <= set(manifest["stage"])
        for scene in manifest["scenes"]:
            assert {"type", "title", "order", "content"} <= set(scene)
            for action in scene["actions"]:
                assert isinstance(action["id"], str) and action["type"] in (
                    "speech", "spotlight", "laser", "discussion")
                assert "agentIndex" not in action
            if scene["type"] == "quiz":
                for question in scene["content"]["questions"]:
                    assert {"id", "type", "question", "hasAnswer"} <= set(question)
                    if question["type"] != "short_answer":
                        assert [o["value"] for o in question["options"]] == list("ABCDEFGH")[:len(
                            question["options"])]
                        assert set(question["answer"]) <= {o["value"] for o in question["options"]}
                continue
            canvas = scene["content"]["canvas"]
            assert {"id", "viewportSize", "viewportRatio", "theme", "elements"} <= set(canvas)
            for element in canvas["elements"]:
                assert {"id", "type", "left", "top", "width", "height", "rotate"} <= set(element)
                assert set(_NEEDS.get(element["type"], ())) <= set(element), element
                if element["type"] == "code":
                    assert all(set(row) == {"id", "content"} for row in element["lines"])
                if element["type"] == "table":
                    assert all({"id", "colspan", "rowspan", "text"} <= set(cell) for row in element["data"]
                               for cell in row)


def test_code_and_formulas_go_out_as_openmaic_s_own_elements(tmp_path: Path) -> None:
    lesson = load_lesson(LESSONS / "python_loops.yaml")
    data, notes = classroom_zip(lesson, class_agents(lesson))
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("manifest.json"))
    kinds = {element["type"] for scene in manifest["scenes"] if scene["type"] == "slide"
             for element in scene["content"]["canvas"]["elements"]}
    assert "code" in kinds
    code = next(element for scene in manifest["scenes"] if scene["type"] == "slide"
                for element in scene["content"]["canvas"]["elements"] if element["type"] == "code")
    assert code["lines"][0]["id"] == "L1" and "\n" not in "".join(row["content"] for row in code["lines"])
    fractions = load_lesson(LESSONS / "fractions.yaml")
    manifest, notes = classroom_manifest(fractions, class_agents(fractions))
    formulas = [element for scene in manifest["scenes"] if scene["type"] == "slide"
                for element in scene["content"]["canvas"]["elements"] if element["type"] == "latex"]
    assert formulas and all(element["html"].startswith('<span class="maic-latex"') for element in formulas)
    assert all(element["latex"] in element["html"] or "&" in element["html"] for element in formulas)
    assert any("LaTeX source" in note for note in notes)
