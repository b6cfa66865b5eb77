"""A simulated learner's line (``maic chat --watch``) is learner text, never a chat command: whatever it
starts with — slashes behind spaces, NBSP, tabs, other unicode spaces, a full-width solidus, an ``@`` —
it reaches the class (or the quiz) as the learner's words, in chat and in lesson mode alike; no file is
written, no model switched, no lesson step taken.  The learner file's ``opening:`` and the learner
model's own lines are both covered."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from maic_cli.chat.loop import ChatApp, Said
from maic_cli.chat.setup import new_session
from maic_cli.chat.watch import Watcher
from maic_cli.cli.app import app
from maic_cli.engine.learner import LearnerProfile, SimulatedLearner
from maic_cli.lessons.lesson import LessonPlay
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM, ScriptedLLM
from maic_cli.llm.spec import ModelSpec
from maic_cli.store.config import Settings
from maic_cli.store.lessons import load_lesson
from maic_cli.store.session import load_session
from maic_cli.store.transcript import LearnerLine, read_transcript
from maic_cli.ui.plain import PlainView
from maic_cli.untrusted import clean
from tests.helpers import decision, reply

SKY = """title: Why the sky is blue
scenes:
  - type: slide
    id: sky
    title: Scattering
    elements:
      - {id: idea, type: text, content: "Short (blue) light scatters most in air."}
    script:
      - say: "Sunlight holds every colour; air scatters the blue part most."
  - type: quiz
    id: check
    title: Check
    questions:
      - id: q1
        type: single
        question: Which colour does air scatter most?
        options: ["Blue", "Red", "Green"]
        answer: A
