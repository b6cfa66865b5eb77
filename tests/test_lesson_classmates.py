"""Classmates in the lecture: script steps with ``by:`` in their own cards, scripted discussions.

Played through the ClassRunner (scripted replies for the live discussion round): each speaker's
card carries its own name, avatar and colour; a ``by:`` outside the class falls back to the
teacher (and ``maic lesson check`` warns); a discussion plays its script, then its live round;
cancelling mid-script keeps the partial message, and resuming (also after a save and reload of the
session) says the unfinished step again, in its speaker's card.  The built-in lessons are checked
whole: every slide scripted, every discussion opened by classmates the teacher answers.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import AgentStartEvent, Event
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.round import RoundResult
from maic_cli.engine.runner import ClassRunner
from maic_cli.lessons.lesson import DiscussionScene, Lesson, LessonPlay, SlideScene
from maic_cli.lessons.player import LessonPlayer
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.store.lessons import load_lesson
from maic_cli.store.personas import DEFAULT_CLASS
from maic_cli.store.session import Session, load_session, save_session
from maic_cli.ui.lesson_view import hint_after
from tests.helpers import agent, decision, reply
from tests.test_lesson_player import Log

ROOT = Path(__file__).resolve().parent.parent
CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T", avatar="T", color="#111111"),
                           agent("mia", "student", "Mia", avatar="M", color="#222222"),
                           agent("leo", "student", "Leo", avatar="L", color="#333333"))}
LESSON = {
    "title": "Halves", "scenes": [
        {"type": "slide", "id": "s1", "title": "A half",
         "elements": [{"id": "e1", "content": "1/2 = 2/4"}],
         "script": [{"say": "A half is one of two equal parts."},
                    {"say": "Is a half always the same size?", "by": "mia"},
                    {"spotlight": "e1"},
                    {"say": "The same part of the same whole, yes."},
                    {"say": "So two quarters make a half.", "by": "leo"},
                    {"say": "And this line is mine.", "by": "leo"},
                    {"say": "Nobody called Zed is here.", "by": "zed"}]},
        {"type": "discussion", "id": "d1", "topic": "Halves of a cake", "initiator": "leo",
         "script": [{"say": "Three eighths is more than a half!", "by": "leo"},
                    {"say": "Let's check that together.", "by": None},
                    {"say": "A half is four eighths, so a half is more.", "by": "mia"}]},
    ]}


def make(llm: ScriptedLLM | None = None, classroom: Classroom | None = None,
         play: LessonPlay | None = None) -> tuple[LessonPlayer, Log]:
    log = Log()
    runner = ClassRunner(classroom or Classroom(), TurnConfig(agent_ids=list(CLASS)), llm or ScriptedLLM([]),
                         agents=CLASS, hooks=[log])
    return LessonPlayer(runner, play or LessonPlay(lesson=Lesson.model_validate(LESSON))), log


def interrupt_at_delta(log: Log, task: asyncio.Task[Any], containing: str) -> None:
    """Cancel ``task`` when a text delta containing ``containing`` is shown (as Ctrl-C would)."""
    def act(event: Event) -> None:
        if event.type == "text_delta" and containing in event.content:
            task.cancel()
    log.on_event.append(act)


def state(player: LessonPlayer) -> str:
    """The lesson's state, read afresh (a step may change it between two reads)."""
    return player.progress.state


def cards(events: list[Event]) -> list[tuple[str, str, str, str]]:
    return [(e.agent_id, e.agent_name, e.avatar, e.color) for e in events if isinstance(e, AgentStartEvent)]


def texts(player: LessonPlayer) -> list[tuple[str | None, str]]:
    return [(m.agent_id, m.text) for m in player.runner.classroom.messages if m.role == "agent"]


def test_each_speaker_has_its_own_card_and_an_unknown_one_falls_back_to_the_teacher() -> None:
    player, log = make()
    player.start()
    result = asyncio.run(player.lecture())
    assert result.reason == "end" and result.speakers == ["teacher", "mia", "teacher", "leo", "teacher"]
    assert cards(log.events) == [("teacher", "Ms. T", "T", "#111111"), ("mia", "Mia", "M", "#222222"),
                                 ("teacher", "Ms. T", "T", "#111111"), ("leo", "Leo", "L", "#333333"),
                                 ("teacher", "Ms. T", "T", "#111111")]
    assert texts(player) == [("teacher", "A half is one of two equal parts."),
                             ("mia", "Is a half always the same size?"),
                             ("teacher", "The same part of the same whole, yes."),
                             ("leo", "So two quarters make a half. And this line is mine."),
                             ("teacher", "Nobody called Zed is here.")]
    # the spotlight is the teacher's, in the teacher's card that follows Mia's
    spot = next(e for e in log.events if e.type == "action")
    teacher_card = player.runner.classroom.messages[2]
    assert spot.agent_id == "teacher" and spot.message_id == teacher_card.id
    assert teacher_card.parts[0].kind == "action"
    assert player.progress.step == 7 and "s1" in player.progress.lectured


