"""A recorded lesson, written with the real TranscriptWriter (no player needed): the lesson
opens, a scripted lecture points at elements (inside a message and between messages), the
learner interrupts, the slide changes, a quiz is answered (right, wrong, short) and scored."""

from __future__ import annotations

from pathlib import Path

from maic_cli.engine.events import (
    ActionEvent,
    AgentEndEvent,
    AgentStartEvent,
    DoneEvent,
    Event,
    LessonEvent,
    QuizAnswerEvent,
    QuizScoreEvent,
    SceneEvent,
    TextDeltaEvent,
)
from maic_cli.engine.models import DirectorState, TurnConfig
from maic_cli.lessons.lesson import Lesson
from maic_cli.store.lessons import load_lesson
from maic_cli.store.transcript import TranscriptHeader, TranscriptWriter
from tests.helpers import agent

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
TEACHER = agent("teacher", "teacher", "Ms. T")
STUDENT = agent("curious_student", "student", "Mia")
AGENTS_BY_ID = {TEACHER.id: TEACHER, STUDENT.id: STUDENT}


def photosynthesis() -> Lesson:
    return load_lesson(LESSONS / "photosynthesis.yaml")


def speech(message_id: str, *parts: str | tuple[str, str], who: str = "teacher") -> list[Event]:
    """An agent message: strings are speech, (action, element) pairs point inside it."""
    speaker = TEACHER if who == "teacher" else STUDENT
    events: list[Event] = [AgentStartEvent(message_id=message_id, agent_id=speaker.id, agent_name=speaker.name,
                                           avatar="🙂", color="blue")]
    for number, part in enumerate(parts):
        if isinstance(part, str):
            events.append(TextDeltaEvent(message_id=message_id, content=part))
        else:
            events.append(ActionEvent(action_id=f"{message_id}_{number}", action_name=part[0],
                                      params={"elementId": part[1]}, agent_id=speaker.id, message_id=message_id))
    return [*events, AgentEndEvent(message_id=message_id, agent_id=speaker.id)]


def pointer(name: str, element: str) -> ActionEvent:
    """A lecture script's spotlight or laser step, outside any message."""
    return ActionEvent(action_id=f"script_{name}_{element}", action_name=name, params={"elementId": element},
                       agent_id="teacher", message_id="script")


def quiz_answers() -> list[Event]:
    return [
        QuizAnswerEvent(scene_id="check", question_id="q1", question="Where does most of a tree's mass come from?",
                        options=["The soil", "The water", "Carbon dioxide from the air", "Sunlight"], answer="c",
                        chosen=["C"], key=["C"], points=2, max_points=2, correct=True),
        QuizAnswerEvent(scene_id="check", question_id="q2", question="Which of these does photosynthesis produce?",
                        options=["Oxygen", "Carbon dioxide", "Glucose", "Water"], answer="A",
                        chosen=["A"], key=["A", "C"], points=0, max_points=2, correct=False),
        QuizAnswerEvent(scene_id="check", question_id="q3", question="In one or two sentences, why do plants "
                        "need light?", answer="Light gives the energy to make sugar.", points=3, max_points=3,
                        correct=True, comment="Names energy, as the rubric asks."),
        QuizScoreEvent(scene_id="check", points=5, max_points=7, lesson_points=5, lesson_max_points=7),
    ]


def write_lesson_transcript(path: Path, lesson: Lesson | None = None) -> Path:
    lesson = lesson or photosynthesis()
    header = TranscriptHeader(model="scripted", produced_by="a test", agents=[TEACHER, STUDENT],
                              config=TurnConfig(agent_ids=[TEACHER.id, STUDENT.id]))
    writer = TranscriptWriter(path, header)
    done = DoneEvent(director_state=DirectorState())
    writer.event(LessonEvent(title=lesson.title, slides=lesson.slides(), scenes=len(lesson.scenes)))
    writer.round_started(None)
    first, second = lesson.slides()[:2]
    writer.event(SceneEvent(index=0, scene_id=first.id, kind="slide", title=first.title, slide=0))
    for event in speech("m1", "Here is a puzzle to start.", ("spotlight", first.elements[0].id),
                        "Where does the mass come from?"):
        writer.event(event)
    writer.event(pointer("laser", first.elements[-1].id))
    writer.event(done)
    writer.round_finished("end")
    writer.learner("Why not the soil?")
    writer.round_started(None)
    for event in speech("m2", "The soil barely shrinks: the mass comes from the air."):
        writer.event(event)
    writer.event(done)
    writer.round_finished("end")
    writer.round_started(None)
    writer.event(SceneEvent(index=1, scene_id=second.id, kind="slide", title=second.title, slide=1))
    for event in speech("m3", ("spotlight", second.elements[0].id), "This is the whole reaction on one line."):
        writer.event(event)
    writer.event(pointer("laser", second.elements[1].id))
    writer.event(done)
    writer.round_finished("end")
    quiz = next(index for index, scene in enumerate(lesson.scenes) if scene.type == "quiz")
    writer.event(SceneEvent(index=quiz, scene_id=lesson.scenes[quiz].id, kind="quiz", title="Check your understanding"))
    for event in quiz_answers():
        writer.event(event)
    writer.close()
    return path


def lesson_events(lesson: Lesson) -> list[Event]:
    """Any lesson played through: each scene opened, each slide's elements spotlighted in turn."""
    events: list[Event] = [LessonEvent(title=lesson.title, slides=lesson.slides(), scenes=len(lesson.scenes))]
    for index, scene in enumerate(lesson.scenes):
        title = scene.title or scene.id
        events.append(SceneEvent(index=index, scene_id=scene.id, kind=scene.type, title=title,
                                 slide=lesson.slide_number(index)))
        if scene.type == "slide":
            events += [pointer("spotlight", element.id) for element in scene.elements]
    return events
