"""What a lesson run must do (``maic run`` scenarios that name a lesson), and the check.

A scenario that plays a lesson may expect things of it as a whole: that the lecture
reached a scene (by id, or its 1-based number), that the quiz score falls in a range,
and who spoke while a discussion scene was open.  :class:`LessonLog` watches the
class's events (scene changes, quiz scores, who started speaking) so the check needs
nothing but the event stream every run already has.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..engine.events import Event
from ..lessons.lesson import Lesson


class LessonExpectations(BaseModel):
    """What a played lesson must do; every field is optional."""

    model_config = ConfigDict(extra="forbid")

    reaches_scene: str | int | None = None  # a scene id, or its number (1-based)
    quiz_score: tuple[float, float] | None = None  # points earned, inclusive range
    discussion_speakers: dict[str, list[str]] = Field(default_factory=dict)  # scene id → must speak

    @field_validator("quiz_score", mode="before")
    @classmethod
    def _one_or_range(cls, value: object) -> object:
        """``quiz_score: 5`` means exactly 5; ``[4, 7]`` a range."""
        return (value, value) if isinstance(value, int | float) and not isinstance(value, bool) else value

    @model_validator(mode="after")
    def _ordered(self) -> LessonExpectations:
        if self.quiz_score is not None and self.quiz_score[0] > self.quiz_score[1]:
            raise ValueError("quiz_score: [low, high] with low <= high")
        return self

    def problems_with(self, lesson: Lesson) -> list[str]:
        """What in these expectations names something the lesson does not have."""
        ids = [scene.id for scene in lesson.scenes]
        problems = []
        target = self.reaches_scene
        if isinstance(target, str) and target not in ids:
            problems.append(f"reaches_scene: no scene {target!r} in the lesson (scenes: {', '.join(ids)})")
        if isinstance(target, int) and not 1 <= target <= len(ids):
            problems.append(f"reaches_scene: the lesson has scenes 1 to {len(ids)}, not {target}")
        discussions = {scene.id for scene in lesson.scenes if scene.type == "discussion"}
        problems.extend(f"discussion_speakers: {scene_id!r} is not a discussion scene of the lesson"
                        for scene_id in self.discussion_speakers if scene_id not in discussions)
        if self.quiz_score is not None and self.quiz_score[0] > lesson.max_points:
            problems.append(f"quiz_score: the lesson's quizzes give at most {lesson.max_points} points")
        return problems


@dataclass
class LessonLog:
    """What a played lesson did, read off the class's events."""

    furthest_scene: int = -1  # index of the furthest scene entered
    scene_id: str | None = None  # the scene open now
    scene_kind: str | None = None
    points: float = 0.0
    max_points: int = 0
    quizzes: int = 0
    speakers: dict[str, list[str]] = field(default_factory=dict)  # discussion scene id → who spoke, in order

    def observe(self, event: Event) -> None:
        if event.type == "scene":
            self.furthest_scene = max(self.furthest_scene, event.index)
            self.scene_id, self.scene_kind = event.scene_id, event.kind
        elif event.type == "quiz_score":
            self.points, self.max_points = event.lesson_points, event.lesson_max_points
            self.quizzes += 1
        elif event.type == "agent_start" and self.scene_kind == "discussion" and self.scene_id is not None:
            self.speakers.setdefault(self.scene_id, []).append(event.agent_id)


def check_lesson(expect: LessonExpectations, log: LessonLog, lesson: Lesson) -> list[str]:
    """The lesson expectations this run failed, each as one readable line."""
    failures: list[str] = []
    ids = [scene.id for scene in lesson.scenes]
    target = expect.reaches_scene
    if target is not None:
        wanted = ids.index(target) if isinstance(target, str) and target in ids else (
            target - 1 if isinstance(target, int) else len(ids))
        if log.furthest_scene < wanted:
            reached = ids[log.furthest_scene] if 0 <= log.furthest_scene < len(ids) else "no scene"
            failures.append(f"the lesson reached scene {log.furthest_scene + 1} ({reached}), "
                            f"expected scene {wanted + 1} ({ids[wanted] if wanted < len(ids) else target})")
    if expect.quiz_score is not None:
        low, high = expect.quiz_score
        if not log.quizzes:
            failures.append(f"no quiz was finished, expected a score of {_points(low)}–{_points(high)}")
        elif not low <= log.points <= high:
            failures.append(f"quiz score {_points(log.points)}/{log.max_points}, "
                            f"expected {_points(low)}–{_points(high)}")
    for scene_id, agents in expect.discussion_speakers.items():
        spoke = log.speakers.get(scene_id, [])
        failures.extend(f"{agent_id} did not speak in discussion {scene_id}"
                        for agent_id in agents if agent_id not in spoke)
    return failures


def _points(value: float) -> str:
    return f"{value:g}"