def test_cancelled_mid_script_keeps_the_partial_card_and_resumes_in_the_speakers_card(tmp_path: Path) -> None:
    player, log = make()
    player.start()

    async def lecture_until(word: str) -> RoundResult:
        task = asyncio.ensure_future(player.lecture())
        interrupt_at_delta(log, task, word)
        result = await task
        log.on_event.clear()
        return result

    result = asyncio.run(lecture_until("always"))  # inside Mia's line
    assert result.reason == "aborted"
    assert player.progress.step == 1 and player.progress.state == "paused"
    partial = player.runner.classroom.messages[-1]
    assert partial.agent_id == "mia" and partial.interrupted and partial.text.startswith("Is a half")
    assert "s1" not in player.progress.lectured
    # saved at the boundary, reloaded, resumed: Mia's line again, whole, in a new card of hers
    path = tmp_path / "s.json"
    save_session(Session(classroom=player.runner.classroom, config=TurnConfig(agent_ids=list(CLASS)),
                         lesson=player.play), path)
    loaded = load_session(path)
    assert loaded.lesson is not None and loaded.lesson.progress.step == 1
    again, log2 = make(classroom=loaded.classroom, play=loaded.lesson)
    again.start()
    resumed = asyncio.run(again.advance())
    assert resumed is not None and resumed.reason == "end"
    assert [c[0] for c in cards(log2.events)] == ["mia", "teacher", "leo", "teacher"]
    assert texts(again)[-4][1] == "Is a half always the same size?"
    assert again.progress.step == 7 and "s1" in again.progress.lectured


def test_a_discussion_plays_its_script_then_goes_live_and_resumes_where_it_stopped() -> None:
    llm = ScriptedLLM([reply("I still think eighths win."), decision("USER")])
    player, log = make(llm)
    player.start()
    asyncio.run(player.lecture())
    assert player.next()

    async def cut() -> RoundResult | None:
        task = asyncio.ensure_future(player.advance())
        interrupt_at_delta(log, task, "check")  # the teacher's answer, mid-line
        result = await task
        log.on_event.clear()
        return result

    result = asyncio.run(cut())
    assert result is not None and result.reason == "aborted"
    assert hint_after(player) == "Discussion paused. Ask your question, or press Enter (/continue) to go on."
    assert player.progress.step == 1 and player.progress.state == "paused" and "d1" not in player.progress.discussed
    assert not llm.calls  # the live round has not started
    before = len(log.events)
    result = asyncio.run(player.advance())
    assert result is not None
    later = log.events[before:]
    assert [c[0] for c in cards(later)] == ["teacher", "mia", "leo"]  # the rest of the script, then Leo live
    assert texts(player)[-3:] == [("teacher", "Let's check that together."),
                                  ("mia", "A half is four eighths, so a half is more."),
                                  ("leo", "I still think eighths win.")]
    assert "d1" in player.progress.discussed and player.progress.step == 3 and state(player) == "lecture"
    assert llm.calls[0].agent_id == "leo"  # the initiator opens the live round
    assert hint_after(player) == "Your turn: what do you think? Type it, or press Enter to finish the lesson."
    assert any("Three eighths" in m["content"] for m in llm.calls[0].messages)  # it heard the script
    assert asyncio.run(player.advance()) is None  # done: the lesson is finished


def test_lesson_check_warns_about_a_speaker_outside_the_class(tmp_path: Path) -> None:
    text = (ROOT / "lessons" / "fractions.yaml").read_text(encoding="utf-8")
    text = text.replace("        by: note_taker\n", "        by: ghost_student\n", 1)
    path = tmp_path / "l.yaml"
    path.write_text(text, encoding="utf-8")
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "ghost_student" in row)
    result = CliRunner().invoke(app, ["lesson", "check", str(path)])
    assert result.exit_code == 0, result.stderr
    warnings = [row for row in result.stderr.splitlines() if row.startswith("warning:")]
    assert warnings == [f"warning: {path}:{line}: scenes.3.script.8.by (scene 'everyday', step 9): 'ghost_student' "
                        f"is not in the lesson's class ({', '.join(DEFAULT_CLASS)}): the teacher says this line"]
    clean = CliRunner().invoke(app, ["lesson", "check", str(ROOT / "lessons" / "fractions.yaml")])
    assert clean.exit_code == 0 and "warning" not in clean.stderr


