"""OpenMAIC classrooms carry maic's class and OpenMAIC's: agents, who opens a discussion, quiz speech, voices, MathML.

Round trips through the zip both ways: a classroom written as OpenMAIC's web app writes it comes in with its
agents as the lesson's class (persona files beside the lesson), its quiz speech and its discussions' openers; a
lesson goes out with its formulas as MathML and, with ``--voice``, every line's audio in the zip (OpenMAIC's
``audio/…`` files, ``mediaIndex`` entries and each speech action's ``audioRef``), decoded by ffmpeg's probe.
"""

from __future__ import annotations

import io
import json
import shutil
import xml.etree.ElementTree as ElementTree
import zipfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.models import SlideElement
from maic_cli.formats.openmaic_read import read, read_classroom
from maic_cli.formats.openmaic_voices import Voicing
from maic_cli.formats.openmaic_write import classroom_manifest, classroom_zip
from maic_cli.lessons.lesson import DiscussionScene, Lesson, QuizQuestion, QuizScene, ScriptStep, SlideScene
from maic_cli.speech.port import Audio, Voice
from maic_cli.store.lesson_class import class_agents
from maic_cli.store.lessons import load_lesson
from maic_cli.store.personas import load_persona
from maic_cli.ui.mathml import mathml

LESSONS = Path(__file__).resolve().parent.parent / "lessons"


