"""Learning records: xAPI 1.0.3 statements built from what happened in a class (pure: no I/O).

One statement per thing a school's learning record store cares about, with verbs and
activity types from the ADL vocabulary (and its registry's Activity Streams / Tin Can terms
where ADL has none):

=========================  ==================================================  =========================
what happened              verb                                                object (activity type)
=========================  ==================================================  =========================
lesson started             http://adlnet.gov/expapi/verbs/attempted            lesson
scene viewed               http://adlnet.gov/expapi/verbs/experienced          slide / assessment
question asked             http://adlnet.gov/expapi/verbs/asked                question (the class)
quiz question answered     http://adlnet.gov/expapi/verbs/answered             cmi.interaction
quiz scored                http://adlnet.gov/expapi/verbs/scored               assessment
discussion joined          http://activitystrea.ms/join                        discussion
lesson completed           http://adlnet.gov/expapi/verbs/completed            lesson
=========================  ==================================================  =========================

Statement ids are stable: a UUID (version 5) of the class's key (its transcript header: when
it began, its session, its model) and the event's own key (``lesson/started``,
``scene/<id>/<n>``, ``asked/<n>``, ``quiz/<scene>/<question>`` …), so exporting or sending the
same class twice gives the same ids and a store keeps each statement once.  What the learner
or a lesson file wrote is cleaned of control sequences and cut to a bounded length.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..untrusted import clean
from .events import LessonEvent, QuizAnswerEvent, QuizScoreEvent, SceneEvent
from .session_record import Happening, collect, cut, is_question

NAMESPACE = uuid.UUID("6d0e2a63-3f0a-5c4e-9d0b-7a3c1e5f2b90")  # maic's: never change it (ids would change)
ADL_VERB = "http://adlnet.gov/expapi/verbs/"
ADL_TYPE = "http://adlnet.gov/expapi/activities/"
VERBS = {
    "attempted": ADL_VERB + "attempted", "experienced": ADL_VERB + "experienced", "asked": ADL_VERB + "asked",
    "answered": ADL_VERB + "answered", "scored": ADL_VERB + "scored", "completed": ADL_VERB + "completed",
    "joined": "http://activitystrea.ms/join",
}
TYPES = {
    "lesson": ADL_TYPE + "lesson", "assessment": ADL_TYPE + "assessment", "question": ADL_TYPE + "question",
    "interaction": ADL_TYPE + "cmi.interaction", "slide": "http://id.tincanapi.com/activitytype/slide",
    "discussion": "http://id.tincanapi.com/activitytype/discussion",
}
DEFAULT_HOMEPAGE = "https://maic.invalid"  # the actor's account home page (``--xapi-homepage`` may change it)
LANGUAGE = "und"  # the language of names and descriptions is not known (RFC 5646: undetermined)
MAX_TEXT = 1000  # characters of a description or a response
CHOICE_IDS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # a choice question's options, at most 26 (a lesson allows fewer)


@dataclass(frozen=True)
class ClassKey:
    """Who learned, and which class: what makes statement ids and activity ids."""

    learner: str
    key: str  # the class's own key (see :func:`class_key`)
    homepage: str = DEFAULT_HOMEPAGE
    topic: str | None = None  # a discussion class's topic


def class_key(created_at: float, session: str | None, model: str) -> str:
    return f"{created_at!r}|{session or ''}|{model}"


def statement_id(key: ClassKey, event_key: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{key.key}\n{event_key}"))


def activity_iri(*parts: str) -> str:
    """``urn:maic:…``: a lesson is named by its title (the same lesson, the same activity, in every class)."""
    return "urn:maic:" + ":".join(str(uuid.uuid5(NAMESPACE, part)) if i % 2 else part for i, part in enumerate(parts))


def _text(value: str, limit: int = MAX_TEXT) -> str:
    return cut(clean(value), limit) or "-"


def _lang(value: str, limit: int = 200) -> dict[str, str]:
    return {LANGUAGE: _text(value, limit)}


def _activity(iri: str, kind: str, name: str, description: str | None = None,
              **definition: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"type": TYPES[kind], "name": _lang(name)}
    if description:
        body["description"] = _lang(description, MAX_TEXT)
    body.update(definition)
    return {"objectType": "Activity", "id": iri, "definition": body}


def _score(points: float, max_points: int) -> dict[str, Any]:
    raw = round(min(max(points, 0.0), float(max_points)), 4)
    score: dict[str, Any] = {"raw": raw, "min": 0, "max": max_points}
    if max_points > 0:
        score["scaled"] = round(raw / max_points, 4)
    return score


class _Builder:
    def __init__(self, key: ClassKey) -> None:
        self.key = key
        self.statements: list[dict[str, Any]] = []
        self.seen: set[str] = set()
        self.registration = str(uuid.uuid5(NAMESPACE, key.key))
        self.actor = {"objectType": "Agent", "name": _text(key.learner, 100),
                      "account": {"homePage": key.homepage, "name": _text(key.learner, 100)}}

    def add(self, event_key: str, at: float, verb: str, obj: dict[str, Any], *,
            result: dict[str, Any] | None = None, parent: dict[str, Any] | None = None) -> None:
        sid = statement_id(self.key, event_key)
        if sid in self.seen:  # an event seen again (a resumed lesson opens again): one statement
            return
        self.seen.add(sid)
        context: dict[str, Any] = {"registration": self.registration, "platform": "maic"}
        if parent is not None:
            context["contextActivities"] = {"parent": [{"objectType": "Activity", "id": parent["id"]}]}
        statement: dict[str, Any] = {
            "id": sid, "actor": self.actor,
            "verb": {"id": VERBS[verb], "display": {"en-US": verb}},
            "object": obj, "context": context,
            "timestamp": datetime.fromtimestamp(max(at, 0.0), UTC).isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
        }
        if result:
            statement["result"] = result
        self.statements.append(statement)


def statements(key: ClassKey, happenings: Iterable[Happening], roles: Mapping[str, str] | None = None
               ) -> list[dict[str, Any]]:
    """The class's statements, in the order things happened."""
    items = list(happenings)
    facts = {lesson.title: lesson for lesson in collect(items, roles or {}).lessons}
    build = _Builder(key)
    class_activity = _activity(activity_iri("class", key.key), "discussion" if key.topic else "question",
                               key.topic or "a maic class")
    if key.topic and items:
        build.add("discussion/joined", items[0].at, "joined", class_activity)
    lesson: dict[str, Any] | None = None
    scenes: dict[str, int] = {}
    asked = 0
    for item in items:
        event = item.event
        if item.learner is not None and is_question(item.learner):
            asked += 1
            question = _activity(activity_iri("class", key.key) + f":question:{asked}", "question",
                                 f"question {asked}", item.learner)
            build.add(f"asked/{asked}", item.at, "asked", question, result={"response": _text(item.learner)},
                      parent=lesson or class_activity)
        elif isinstance(event, LessonEvent):
            lesson = _activity(activity_iri("lesson", event.title), "lesson", event.title)
            build.add(f"lesson/{event.title}/started", item.at, "attempted", lesson)
        elif lesson is not None and isinstance(event, SceneEvent):
            scenes[event.scene_id] = scenes.get(event.scene_id, 0) + 1
            scene = _activity(f"{lesson['id']}:scene:{_iri_part(event.scene_id)}",
                              {"slide": "slide", "quiz": "assessment", "discussion": "discussion"}[event.kind],
                              event.title or event.scene_id)
            verb = "joined" if event.kind == "discussion" else "experienced"
            build.add(f"lesson/{lesson['id']}/scene/{event.scene_id}/{scenes[event.scene_id]}", item.at, verb, scene,
                      parent=lesson)
        elif lesson is not None and isinstance(event, QuizAnswerEvent):
            build.add(f"lesson/{lesson['id']}/quiz/{event.scene_id}/{event.question_id}", item.at, "answered",
                      _interaction(lesson["id"], event), result=_answer_result(event), parent=lesson)
        elif lesson is not None and isinstance(event, QuizScoreEvent):
            quiz = _activity(f"{lesson['id']}:scene:{_iri_part(event.scene_id)}", "assessment", event.scene_id)
            build.add(f"lesson/{lesson['id']}/scored/{event.scene_id}", item.at, "scored", quiz,
                      result={"score": _score(event.points, event.max_points), "completion": True}, parent=lesson)
    for facts_of in facts.values():
        if facts_of.completed:  # after its last scene and quiz, at the time of its last event
            lesson = _activity(activity_iri("lesson", facts_of.title), "lesson", facts_of.title)
            result: dict[str, Any] = {"completion": True}
            if facts_of.score is not None and facts_of.score[1] > 0:
                result["score"] = _score(*facts_of.score)
            build.add(f"lesson/{lesson['id']}/completed", facts_of.ended, "completed", lesson, result=result)
    return build.statements