@pytest.mark.parametrize("name", ["fractions", "photosynthesis", "seasons", "python_loops"])
def test_every_built_in_scene_is_scripted_and_every_discussion_is_a_class(name: str) -> None:
    lesson = load_lesson(ROOT / "lessons" / f"{name}.yaml")
    students = {"class_clown", "curious_student", "note_taker", "deep_thinker"}
    for scene in lesson.scenes:
        if isinstance(scene, SlideScene):
            assert scene.script and any(step.say for step in scene.script), scene.id
            assert any(step.target for step in scene.script), scene.id  # the teacher points at the slide
        if isinstance(scene, (SlideScene, DiscussionScene)):
            assert {step.by for step in scene.script} <= {None, *DEFAULT_CLASS}, scene.id
        if isinstance(scene, DiscussionScene):
            speakers = [step.by for step in scene.script]
            assert speakers[0] in students, scene.id  # a classmate opens it
            assert len(set(speakers) & students) >= 3, scene.id  # a question, a wrong idea, a disagreement
            assert speakers[-1] is None, scene.id  # the teacher hands it to the class
            # every classmate's line is answered: the teacher speaks after each run of classmates
            assert all(None in speakers[i:i + 3] for i, by in enumerate(speakers) if by is not None), scene.id


def test_a_recorded_class_lesson_replays_and_exports_each_speaker(tmp_path: Path) -> None:
    """``maic chat --lesson fractions``: slide 4 (Sam, Leo, Priya and the teacher), then the cake
    discussion (its script, Leo live); the transcript's replay and both exports name every speaker."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([reply("I still want the three eighths, it sounds bigger."), decision("USER")]),
                      encoding="utf-8")
    transcript = tmp_path / "t.jsonl"
    cli = CliRunner()
    result = cli.invoke(app, ["chat", "--model", f"scripted:{script}", "--session", str(tmp_path / "s.json"),
                              "--transcript", str(transcript), "--lesson", "fractions", "--plain"],
                        input="/slide 4\n\n")
    assert result.exit_code == 0, result.output
    spoken = [("Ms. Rivera", "Fractions are everywhere"), ("Sam", "A quick way to find a quarter"),
              ("Ms. Rivera", "A quarter of a metre"), ("Leo", "Wait, three quarters"),
              ("Ms. Rivera", "Three quarter cups, Leo"), ("Priya", "So to find a fraction"),
              ("Ms. Rivera", "Exactly, Priya"), ("Leo", "Easy. Three eighths!"), ("Ms. Rivera", "Careful, Leo"),
              ("Mia", "But eight is bigger"), ("Theo", "Then we can rename"), ("Priya", "Wait, Leo says"),
              ("Ms. Rivera", "Let's check Theo"), ("Leo", "I still want the three eighths")]
    replayed = cli.invoke(app, ["replay", str(transcript), "--plain"])
    assert replayed.exit_code == 0, replayed.output
    assert in_order(replayed.stdout, *(part for who, said in spoken for part in (f"\n{who}: ", said)))
    markdown_file, html_file = tmp_path / "t.md", tmp_path / "t.html"
    for target in (markdown_file, html_file):
        exported = cli.invoke(app, ["replay", str(transcript), "--export", str(target)])
        assert exported.exit_code == 0, exported.output
    markdown = markdown_file.read_text(encoding="utf-8")
    assert in_order(markdown, *(part for who, said in spoken for part in (f"{who}**", said)))
    page = html_file.read_text(encoding="utf-8")
    assert in_order(page, *(part for who, said in spoken for part in (f"{who}</div>", said.replace("'", "&#x27;"))))
    assert "#3fb950" in page and "#f0883e" in page  # Sam's and Leo's own colours


def in_order(text: str, *parts: str) -> bool:
    positions: list[int] = []
    for part in parts:
        found = text.find(part, positions[-1] + 1 if positions else 0)
        if found < 0:
            return False
        positions.append(found)
    return True