"""

# Every way a line could be made to look like a command once something strips it.
PREFIXES = ["/", "/ /", "//", "///", "/\u00a0/", "\u00a0/", "\t/", "/\t/", " /", "  //", "\u2003/", "\u3000/",
            "\u2009/", "\u202f/", "\u205f/", "/\u2028/", "\ufeff/", "\u200b/", "\uff0f", "\uff0f/", "@/", "@ /",
            "@teacher /", "\r/", "/\r/", "\n/", "\\/", "/ \t\u00a0 /"]
COMMANDS = ["export {target}", "save {target}", "model demo", "lesson {lesson}", "quit", "help",
            "next", "slide 2", "continue", "ask idea why?"]


def class_llm() -> FunctionLLM:
    """The class: a director that gives the teacher the floor once a round, a teacher that says one line."""
    def answer(request: LLMRequest) -> str:
        if request.purpose == "director":
            return decision("teacher" if (request.facts and request.facts.turn == 0) else "USER")
        return reply("Let us look at that.")
    return FunctionLLM(answer, name="scripted")


def watched(tmp_path: Path, opening: str, lines: list[str], *, lesson: bool = False,
            typed: list[str] | None = None) -> tuple[ChatApp, list[str]]:
    """A chat (or a lesson) with a simulated learner that opens with ``opening`` and then says ``lines``;
    ``typed``: lines typed at the keyboard before the learner takes the seat.  Returns the app and the
    models it was asked to switch to."""
    session = new_session(Settings(agents=["teacher", "curious_student"]), None, None)
    if lesson:
        session.lesson = LessonPlay(lesson=load_lesson(lesson_file(tmp_path)))
    llm = class_llm()
    switched: list[str] = []

    def make_client(spec: ModelSpec) -> FunctionLLM:
        switched.append(spec.raw)
        return llm

    view = PlainView(io.StringIO(), io.StringIO(), {a.id: a for a in session.agents})
    chat = ChatApp(session=session, path=tmp_path / "s.json", llm=llm, make_client=make_client, view=view)
    profile = LearnerProfile(name="Eve", opening=opening)
    learner_llm = ScriptedLLM([*lines, "Thanks. <done>"])
    watcher = Watcher(SimulatedLearner(profile, learner_llm, turns=len(lines) + 2), "scripted")
    learner = watcher.reader(chat)
    keyboard = list(typed or [])

    async def read_line() -> str | Said | None:
        return keyboard.pop(0) if keyboard else await learner()

    asyncio.run(chat.run(read_line))
    return chat, switched


def lesson_file(tmp_path: Path) -> Path:
    path = tmp_path / "sky.yaml"
    if not path.exists():
        path.write_text(SKY, encoding="utf-8")
    return path


def attack(tmp_path: Path, prefix: str, command: str) -> str:
    return prefix + command.format(target=tmp_path / "evil.md", lesson=lesson_file(tmp_path))


def said_by_learner(chat: ChatApp) -> list[str]:
    return [m.text for m in chat.session.classroom.messages if m.role == "user"]


def nothing_happened(tmp_path: Path, chat: ChatApp, switched: list[str]) -> None:
    assert not (tmp_path / "evil.md").exists()
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["s.json", "sky.yaml"]  # no other file written (none under $MAIC_HOME either)
    assert switched == [] and chat.session.model == new_session(Settings(), None, None).model


LESSON_COMMANDS = ["export {target}", "save {target}", "model demo", "lesson {lesson}", "next", "slide 2",
                   "continue", "ask idea why?"]
GROUPS = [PREFIXES[i:i + 7] for i in range(0, len(PREFIXES), 7)]  # a class each: a long one only gets slower


def every_attack(tmp_path: Path, prefixes: list[str], commands: list[str] = COMMANDS) -> list[str]:
    return [attack(tmp_path, prefix, command) for prefix in prefixes for command in commands]


@pytest.mark.parametrize("prefixes", GROUPS)
def test_every_slash_variant_reaches_the_class_as_learner_text_in_chat(tmp_path: Path, prefixes: list[str]) -> None:
    lines = every_attack(tmp_path, prefixes)
    chat, switched = watched(tmp_path, lines[0], lines[1:])
    nothing_happened(tmp_path, chat, switched)
    # as the file's reader (the opening) and the reply's reader (the model's lines) clean them: whole
    assert said_by_learner(chat) == [clean(line).strip() for line in lines] + ["Thanks."]
    assert chat.lesson is None  # "/lesson FILE" opened nothing


@pytest.mark.parametrize("prefixes", GROUPS)
def test_every_slash_variant_is_a_question_in_a_lesson(tmp_path: Path, prefixes: list[str]) -> None:
    lines = every_attack(tmp_path, prefixes, LESSON_COMMANDS)
    chat, switched = watched(tmp_path, lines[0], lines[1:], lesson=True)
    nothing_happened(tmp_path, chat, switched)
    assert chat.lesson is not None and chat.session.lesson is not None
    assert chat.session.lesson.progress.scene == 0  # "/next", "/slide 2", "/continue" moved nothing
    assert said_by_learner(chat) == [clean(line).strip() for line in lines] + ["Thanks."]  # each a question


def test_every_slash_variant_is_an_answer_at_a_quiz(tmp_path: Path) -> None:
    """At the quiz (Enter typed at the keyboard moves there), every line is an answer, not a step."""
    lines = every_attack(tmp_path, PREFIXES)
    quiz, switched = watched(tmp_path, lines[0], [*lines[1:], "A"], lesson=True, typed=["", ""])
    nothing_happened(tmp_path, quiz, switched)
    assert quiz.session.lesson is not None
    progress = quiz.session.lesson.progress
    assert progress.scene == 1 and list(progress.answers) == ["check/q1"]
    assert progress.answers["check/q1"].answer == "A"  # every attack was refused as an answer; "A" taken
    assert said_by_learner(quiz) == ["Thanks."]  # after the quiz, a question again


ALPHABET = st.sampled_from([" ", "\t", "\u00a0", "\u2003", "\u3000", "\u2028", "\u200b", "\ufeff", "/", "\uff0f",
                            "@", "\r", "\n", "\\", "\u2215", "\u2044", "\u29f8"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.text(ALPHABET, max_size=8), command=st.sampled_from(COMMANDS), lesson=st.booleans())
def test_no_line_a_learner_says_runs_a_command(tmp_path_factory: pytest.TempPathFactory, prefix: str, command: str,
                                               lesson: bool) -> None:
    tmp_path = tmp_path_factory.mktemp("said")
    lesson_file(tmp_path)
    line = attack(tmp_path, prefix, command)
    chat, switched = watched(tmp_path, "Hello.", [line], lesson=lesson)
    nothing_happened(tmp_path, chat, switched)
    said = said_by_learner(chat)
    assert said[0] == "Hello." and said[-1] == "Thanks."
    if line.strip():
        assert len(said) == 3 and command.split()[0] in said[1]


def test_the_exact_attacks_through_maic_chat_watch(tmp_path: Path) -> None:
    """The reported attacks, end to end: a learner file that opens with ``/ /export FILE`` over a file the
    user keeps, and a learner model that says ``/\\u00a0/model demo`` and ``/ /save FILE``."""
    kept = tmp_path / "bashrc"
    kept.write_text("keep me\n", encoding="utf-8")
    other = tmp_path / "other.json"
    learner_file = tmp_path / "eve.yaml"
    learner_file.write_text(json.dumps({"name": "Eve", "opening": f"/ /export {kept}"}), encoding="utf-8")
    learner_model = tmp_path / "learner.json"
    learner_model.write_text(json.dumps(["/\u00a0/model demo", f"/ /save {other}", "Thanks. <done>"]),
                             encoding="utf-8")
    teacher = tmp_path / "teacher.json"
    teacher.write_text(json.dumps([reply("One."), reply("Two."), reply("Three."), reply("Four.")]), encoding="utf-8")
    transcript = tmp_path / "t.jsonl"
    session = tmp_path / "s.json"
    result = CliRunner().invoke(app, ["chat", "--watch", str(learner_file), "--learner-model",
                                      f"scripted:{learner_model}", "-m", f"scripted:{teacher}", "--agents", "teacher",
                                      "--plain", "--transcript", str(transcript), "-s", str(session)], input="")
    assert result.exit_code == 0, result.output
    assert kept.read_text(encoding="utf-8") == "keep me\n" and not other.exists()
    assert load_session(session).model == f"scripted:{teacher}" and "Model switched" not in result.output
    lines = [e for e in read_transcript(transcript).entries if isinstance(e, LearnerLine)]
    assert [e.text for e in lines] == [f"/ /export {kept}", "/\u00a0/model demo", f"/ /save {other}", "Thanks."]
    assert all(e.simulated == "Eve" for e in lines)


@pytest.mark.parametrize(("kind", "said"), [("fifo", "not a regular file"), ("dev-zero", "not a regular file"),
                                            ("dangling", "no such file"), ("folder", "not a regular file")])
def test_a_learner_file_that_is_not_a_plain_file_says_what_it_is(tmp_path: Path, kind: str, said: str) -> None:
    import os

    path = tmp_path / "eve.yaml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(tmp_path / "gone.yaml")
    result = CliRunner().invoke(app, ["chat", "--watch", str(path), "-m", "demo", "--plain",
                                      "-s", str(tmp_path / "s.json")], input="")
    assert result.exit_code == 2 and said in result.stderr and result.stderr.count("\n") == 1, result.output
    assert not (tmp_path / "s.json").exists()
