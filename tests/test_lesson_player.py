"""The lesson player (lessons/player.py) driven through the ClassRunner with scripted replies.

The full path: a scripted lecture interrupted mid-sentence, a question with the slide in the
prompts, the lecture resumed, a slide lectured live, a discussion scene, a quiz graded and
scored, the answers talked over; progress survives a save and reload of the session file.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import Event
from maic_cli.engine.models import ClassSettings, TurnConfig
from maic_cli.engine.round import RoundResult
from maic_cli.engine.runner import ClassRunner, RunnerHooks
from maic_cli.lessons.lesson import Lesson, LessonPlay
from maic_cli.lessons.player import LessonNavigationError, LessonPlayer
from maic_cli.lessons.quiz import AnswerNotUnderstood
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import ScriptedLLM, ScriptedReply
from maic_cli.store.session import Session, load_session, save_session
from tests.helpers import agent, decision, reply

CLASS = {a.id: a for a in (agent("mia", "student", "Mia"), agent("teacher", "teacher", "Ms. T"))}
LESSON = {
    "title": "Plants", "level": "beginner",
    "scenes": [
        {"type": "slide", "id": "s1", "title": "What plants need",
         "elements": [{"id": "e1", "content": "Light"}, {"id": "e2", "type": "bullets", "items": ["water", "air"]}],
         "script": [{"say": "Plants need light to live."}, {"spotlight": "e1"},
                    {"say": "They also need water and air."}, {"laser": "e2"}]},
        {"type": "slide", "id": "s2", "title": "The leaf", "elements": [{"id": "leaf", "type": "image",
                                                                            "content": "a green leaf"}]},
        {"type": "discussion", "id": "d1", "topic": "Plants in the dark", "prompt": "Predict", "initiator": "mia"},
        {"type": "quiz", "id": "q", "questions": [
            {"id": "q1", "type": "single", "question": "What gives energy?", "options": ["Soil", "Light"],
             "answer": "B", "points": 2},
            {"id": "q2", "type": "multiple", "question": "Inputs?", "options": ["Water", "Gold", "CO2"],
             "answer": ["A", "C"]},
            {"id": "q3", "type": "short", "question": "Why light?", "rubric": "Energy for the reaction.",
             "points": 3}]},
    ],
}


class Log(RunnerHooks):
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.rounds: list[str] = []
        self.saves = 0
        self.on_event: list[object] = []  # callables run on each event (to interrupt at a chosen point)

    def event(self, event: Event) -> None:
        self.events.append(event)
        for act in list(self.on_event):
            act(event)  # type: ignore[operator]

    def round_finished(self, result: RoundResult) -> None:
        self.rounds.append(result.reason)

    def save(self) -> None:
        self.saves += 1

    def types(self) -> list[str]:
        return [e.type for e in self.events]


def make(llm: ScriptedLLM, play: LessonPlay | None = None, classroom: Classroom | None = None,
         config: ClassSettings | None = None) -> tuple[LessonPlayer, Log]:
    log = Log()
    runner = ClassRunner(classroom or Classroom(), config or TurnConfig(agent_ids=list(CLASS)), llm, agents=CLASS,
                         hooks=[log])
    return LessonPlayer(runner, play or LessonPlay(lesson=Lesson.model_validate(LESSON))), log


def interrupt_at_delta(log: Log, task: asyncio.Task[RoundResult], containing: str) -> None:
    """Cancel ``task`` when a text delta containing ``containing`` is shown (as Ctrl-C would)."""
    def act(event: Event) -> None:
        if event.type == "text_delta" and containing in event.content:
            task.cancel()
    log.on_event.append(act)


def agent_prompt(call: LLMRequest) -> str:
    return "\n".join(m["content"] for m in call.messages)


async def interrupted_lecture(player: LessonPlayer, log: Log, word: str) -> RoundResult:
    task = asyncio.ensure_future(player.lecture())
    interrupt_at_delta(log, task, word)
    result = await task
    log.on_event.clear()
    return result


def state(player: LessonPlayer) -> str:
    """The lesson's state, read afresh (a step may change it between two reads)."""
    return player.progress.state