def _zip(manifest: dict[str, Any], extra: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("manifest.json", json.dumps(manifest))
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _slide(title: str, order: int, actions: list[dict[str, Any]]) -> dict[str, Any]:
    canvas = {"id": f"c{order}", "viewportSize": 1000, "viewportRatio": 0.5625, "theme": {}, "elements": [
        {"id": f"t{order}", "type": "text", "left": 60, "top": 120, "width": 800, "height": 60, "rotate": 0,
         "content": "<p>Light feeds the leaf.</p>"}]}
    return {"type": "slide", "title": title, "order": order, "actions": actions,
            "content": {"type": "slide", "canvas": canvas}}


def server_classroom(version: int = 1) -> dict[str, Any]:
    """A classroom as OpenMAIC's server generates and its web app exports it: generated agents (their ids
    ``gen-server-N``), a quiz scene that speaks, discussions naming their agent, audio for a line."""
    quiz = {"type": "quiz", "title": "Check", "order": 2,
            "content": {"type": "quiz", "questions": [
                {"id": "q1", "type": "single", "question": "What feeds a leaf?",
                 "options": [{"label": "Light", "value": "A"}, {"label": "Noise", "value": "B"}], "answer": ["A"]}]},
            "actions": [{"id": "s9", "type": "speech", "text": "Let us check what stuck."},
                        {"id": "s10", "type": "speech", "text": "Take your time."}]}
    return {
        "formatVersion": version, "exportedAt": "2026-12-01T10:00:00.000Z", "appVersion": "0.9.3",
        "stage": {"name": "Leaves", "createdAt": 1, "updatedAt": 2},
        "agents": [
            {"name": "Dr. Lin", "role": "teacher", "persona": "A patient botanist.\x1b[31m", "avatar": "/avatars/t.png",
             "color": "#336699", "priority": 10, "voiceConfig": {"providerId": "openai-tts", "voiceId": "nova"}},
            {"name": "Bo", "role": "student", "persona": "Asks why, twice.", "avatar": "🧒", "color": "#663300",
             "priority": 5},
            {"name": "显眼包", "role": "student", "persona": "Jokes first.", "avatar": "🤡", "color": "red",
             "priority": 99}],
        "scenes": [
            _slide("Light", 1, [
                {"id": "s1", "type": "speech", "text": "Leaves eat light.", "audioRef": "audio/s1.mp3"},
                {"id": "d1", "type": "discussion", "topic": "Could a leaf eat moonlight?", "agentId": "gen-server-1"},
                {"id": "d2", "type": "discussion", "topic": "Why are leaves flat?", "agentId": "gen-Xa81kq2z"}]),
            quiz,
        ],
        "mediaIndex": {"audio/s1.mp3": {"type": "audio", "format": "mp3", "duration": 1.2},
                       "audio/missing.mp3": {"type": "audio", "missing": True}},
    }


def test_openmaic_s_agents_become_the_lesson_s_class_with_their_openers_and_quiz_speech(tmp_path: Path) -> None:
    path = tmp_path / "leaves.maic.zip"
    path.write_bytes(_zip(server_classroom(), {"audio/s1.mp3": b"ID3"}))
    classroom = read(path)
    lesson = classroom.lesson
    assert lesson.agents == ["dr_lin", "bo", "student_3"]
    by_id = {agent.id: agent for agent in classroom.personas}
    assert by_id["dr_lin"].role == "teacher" and by_id["dr_lin"].persona == "A patient botanist."
    assert by_id["dr_lin"].avatar == "🙂" and by_id["dr_lin"].color == "#336699"  # a picture's path is no avatar
    assert by_id["bo"].persona == "Asks why, twice." and by_id["bo"].avatar == "🧒"
    assert by_id["student_3"].name == "显眼包" and by_id["student_3"].priority == 10 and by_id["student_3"].color == \
        "white"
    kinds = [(scene.type, scene.id) for scene in lesson.scenes]
    assert [kind for kind, _ in kinds] == ["slide", "discussion", "discussion", "slide", "quiz"]
    first, second = lesson.scenes[1], lesson.scenes[2]
    assert isinstance(first, DiscussionScene) and first.initiator == "bo"  # gen-server-1: the second agent
    assert isinstance(second, DiscussionScene) and second.initiator is None  # an id the zip does not identify
    intro = lesson.scenes[3]
    assert isinstance(intro, SlideScene) and intro.title == "Check" and intro.elements == []
    assert [step.say for step in intro.script] == ["Let us check what stuck.", "Take your time."]
    said = "\n".join(classroom.notes)
    for expected in ("class of 3 (Dr. Lin, Bo, 显眼包) is the lesson's class (3 persona(s)",
                     "1 agent(s)' OpenMAIC voice (voiceConfig): not carried", "1 audio clip(s)",
                     "1 discussion(s) whose agentId names no agent", "quiz scene(s)' speech said on a slide"):
        assert expected in said, expected
    assert all("\n" not in note and "\x1b" not in note for note in classroom.notes)


def test_a_newer_format_is_read_with_a_note_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "next.maic.zip"
    manifest = server_classroom(version=7)
    manifest["scenes"][0]["someFutureField"] = {"x": 1}
    path.write_bytes(_zip(manifest))
    lesson, notes = read_classroom(path)
    assert [scene.type for scene in lesson.scenes][:1] == ["slide"]
    assert any(note.startswith("formatVersion 7 is newer than the 1 maic knows") for note in notes)


def test_openmaic_s_built_in_class_opens_discussions_by_its_default_ids(tmp_path: Path) -> None:
    manifest = server_classroom()
    manifest["agents"] = []  # a classroom of OpenMAIC's built-in agents: default-1 … default-6, as maic's six
    manifest["scenes"][0]["actions"][1]["agentId"] = "default-4"
    path = tmp_path / "preset.maic.zip"
    path.write_bytes(_zip(manifest))
    lesson, _ = read_classroom(path)
    assert lesson.agents is None
    opened = next(scene for scene in lesson.scenes if isinstance(scene, DiscussionScene))
    assert opened.initiator == "curious_student"


def test_the_import_command_writes_the_personas_beside_the_lesson_and_chat_can_hold_the_class(tmp_path: Path) -> None:
    path = tmp_path / "leaves.maic.zip"
    path.write_bytes(_zip(server_classroom()))
    out = tmp_path / "leaves.yaml"
    result = CliRunner().invoke(app, ["lesson", "import", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "leaves-agents"
    assert sorted(p.name for p in folder.iterdir()) == ["bo.yaml", "dr_lin.yaml", "student_3.yaml"]
    assert load_persona(folder / "bo.yaml").persona == "Asks why, twice."
    assert f"--agents-dir {folder}" in out.read_text(encoding="utf-8")  # the header says how to play it
    checked = CliRunner().invoke(app, ["lesson", "check", str(out), "--agents-dir", str(folder)])
    assert checked.exit_code == 0, checked.output
    again = CliRunner().invoke(app, ["lesson", "import", str(path), "--out", str(out)])
    assert again.exit_code == 2  # the lesson exists; nothing is overwritten without --force
    forced = CliRunner().invoke(app, ["lesson", "import", str(path), "--out", str(out), "--force"])
    assert forced.exit_code == 0, forced.output


def _formula_lesson(latex: str) -> Lesson:
    return Lesson(title="F", scenes=[SlideScene(type="slide", id="s", title="S", elements=[
        SlideElement(id="f", type="formula", content=latex)])])


def _formula_html(latex: str) -> dict[str, Any]:
    lesson = _formula_lesson(latex)
    manifest, _ = classroom_manifest(lesson, class_agents(lesson))
    return next(e for e in manifest["scenes"][0]["content"]["canvas"]["elements"] if e["type"] == "latex")


def test_formulas_go_out_as_mathml_and_come_back_as_latex(tmp_path: Path) -> None:
    element = _formula_html("\\frac{3}{4} + x^2 = \\sqrt{y}")
    assert element["latex"] == "\\frac{3}{4} + x^2 = \\sqrt{y}"
    math = ElementTree.fromstring(element["html"]).find("{http://www.w3.org/1998/Math/MathML}math")
    assert math is not None
    tags = {node.tag.split("}")[1] for node in math.iter()}
    assert {"mfrac", "msup", "msqrt", "annotation"} <= tags
    lesson = _formula_lesson("\\frac{3}{4}")
    data, _ = classroom_zip(lesson, class_agents(lesson))
    (tmp_path / "f.maic.zip").write_bytes(data)
    back, _ = read_classroom(tmp_path / "f.maic.zip")
    assert isinstance(back.scenes[0], SlideScene) and back.scenes[0].elements[0].content == "\\frac{3}{4}"


@pytest.mark.parametrize("latex", ["\\text{<img src=x onerror=alert(1)>}", "\\text{<b onclick=alert(1)>x</b>}",
                                   "\\href{javascript:alert(1)}{x}", "x<script>alert(1)</script>",
                                   "\\text{</math><script>alert(1)</script>}", "\\frac{", "{" * 500 + "x" + "}" * 500])
def test_a_hostile_formula_is_mathml_of_whitelisted_elements_or_its_escaped_source(latex: str) -> None:
    html = _formula_html(latex)["html"]
    root = ElementTree.fromstring(html)  # well formed either way
    for node in root.iter():
        tag = node.tag.split("}")[-1]
        assert tag in ("span", "math", "semantics", "mrow", "mi", "mo", "mn", "mtext", "annotation", "msup")
        assert not any(name.startswith("on") or name == "href" for name in node.attrib)
    assert "<script" not in html and "<img" not in html and "<b " not in html
    if mathml(latex) is None:
        assert html.startswith('<span class="maic-latex"')


class _Voices:
    """A speech engine of the speech port that says each line as a tone whose length follows the text."""

    name = "tones"
    accepts_any_voice = True

    def __init__(self) -> None:
        self.said: list[tuple[str, Voice]] = []

    def voices(self) -> list[str]:
        return ["low", "high"]

    def synthesize(self, text: str, voice: Voice) -> Audio:
        import math

        self.said.append((text, voice))
        rate, pitch = 16000, 220.0 * 2 ** (voice.pitch / 12)
        count = rate * max(1, len(text)) // 40
        samples = (int(8000 * math.sin(2 * math.pi * pitch * n / rate)) for n in range(count))
        return Audio(b"".join(s.to_bytes(2, "little", signed=True) for s in samples), rate)


def _voiced_lesson() -> Lesson:
    return Lesson(title="Voices", scenes=[
        SlideScene(type="slide", id="s", title="S", elements=[SlideElement(id="t", type="text", content="Hi")],
                   script=[ScriptStep(say="Welcome to class."), ScriptStep(spotlight="t"),
                           ScriptStep(say="Is it lunch yet?", by="class_clown"), ScriptStep(say="Welcome to class.")]),
        QuizScene(type="quiz", id="q", questions=[QuizQuestion(id="q1", type="single", question="One?",
                                                               options=["Yes", "No"], answer=["A"])]),
        DiscussionScene(type="discussion", id="d", topic="Why?", initiator="curious_student",
                        script=[ScriptStep(say="I wonder why.", by="curious_student")])])


def _has_ffmpeg() -> bool:
    from maic_cli.errors import MaicError
    from maic_cli.media.ffmpeg import find_ffmpeg

    try:
        return bool(find_ffmpeg())
    except MaicError:
        return False


@pytest.mark.skipif(not _has_ffmpeg(), reason="needs an ffmpeg (the video extra bundles one)")
def test_the_class_s_voices_travel_in_the_classroom_as_openmaic_s_audio(tmp_path: Path) -> None:
    from maic_cli.media.ffmpeg import probe
    from maic_cli.media.speakers import voices_for

    lesson = _voiced_lesson()
    agents = class_agents(lesson)
    engine = _Voices()
    voicing = Voicing(engine, voices_for(agents, engine, ["class_clown", "curious_student"]), lambda text: text)
    data, notes = classroom_zip(lesson, agents, voicing)
    archive = zipfile.ZipFile(io.BytesIO(data))
    manifest = json.loads(archive.read("manifest.json"))
    speech = [a for scene in manifest["scenes"] for a in scene["actions"] if a["type"] == "speech"]
    assert len(speech) == 4 and all(a["audioRef"].startswith("audio/") for a in speech)
    assert speech[0]["audioRef"] == speech[2]["audioRef"]  # the same line in the same voice: one file
    assert len(engine.said) == 3 and len({voice for _, voice in engine.said}) == 3  # teacher, clown, curious
    audio = {path for path, entry in manifest["mediaIndex"].items() if entry["type"] == "audio"}
    assert audio == {a["audioRef"] for a in speech} == {n for n in archive.namelist() if n.startswith("audio/")}
    for path in audio:
        entry = manifest["mediaIndex"][path]
        assert entry["format"] == "mp3" and entry["duration"] > 0 and entry["size"] == archive.getinfo(path).file_size
        (tmp_path / "clip.mp3").write_bytes(archive.read(path))
        assert "Audio: mp3" in probe(tmp_path / "clip.mp3")
    assert any("line(s) voiced in the class's voices" in note for note in notes)
    (tmp_path / "v.maic.zip").write_bytes(data)
    back, back_notes = read_classroom(tmp_path / "v.maic.zip")  # and maic reads its own voiced classroom back
    assert [s.type for s in back.scenes] == ["slide", "quiz", "discussion"]
    slide = back.scenes[0]
    assert isinstance(slide, SlideScene) and [s.by for s in slide.script if s.say] == [None, "class_clown", None]
    assert any("3 audio clip(s)" in note for note in back_notes)


def test_the_export_command_voices_a_built_in_lesson(tmp_path: Path) -> None:
    if shutil.which("espeak-ng") is None or not _has_ffmpeg():
        pytest.skip("needs espeak-ng and an ffmpeg")
    out = tmp_path / "fractions.maic.zip"
    result = CliRunner().invoke(app, ["lesson", "export", str(LESSONS / "fractions.yaml"), "--out", str(out),
                                      "--voice", "espeak"])
    assert result.exit_code == 0, result.output
    manifest = json.loads(zipfile.ZipFile(out).read("manifest.json"))
    speech = [a for scene in manifest["scenes"] for a in scene["actions"] if a["type"] == "speech"]
    assert speech and all(a.get("audioRef") in manifest["mediaIndex"] for a in speech)
    lesson = load_lesson(LESSONS / "fractions.yaml")
    lines = sum(1 for s in lesson.scenes if isinstance(s, (SlideScene, DiscussionScene)) for step in s.script
                if step.say) + sum(len(s.close) for s in lesson.scenes if isinstance(s, DiscussionScene))
    faqs = sum(len(s.faq) for s in lesson.scenes if isinstance(s, (SlideScene, DiscussionScene)))
    assert faqs and len(speech) == lines + faqs


@pytest.mark.parametrize("name", ["fractions", "photosynthesis", "seasons", "python_loops"])
def test_faqs_and_closing_lines_travel_as_speech_and_come_back(name: str, tmp_path: Path) -> None:
    lesson = load_lesson(LESSONS / f"{name}.yaml")
    data, notes = classroom_zip(lesson, class_agents(lesson))
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("manifest.json"))
    said = [a for scene in manifest["scenes"] for a in scene["actions"] if a["type"] == "speech" and "faq" in a]
    entries = [e for s in lesson.scenes if isinstance(s, (SlideScene, DiscussionScene)) for e in s.faq]
    assert len(said) == len(entries) > 0
    for action, entry in zip(said, entries, strict=True):  # OpenMAIC says the question, then the answer
        assert action["text"] == f"{entry.phrasings[0]} {entry.a}" and action["faq"]["a"] == entry.a
    assert any("expected question(s) (faq)" in note for note in notes)
    (tmp_path / "c.maic.zip").write_bytes(data)
    back, _ = read_classroom(tmp_path / "c.maic.zip")
    kept = [s for s in lesson.scenes if not isinstance(s, QuizScene)]
    returned = [s for s in back.scenes if not isinstance(s, QuizScene)]
    assert [s.model_dump() for s in returned] == [s.model_dump() for s in kept]


_LAYOUT = """(() => {
  const box = (el) => el.getBoundingClientRect();
  const fracs = [...document.querySelectorAll('mfrac')].map((f) => {
    const [top, bottom] = [...f.children].map(box);
    return top.bottom <= bottom.top + 1 && top.height > 0;
  });
  const sups = [...document.querySelectorAll('msup')].map((s) => box(s.children[1]).top < box(s.children[0]).top);
  const hidden = [...document.querySelectorAll('annotation')].every((a) => box(a).height === 0);
  return {fracs, sups, hidden, maths: document.querySelectorAll('math').length};
})()"""


def test_openmaic_s_renderer_way_shows_the_mathml_as_mathematics_in_chromium(tmp_path: Path) -> None:
    from maic_cli.testing.browser import find_chromium, open_page

    if find_chromium() is None:
        pytest.skip("needs chromium")
    lesson = Lesson(title="F", scenes=[SlideScene(type="slide", id="s", title="S", elements=[
        SlideElement(id="f", type="formula", content="\\frac{3}{4} + \\frac{1}{4} = 1"),
        SlideElement(id="g", type="formula", content="E = mc^2")])])
    manifest, _ = classroom_manifest(lesson, class_agents(lesson))
    htmls = [e["html"] for e in manifest["scenes"][0]["content"]["canvas"]["elements"] if e["type"] == "latex"]
    # As OpenMAIC's BaseLatexElement does: the element's html injected as it is into a nowrap box.
    page = tmp_path / "latex.html"
    page.write_text("<!doctype html><meta charset=utf-8><body>" + "".join(
        f"<div style='white-space: nowrap; font-size: 32px' id='b{n}'></div>" for n in range(len(htmls)))
        + "<script>const h = " + json.dumps(htmls) + ";h.forEach((x, n) => "
        "{document.getElementById('b' + n).innerHTML = x;});</script>", encoding="utf-8")
    visit = open_page(page, _LAYOUT)
    assert visit.errors == []
    assert visit.value == {"fracs": [True, True], "sups": [True], "hidden": True, "maths": 2}
