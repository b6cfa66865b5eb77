"""``maic chat --lesson`` and ``/lesson``: a whole lesson through stdin, resuming it, interrupting it."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from typer.testing import CliRunner

from maic_cli.chat.loop import ChatApp
from maic_cli.chat.setup import new_session
from maic_cli.cli.app import app
from maic_cli.engine.events import Event
from maic_cli.lessons.lesson import LessonPlay
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.store.config import Settings
from maic_cli.store.lessons import load_lesson
from maic_cli.store.session import load_session
from maic_cli.store.transcript import EventLine, RoundLine, read_transcript
from maic_cli.ui.plain import PlainView
from tests.helpers import decision, reply

runner = CliRunner()
LESSON = Path(__file__).parent.parent / "lessons" / "photosynthesis.yaml"
SLIDE_ONE = "Here is a puzzle to start."
SLIDE_TWO = "This is the whole reaction on one line."


def script(tmp_path: Path, *replies: object) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(list(replies)), encoding="utf-8")
    return f"scripted:{path}"


def chat(tmp_path: Path, model: str, stdin: str, *args: str):  # type: ignore[no-untyped-def]
    session = tmp_path / "class.json"
    result = runner.invoke(app, ["chat", "--model", model, "--session", str(session), *args], input=stdin)
    return result, session


def test_a_whole_lesson_through_stdin(tmp_path: Path) -> None:
    model = script(tmp_path,
                   decision("teacher"), reply("Mostly from the air, as carbon dioxide."), decision("END"),  # question
                   reply("What would a plant in a dark cupboard look like?"), decision("END"),  # discussion
                   '{"points": 2, "comment": "Good: energy. Say what the energy makes."}',  # grading q3
                   decision("teacher"), reply("Carbon dioxide is an input, not an output."), decision("END"))
    stdin = "\n".join(["Where does the mass come from?", "", "", "", "",  # question, slide 2, 3, discussion, quiz
                       "E", "3", "a, b", "Light gives the plant energy.",  # the quiz (E is asked again)
                       "Why was B wrong?", "", "/outline", f"/export {tmp_path / 'lesson.md'}"]) + "\n"
    result, session_file = chat(tmp_path, model, stdin, "--lesson", str(LESSON))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.index("Scene 1/5 · slide · What a plant needs") < out.index(SLIDE_ONE) < out.index(
        "Ms. Rivera: Mostly from the air") < out.index("Scene 2/5 · slide") < out.index(SLIDE_TWO)
    assert out.count("What a plant needs") == 3  # the scene, its slide, the outline: no heading twice
    assert out.count("Where does most of a tree's mass come from?") == 1  # asked once, not echoed
    assert "[spotlight on question]" in out and "[laser on leaf]" in out
    assert "Leo: So my burger is solar powered?" in out  # slide 3: its script, with classmates
    assert "Mia: If the plant still has water and air" in out  # the discussion's script, then Mia live
    assert "Scene 4/5 · discussion · Plants in the dark" in out and "Mia: What would a plant in a dark cupboard" in out
    assert "== Question 1 of 3 (2 points) ==" in out and "  C) Carbon dioxide from the air" in out
    assert "'E' is not one of the options: answer with one letter A–D (or 1–4)" in out
    assert "Answer: C · right · 2/2 points" in out and "Answer: A B · wrong (the answer: A C) · 0/2 points" in out
    assert "Comment: partly right, but only the exact set counts: the answer is A, C" in out
    assert "· partly right · 2/3 points" in out and "Good: energy. Say what the energy makes." in out
    assert "Quiz score: 4/7 · lesson total 4/7" in out
    assert "Ms. Rivera: Carbon dioxide is an input, not an output." in out
    assert "The lesson is finished." in out and "> 5. quiz" in out

    session = load_session(session_file)
    assert session.lesson is not None
    progress = session.lesson.progress
    assert progress.state == "finished" and progress.discussed == ["talk"]
    assert progress.score() == (4, 7) and progress.answers["check/q2"].chosen == ["A", "B"]
    events = [e.event for e in read_transcript(Path(session.transcript or "")).entries if isinstance(e, EventLine)]
    kinds = [e.type for e in events]
    assert kinds.count("lesson") == 1 and kinds.count("scene") == 5 and kinds.count("quiz_answer") == 3
    score = next(e for e in events if e.type == "quiz_score")
    assert (score.points, score.max_points) == (4, 7)
    rounds = [e for e in read_transcript(Path(session.transcript or "")).entries if isinstance(e, RoundLine)]
    assert [r.lecture for r in rounds][:2] == [True, False]  # slide 1's scripted lecture, then the question
    check = runner.invoke(app, ["replay", session.transcript or "", "--check"])
    assert check.exit_code == 0, check.output  # the recorded lesson plays again the same way
    exported = (tmp_path / "lesson.md").read_text(encoding="utf-8")  # /export keeps the lesson's notes
    assert "Scene 5/5 · quiz · Check your understanding" in exported
    assert "Where does most of a tree's mass come from?" in exported and "Quiz score: 4/7" in exported


def test_continue_resumes_the_lesson_at_its_scene(tmp_path: Path, maic_home: Path) -> None:
    model = script(tmp_path)
    first = runner.invoke(app, ["chat", "--model", model, "--lesson", str(LESSON)], input="\n")  # slides 1 and 2
    assert first.exit_code == 0, first.output
    assert SLIDE_TWO in first.stdout
    [session_file] = (maic_home / "sessions").glob("*.json")
    progress = load_session(session_file).lesson.progress  # type: ignore[union-attr]
    assert (progress.scene, progress.step) == (1, 6)
    second = runner.invoke(app, ["chat", "--continue", "--model", script(tmp_path)], input="\n")
    assert second.exit_code == 0, second.output
    assert "Scene 2/5 · slide · The overall reaction" in second.stdout  # where it stopped, not lectured again
    assert SLIDE_ONE not in second.stdout and SLIDE_TWO not in second.stdout
    assert "Scene 3/5 · slide · Why it matters" in second.stdout
    assert "Leo: So my burger is solar powered?" in second.stdout


def test_a_broken_lesson_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("title: x\nscenes:\n  - type: slide\n    id: s1\n", encoding="utf-8")
    result, _ = chat(tmp_path, script(tmp_path), "", "--lesson", str(bad))
    assert result.exit_code == 2 and f"{bad}:3: scenes.0.title: Field required" in result.stderr
    assert "Traceback" not in result.output
    result, _ = chat(tmp_path, script(tmp_path, decision("teacher"), reply("Still here."), decision("END")),
                     f"/lesson {bad}\n/next\nhello\n")
    assert result.exit_code == 0, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("maic: error:")]
    assert len(errors) == 2 and str(bad) in errors[0]
    assert "/next: no lesson in this class; /lesson NAME opens one (maic lesson list)" in errors[1]
    assert "Ms. Rivera: Still here." in result.stdout  # the chat went on


def test_slide_and_prev_move_between_slides_and_refuse_what_is_not_there(tmp_path: Path) -> None:
    stdin = "/slide 9\n/slide x\n/slide 2\n/prev\n/prev\n"
    result, _ = chat(tmp_path, script(tmp_path), stdin, "--lesson", str(LESSON))
    assert result.exit_code == 0, result.output
    assert "no slide 9: this lesson has 3 slides (1–3)" in result.stderr and "usage: /slide N" in result.stderr
    assert result.stdout.count(SLIDE_ONE) == 2 and result.stdout.count(SLIDE_TWO) == 1
    assert "This is the first scene of the lesson." in result.stdout


class KeyPress:
    """A stand-in for the terminal's key watcher: "presses" a key when a chosen word is shown."""

    def __init__(self, word: str, key: str) -> None:
        self.word, self.key = word, key
        self.armed: Callable[[], object] | None = None
        self.pressed = False  # once: the resumed lecture says the word again

    @contextlib.contextmanager
    def __call__(self, on_key: Callable[[], object]) -> Iterator[list[str]]:
        typed: list[str] = []
        self.armed = lambda: (typed.append(self.key), on_key())
        try:
            yield typed
        finally:
            self.armed = None

    def seen(self, event: Event) -> None:
        if self.armed is not None and not self.pressed and event.type == "text_delta" and self.word in event.content:
            self.pressed = True
            self.armed()