def test_lecture_interruption_question_resume_live_slide_discussion_quiz_and_review() -> None:
    llm = ScriptedLLM([
        decision("teacher"), reply("Light is energy."), decision("END"),  # the learner's question
        reply("This leaf catches light."),  # slide 2, lectured live: one teacher turn, no director call
        reply("What if plants sat in the dark?"), decision("END"),  # the discussion, opened by Mia
        json.dumps({"points": 2, "comment": "Mentions energy."}),  # grading q3
        decision("teacher"), reply("You got q2 wrong: gold is not an input."), decision("END"),  # review
    ])
    player, log = make(llm)

    async def main() -> None:
        player.start()
        assert log.types() == ["lesson", "scene"]
        store = player.runner.classroom.store
        assert [s.id for s in store.slides] == ["s1", "s2"] and store.current_slide == 0

        # 1. the lecture, interrupted inside its third step ("They also need …")
        result = await interrupted_lecture(player, log, "also")
        assert result.reason == "aborted" and log.rounds == ["aborted"]
        assert player.progress.step == 2 and player.progress.state == "paused"
        said = player.runner.classroom.messages[-1]
        assert said.agent_id == "teacher" and said.interrupted
        assert said.text.startswith("Plants need light to live. They") and "air" not in said.text
        assert store.spotlight == "e1" and [a.name for a in said.actions] == ["spotlight"]

        # 2. a question while paused: a normal round, the lesson and the slide in the prompts
        result = await player.ask("Why light?")
        assert result.speakers == ["teacher"]
        director, teacher = llm.calls[0], llm.calls[1]
        assert director.purpose == "director" and 'lesson "Plants", now at slide 1 of 2' in agent_prompt(director)
        prompt = agent_prompt(teacher)
        assert "# Lesson: Plants" in prompt and "stopped the lesson" in prompt and "[e1] text: Light" in prompt
        assert player.progress.state == "paused" and player.progress.step == 2

        # 3. Enter resumes: the half-said step is said again, whole, in a new message
        await player.advance()
        resumed = player.runner.classroom.messages[-1]
        assert resumed.text == "They also need water and air." and not resumed.interrupted
        assert player.progress.step == 4 and player.lecture_done and store.laser == "e2"

        # 4. Enter: slide 2 has no script, so the teacher lectures it live (one turn)
        await player.advance()
        lecture_call = llm.calls[3]
        assert lecture_call.purpose == "agent" and lecture_call.agent_id == "teacher"
        assert "You are lecturing this slide now" in agent_prompt(lecture_call)
        assert store.current_slide == 1 and player.progress.step == 1 and player.lecture_done

        # 5. Enter: the discussion scene, opened by its initiator; then the class is back to Q&A
        opened = await player.advance()
        assert opened is not None and opened.speakers == ["mia"]
        assert "You open the discussion on \"Plants in the dark\"" in agent_prompt(llm.calls[4])
        assert player.progress.discussed == ["d1"] and player.runner.config.discussion_topic is None

        # 6. Enter: the quiz; answers graded, a bad one asked again, the score at the end
        assert await player.advance() is None and state(player) == "quiz"
        q1 = player.current_question()
        assert q1 is not None and q1.id == "q1"
        with pytest.raises(AnswerNotUnderstood, match="'E' is not one of the options"):
            await player.answer(q1, "e")
        assert player.current_question() is q1 and not player.progress.answers
        assert (await player.answer(q1, "b")).points == 2
        q2 = player.current_question()
        assert q2 is not None and (await player.answer(q2, "1 2")).points == 0
        q3 = player.current_question()
        assert q3 is not None
        graded = await player.answer(q3, "Light gives the energy.")
        assert (graded.points, graded.graded_by, graded.comment) == (2, "model", "Mentions energy.")
        assert llm.calls[6].purpose == "grade"
        assert player.current_question() is None
        score = [e for e in log.events if e.type == "quiz_score"]
        assert len(score) == 1 and (score[0].points, score[0].max_points) == (4, 6)
        assert [e.question_id for e in log.events if e.type == "quiz_answer"] == ["q1", "q2", "q3"]
        assert player.progress.score() == (4, 6)

        # 7. the class talks the answers over: the graded answers are in the prompt
        await player.ask("What did I get wrong?")
        review = agent_prompt(llm.calls[8])
        assert "quiz answers so far" in review and 'They answered "1 2": 0 of 1 points; the key: A, C' in review

        # 8. past the last scene the lesson is finished
        assert await player.advance() is None and player.finished

    asyncio.run(main())
    assert llm.remaining == 0