def _iri_part(text: str) -> str:
    """A scene or question id (``[A-Za-z0-9_.-]`` in a valid lesson) as it may stand in an IRI."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "_.-") else "-" for c in text[:64]) or "-"


def _letters(event: QuizAnswerEvent, given: list[str]) -> list[str]:
    """The option letters among ``given`` (a transcript may hold anything there), each once, in order."""
    ids = CHOICE_IDS[:len(event.options)]
    return sorted({letter.strip().upper() for letter in given[:len(CHOICE_IDS)]} & set(ids))


def _interaction(lesson_iri: str, event: QuizAnswerEvent) -> dict[str, Any]:
    iri = f"{lesson_iri}:quiz:{_iri_part(event.scene_id)}:{_iri_part(event.question_id)}"
    if event.options:
        options = zip(CHOICE_IDS, event.options, strict=False)  # beyond Z: not a choice (a lesson has fewer)
        choices = [{"id": letter, "description": _lang(option)} for letter, option in options]
        definition: dict[str, Any] = {"interactionType": "choice", "choices": choices}
        if _letters(event, event.key):
            definition["correctResponsesPattern"] = ["[,]".join(_letters(event, event.key))]
    else:
        definition = {"interactionType": "long-fill-in"}
    return _activity(iri, "interaction", event.question_id, event.question, **definition)


def _answer_result(event: QuizAnswerEvent) -> dict[str, Any]:
    chosen = _letters(event, event.chosen)
    response = "[,]".join(chosen) if event.options and chosen else _text(event.answer)
    result: dict[str, Any] = {"response": response or "-", "score": _score(event.points, event.max_points)}
    if event.graded_by != "none":
        result["success"] = event.correct
    return result