def test_a_key_pauses_the_lecture_keeps_the_step_and_starts_the_prompt(tmp_path: Path) -> None:
    session = new_session(Settings(agents=["teacher", "curious_student"]), None, None)
    session.lesson = LessonPlay(lesson=load_lesson(LESSON))
    path = tmp_path / "s.json"
    out, err = io.StringIO(), io.StringIO()
    view = PlainView(out, err, {a.id: a for a in session.agents})
    press = KeyPress("tonnes", "w")
    shown = view.on_event

    def on_event(event: Event) -> None:
        shown(event)
        press.seen(event)

    view.on_event = on_event  # type: ignore[method-assign]
    llm = ScriptedLLM([decision("teacher"), reply("From the air."), decision("END")])
    chat_app = ChatApp(session=session, path=path, llm=llm, make_client=lambda m: llm, view=view, keys=press)
    prompts: list[str] = []
    lines = iter(["why?", "", None])

    async def read_line() -> str | None:
        prompts.append(chat_app.take_typed())
        return next(lines)

    asyncio.run(chat_app.run(read_line))
    assert prompts[0] == "w"  # the key that paused the lecture starts the learner's line
    text = out.getvalue()
    assert "yet the soil [interrupted]" not in text and "[interrupted]" in text
    assert "Lecture paused." in text and "Ms. Rivera: From the air." in text
    messages = load_session(path).classroom.messages
    cut = messages[0]
    assert cut.interrupted and "tonnes" in cut.text and "Where does all that mass" not in cut.text
    resumed = messages[3]  # after the question and its answer, Enter said the cut step again, whole
    assert resumed.text.startswith("Here is a puzzle to start. A tree weighs tonnes") and not resumed.interrupted
    assert load_session(path).lesson.progress.step == 7  # type: ignore[union-attr]