def test_progress_survives_a_save_and_reload_and_resumes_at_the_step(tmp_path: Path) -> None:
    session = Session(config=TurnConfig(agent_ids=list(CLASS)), agents=list(CLASS.values()),
                      lesson=LessonPlay(lesson=Lesson.model_validate(LESSON), source="plants.yaml"))
    player, log = make(ScriptedLLM([]), session.lesson, session.classroom, session.config)
    path = tmp_path / "s.json"

    async def first() -> None:
        player.start()
        await interrupted_lecture(player, log, "also")

    asyncio.run(first())
    save_session(session, path)
    loaded = load_session(path)
    assert loaded.lesson is not None
    assert (loaded.lesson.progress.scene, loaded.lesson.progress.step, loaded.lesson.progress.state) == (0, 2, "paused")
    assert "lesson" not in json.loads(path.read_text())["config"]  # the prompt context is request-scoped

    resumed, _ = make(ScriptedLLM([]), loaded.lesson, loaded.classroom, loaded.config)

    async def second() -> None:
        resumed.start()
        assert resumed.runner.lesson is not None and resumed.runner.lesson.position == "slide 1 of 2"
        await resumed.advance()

    asyncio.run(second())
    assert loaded.classroom.messages[-1].text == "They also need water and air."
    assert loaded.lesson.progress.step == 4


def test_navigation_next_prev_goto_and_outline() -> None:
    player, log = make(ScriptedLLM([]))
    player.start()
    player.goto_slide(2)
    assert player.progress.scene == 1 and player.runner.classroom.store.current_slide == 1
    with pytest.raises(LessonNavigationError, match=r"no slide 3: this lesson has 2 slides \(1–2\)"):
        player.goto_slide(3)
    assert player.next() and player.scene.id == "d1"
    assert player.prev() and player.prev() and not player.prev()
    outline = player.outline()
    assert [(o.number, o.kind, o.slide, o.current) for o in outline] == [
        (1, "slide", 1, True), (2, "slide", 2, False), (3, "discussion", None, False), (4, "quiz", None, False)]
    scenes = [e for e in log.events if e.type == "scene"]
    assert [e.scene_id for e in scenes] == ["s1", "s2", "d1", "s2", "s1"]


def test_a_live_lecture_interrupted_is_lectured_again_and_an_error_leaves_it_to_retry() -> None:
    # chunk_delay: the stream awaits between chunks, so the cancel lands inside the reply (no timing is asserted)
    slow = ScriptedReply(reply=reply("This leaf catches light and turns it into food."), chunk_size=3,
                         chunk_delay=0.001)
    llm = ScriptedLLM([slow, ScriptedReply(error="server_error"), reply("Here is the leaf.")])
    player, log = make(llm)

    async def main() -> None:
        player.start()
        player.goto_slide(2)
        result = await interrupted_lecture(player, log, "")  # at the first words
        assert result.reason == "aborted" and player.progress.step == 0 and player.progress.state == "paused"
        assert (await player.lecture()).reason == "error" and player.progress.step == 0
        assert (await player.lecture()).reason == "max_turns" and player.progress.step == 1
        first, last = player.runner.classroom.messages[0], player.runner.classroom.messages[-1]
        assert first.interrupted and last.text == "Here is the leaf." and not last.interrupted

    asyncio.run(main())
    assert [c.purpose for c in llm.calls] == ["agent"] * 3  # the teacher is the trigger: no director call


def test_an_unknown_initiator_falls_back_to_the_first_student_and_config_is_restored() -> None:
    data = json.loads(json.dumps(LESSON))
    data["scenes"][2]["initiator"] = "ghost"
    llm = ScriptedLLM([reply("Let us talk."), decision("END")])
    player, _ = make(llm, LessonPlay(lesson=Lesson.model_validate(data)))
    player.start()
    player.progress.scene = 2

    async def main() -> None:
        result = await player.discuss()
        assert result.speakers == ["mia"]

    asyncio.run(main())
    assert player.runner.config.discussion_topic is None and player.runner.config.initiator_id is None
