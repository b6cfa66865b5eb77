"""The events a turn yields: one discriminated union, one TypeAdapter.

The names follow the reference's ``StatelessEvent``.  The live view, the
transcript, the session file and batch reports all consume this one stream.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, TypeAdapter, model_serializer, model_validator

from .models import DirectorState, Slide
from .outcomes import DirectorOutcome


class CallUsage(BaseModel):
    """Token use of one LLM call, or a sum of them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0
    calls: int = 0
    ttft: float | None = None  # seconds to the first token (last call)
    duration: float | None = None

    def add(self, other: CallUsage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_tokens += other.cached_tokens
        self.cost += other.cost
        self.calls += other.calls


class TurnUsage(BaseModel):
    director: CallUsage = Field(default_factory=CallUsage)
    agent: CallUsage = Field(default_factory=CallUsage)


class ThinkingEvent(BaseModel):
    type: Literal["thinking"] = "thinking"
    stage: Literal["director", "agent_loading"]
    agent_id: str | None = None


class AgentStartEvent(BaseModel):
    type: Literal["agent_start"] = "agent_start"
    message_id: str
    agent_id: str
    agent_name: str
    avatar: str
    color: str


class TextDeltaEvent(BaseModel):
    type: Literal["text_delta"] = "text_delta"
    message_id: str
    content: str


class ActionEvent(BaseModel):
    type: Literal["action"] = "action"
    action_id: str
    action_name: str
    params: dict[str, Any] = Field(default_factory=dict)
    agent_id: str
    message_id: str


class AgentEndEvent(BaseModel):
    type: Literal["agent_end"] = "agent_end"
    message_id: str
    agent_id: str
    # Beyond the reference: the raw reply and the turn's context, so that the agent's
    # next prompt repeats its last one exactly and prompt caches are reused.
    raw_reply: str | None = None
    context: str | None = None


class CueUserEvent(BaseModel):
    type: Literal["cue_user"] = "cue_user"
    from_agent_id: str | None = None


class DirectorCorrectionEvent(BaseModel):
    """Beyond the reference: a routing guard (engine/guards.py) overruled the director's pick."""

    type: Literal["director_correction"] = "director_correction"
    original: str  # what the director picked: an agent id (maybe unknown), "USER" or "END"
    corrected: str  # what was dispatched instead: an agent id or "USER"
    rule: Literal["repeat_speaker", "unanswered", "unknown_agent"]


class LessonEvent(BaseModel):
    """Beyond the reference: a lesson was opened; its slides replace the class's slides."""

    type: Literal["lesson"] = "lesson"
    title: str
    slides: list[Slide] = Field(default_factory=list)
    scenes: int = 0  # how many scenes the lesson has


class SceneEvent(BaseModel):
    """Beyond the reference: the lesson moved to a scene (``slide`` is its slide's 0-based
    position among the lesson's slides, for slide scenes)."""

    type: Literal["scene"] = "scene"
    index: int = Field(ge=0)
    scene_id: str
    kind: Literal["slide", "quiz", "discussion"]
    title: str = ""
    slide: int | None = Field(default=None, ge=0)


class QuizAnswerEvent(BaseModel):
    """Beyond the reference: the learner answered a quiz question and it was graded."""

    type: Literal["quiz_answer"] = "quiz_answer"
    scene_id: str
    question_id: str
    question: str
    options: list[str] = Field(default_factory=list)
    answer: str
    chosen: list[str] = Field(default_factory=list)
    key: list[str] = Field(default_factory=list)  # the right letters (choice questions)
    points: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    max_points: int = Field(default=1, ge=1)
    correct: bool = False
    comment: str | None = None
    graded_by: Literal["key", "model", "rubric", "none"] = "key"  # rubric: the rubric's words decided; none: not graded
    explanation: str | None = None  # the lesson's one sentence on why the answer is right


class QuizScoreEvent(BaseModel):
    """Beyond the reference: a quiz was finished; its score and the lesson's so far."""

    type: Literal["quiz_score"] = "quiz_score"
    scene_id: str
    points: float = Field(ge=0, allow_inf_nan=False)
    max_points: int = Field(ge=0)
    lesson_points: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    lesson_max_points: int = Field(default=0, ge=0)


class GroundingEvent(BaseModel):
    """Beyond the reference: on a small model, the teacher said the lesson's own sentences because the
    class's reply did not carry them (``fallback``), or met a question outside the lesson (``beyond``)
    instead of letting the model guess, or said the answer the lesson expects to give (``expected``: a
    question matched to the lesson's ``faq:``, on a small model).  Shown as the teacher's message that follows it."""

    type: Literal["grounding"] = "grounding"
    kind: Literal["fallback", "beyond", "expected"]
    question: str = ""
    sentences: list[str] = Field(default_factory=list)  # the lesson's passages said (fallback), the answer (expected)


class ErrorEvent(BaseModel):
    type: Literal["error"] = "error"
    message: str


class DoneEvent(BaseModel):
    type: Literal["done"] = "done"
    total_actions: int = 0
    total_agents: int = 0
    agent_had_content: bool = False
    director_state: DirectorState
    usage: TurnUsage = Field(default_factory=TurnUsage)
    # Beyond the reference: what a batch report needs without re-deriving it.
    dropped_actions: int = 0
    parse_recoveries: int = 0
    outcome: DirectorOutcome | None = None  # the director's pick; None only in hand-built events
    reply_dropped: bool = False  # the agent's reply was dropped whole (engine/agent_reply.py): it took no turn
    ungrounded_sentences: int = 0  # a small model's sentences the lesson's gate left out (replies/gate.py)
    dropped_pointers: int = 0  # spotlights and lasers on nothing on the slide on screen (left out)
    answered_from_lesson: bool = False  # the lesson's answer was said for the model (it did not carry it)
    # Attempts of this turn that failed before it was answered (a turn asked of a server again after its
    # connection failed: serve/client.py); left out of a dump when 0, so in-process transcripts are unchanged.
    retried: int = 0

    @model_serializer(mode="wrap")
    def _without_zero_retries(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.retried:
            data.pop("retried", None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _from_legacy_decision(cls, data: object) -> object:
        """Older transcripts hold ``"decision": "<string>"``; read it as the outcome."""
        if isinstance(data, dict) and "decision" in data:
            data = dict(data)
            legacy = data.pop("decision")
            data.setdefault("outcome", legacy)
        return data


Event = Annotated[
    ThinkingEvent | AgentStartEvent | TextDeltaEvent | ActionEvent | AgentEndEvent
    | CueUserEvent | DirectorCorrectionEvent | ErrorEvent | DoneEvent
    | LessonEvent | SceneEvent | QuizAnswerEvent | QuizScoreEvent | GroundingEvent,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
EVENT_TYPES = frozenset({"thinking", "agent_start", "text_delta", "action", "agent_end",
                         "cue_user", "director_correction", "error", "done",
                         "lesson", "scene", "quiz_answer", "quiz_score", "grounding"})