def test_prompts_show_on_a_lesson_session_shows_the_lesson_context(tmp_path: Path) -> None:
    result, session_file = chat(tmp_path, script(tmp_path), "", "--lesson", str(LESSON))
    assert result.exit_code == 0, result.output
    shown = runner.invoke(app, ["prompts", "show", "agent", "teacher", "--session", str(session_file),
                                "--ask", "Why?", "--model", "demo"])
    assert shown.exit_code == 0, shown.output
    assert "# Lesson: How plants make food: photosynthesis" in shown.stdout
    assert "Now at slide 1 of 3" in shown.stdout and "stopped the lesson" in shown.stdout


def test_ctrl_c_pauses_a_lecture_and_continue_says_the_cut_step_again(tmp_path: Path) -> None:
    session_file = tmp_path / "class.json"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "maic_cli", "chat", "--model", script(tmp_path), "--session",
                             str(session_file), "--lesson", str(LESSON), "--pace", "0.05"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    seen = ""
    while not seen.endswith("Ms. Rivera: Here is"):  # waits on the output until the lecture speaks
        char = proc.stdout.read(1)
        assert char, "the lecture never started"
        seen += char
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate("/continue\n/quit\n", timeout=60)
    assert proc.returncode == 0, err
    assert "[interrupted]" in out and "Lecture paused." in out
    session = load_session(session_file)
    cut = next(m for m in session.classroom.messages if m.interrupted)
    assert cut.text.startswith("Here is") and "the roots send water" not in cut.text
    assert session.lesson is not None and session.lesson.progress.step == 7  # /continue finished the slide
    assert session.classroom.messages[-1].text.endswith("the roots send water up the stem.")


def test_lesson_on_a_resumed_session_keeps_the_same_lesson_and_replaces_another(tmp_path: Path) -> None:
    first, session_file = chat(tmp_path, script(tmp_path), "", "--lesson", str(LESSON))  # slide 1 lectured
    assert first.exit_code == 0, first.output
    again, _ = chat(tmp_path, script(tmp_path), "", "--lesson", str(LESSON))
    assert again.exit_code == 0, again.output
    assert SLIDE_ONE not in again.stdout  # the same lesson: its progress is kept (slide 1 was lectured)
    other = tmp_path / "other.yaml"
    other.write_text("title: Other\nscenes:\n  - {type: slide, id: o, title: O, script: [{say: Hello there.}]}\n",
                     encoding="utf-8")
    replaced, _ = chat(tmp_path, script(tmp_path), "", "--lesson", str(other))
    assert replaced.exit_code == 0, replaced.output
    assert "lesson (How plants make food: photosynthesis) is replaced by" in replaced.stderr
    assert "Ms. Rivera: Hello there." in replaced.stdout
    assert load_session(session_file).lesson.lesson.title == "Other"  # type: ignore[union-attr]
