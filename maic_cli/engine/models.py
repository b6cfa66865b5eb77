"""The engine's data: agents, messages, classroom state and the turn request.

These are plain pydantic models so that the same objects are validated when a
persona file is loaded, written into the session file and sent back in as the
next request.  Nothing here does I/O.

Action params and whiteboard elements are valid by construction: a record's
params go through :func:`~.action_params.coerce_params` (unusable params are
emptied, the record kept), and a whiteboard element whose params cannot be
made usable is refused — a stored board that holds one (a damaged or crafted
session file) loads without it.
"""

from __future__ import annotations

import os
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..replies.sanitize import clean_object
from .action_params import ELEMENT_ACTIONS, PARAM_MODELS, coerce_params

Role = Literal["teacher", "assistant", "student"]
SceneType = Literal["slide", "whiteboard"]


def new_id(prefix: str) -> str:
    """``prefix_`` and 10 random hex digits: the first 5 bytes a ``uuid4`` would hold, without making one."""
    return f"{prefix}_{os.urandom(5).hex()}"


class AgentVoice(BaseModel):
    """How one agent sounds: an engine's voice id, its speed and its pitch.

    A persona file may choose these and nothing else: never an endpoint, a key or a file path (the speech
    engine and where it is reached come from flags, the environment or config.yaml only).  ``id=None`` means the
    engine's default voice; every field left out is derived from the agent's id and role.
    """

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:+-]{0,79}$")
    speed: float | None = Field(default=None, ge=0.5, le=2.0)  # 1.0 = the voice's own pace
    pitch: float | None = Field(default=None, ge=-12.0, le=12.0)  # semitones from the voice's own


class AgentConfig(BaseModel):
    """One persona. ``allowed_actions=None`` means the role's default set."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=40)
    name: str = Field(min_length=1, max_length=60)
    role: Role
    persona: str = Field(min_length=1)
    avatar: str = "🙂"
    color: str = "white"
    priority: int = Field(default=5, ge=1, le=10)
    allowed_actions: list[str] | None = None
    voice: AgentVoice | None = None  # None: a distinct, stable voice derived from id and role

    @field_validator("id")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        if value.upper() in {"USER", "END"}:
            raise ValueError(f"'{value}' is reserved for the director")
        return value

    @field_validator("allowed_actions")
    @classmethod
    def _known_actions(cls, value: list[str] | None) -> list[str] | None:
        unknown = [name for name in value or [] if name not in PARAM_MODELS]
        if unknown:
            raise ValueError(f"unknown action(s) {', '.join(unknown)}; known: {', '.join(PARAM_MODELS)}")
        return value


class UserProfile(BaseModel):
    nickname: str = "Learner"
    bio: str = ""
    # What the class remembers of the learner's earlier sessions (store/learner_profile.py), a few
    # short quoted lines for the prompts.  Request-scoped, never stored: a session file or transcript
    # someone shares holds no memory, and a chat loads it again from the learner's own profile.
    memory: list[str] = Field(default_factory=list, exclude=True, max_length=12)


def record_params(name: object, params: object) -> dict[str, Any]:
    """The params kept in a history record: coerced for a known action, else only cleaned
    (no broken surrogates, bounded depth); ``{}`` when unusable — the record itself stays."""
    if isinstance(name, str) and name in PARAM_MODELS:
        return coerce_params(name, params) or {}
    return clean_object(params)


def _with_safe_params(data: Any, name_key: str) -> Any:
    if isinstance(data, dict) and "params" in data:
        return {**data, "params": record_params(data.get(name_key), data["params"])}
    return data


class ActionRecord(BaseModel):
    """An action as it happened inside a message."""

    action_id: str
    name: str
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _safe_params(cls, data: Any) -> Any:
        return _with_safe_params(data, "name")


class MessagePart(BaseModel):
    kind: Literal["text", "action"]
    text: str = ""
    action: ActionRecord | None = None


class Message(BaseModel):
    """A learner message (``role='user'``) or an agent's message (``role='agent'``)."""

    id: str = Field(default_factory=lambda: new_id("msg"))
    role: Literal["user", "agent"]
    agent_id: str | None = None
    agent_name: str | None = None
    parts: list[MessagePart] = Field(default_factory=list)
    interrupted: bool = False
    raw_reply: str | None = None  # an agent's reply as the model wrote it
    context: str | None = None  # what changed-per-turn context the agent was given
    created_at: float = Field(default_factory=time.time)

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if p.kind == "text")

    @property
    def actions(self) -> list[ActionRecord]:
        return [p.action for p in self.parts if p.kind == "action" and p.action is not None]

    def append_text(self, text: str) -> None:
        if self.parts and self.parts[-1].kind == "text":
            self.parts[-1].text += text
        else:
            self.parts.append(MessagePart(kind="text", text=text))

    @classmethod
    def from_learner(cls, text: str) -> Message:
        return cls(role="user", parts=[MessagePart(kind="text", text=text)])


SlideElementType = Literal["text", "bullets", "image", "formula", "chart", "video", "shape", "table", "code"]


class SlideElement(BaseModel):
    """One element of a slide, pointed at by its id.  ``content`` is the text (an image's alt
    text, a formula's source, a code block); a bullet list has ``items``, a table ``rows``
    (the first row is the header)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=64)
    type: SlideElementType = "text"
    content: str = ""
    items: list[str] = Field(default_factory=list)  # bullets
    rows: list[list[str]] = Field(default_factory=list)  # table
    language: str | None = None  # code

    def plain_text(self) -> str:
        """The element as one line of plain text (for prompts and previews)."""
        if self.type == "bullets" and self.items:
            return "; ".join(f"- {item}" for item in self.items)
        if self.type == "table" and self.rows:
            return " / ".join(" | ".join(row) for row in self.rows)
        return self.content


class Slide(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    elements: list[SlideElement] = Field(default_factory=list)


class CodeLine(BaseModel):
    id: str
    text: str


class WhiteboardElement(BaseModel):
    id: str
    kind: Literal["text", "shape", "chart", "latex", "table", "line", "code"]
    params: dict[str, Any] = Field(default_factory=dict)
    agent_id: str | None = None
    lines: list[CodeLine] = Field(default_factory=list)  # code only
    next_line: int = 1  # code only: the number of the next fresh line id

    @model_validator(mode="after")
    def _usable_params(self) -> WhiteboardElement:
        params = coerce_params(ELEMENT_ACTIONS[self.kind], self.params)
        if params is None:
            raise ValueError(f"unusable {self.kind} element params")
        params.pop("elementId", None)
        self.params = params
        return self


class StoreState(BaseModel):
    """What the class can see: the whiteboard, the slides and what is pointed at."""

    whiteboard: list[WhiteboardElement] = Field(default_factory=list)
    whiteboard_open: bool = False
    slides: list[Slide] = Field(default_factory=list)
    current_slide: int = 0
    spotlight: str | None = None
    laser: str | None = None
    next_element: int = 1

    @field_validator("whiteboard", mode="before")
    @classmethod
    def _drop_unusable_elements(cls, value: Any) -> Any:
        """One bad element (a crafted or damaged file) must not make the whole state unloadable."""
        if not isinstance(value, list):
            return []
        kept = []
        for item in value:
            try:
                kept.append(WhiteboardElement.model_validate(item))
            except ValidationError:
                continue
        return kept

    @property
    def scene_type(self) -> SceneType:
        return "slide" if self.slides else "whiteboard"

    @property
    def slide(self) -> Slide | None:
        if not self.slides:
            return None
        return self.slides[min(max(self.current_slide, 0), len(self.slides) - 1)]


class WhiteboardActionRecord(BaseModel):
    action_name: str
    agent_id: str
    agent_name: str
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _safe_params(cls, data: Any) -> Any:
        return _with_safe_params(data, "action_name")


class AgentTurnSummary(BaseModel):
    agent_id: str
    agent_name: str
    content_preview: str
    action_count: int = 0
    whiteboard_actions: list[WhiteboardActionRecord] = Field(default_factory=list)


class DirectorState(BaseModel):
    """What the director remembers between the calls of one round."""

    turn_count: int = 0
    agent_responses: list[AgentTurnSummary] = Field(default_factory=list)
    whiteboard_ledger: list[WhiteboardActionRecord] = Field(default_factory=list)


DEFAULT_MAX_TURNS = 6  # agent turns per round at most


def default_initiator(agents: list[AgentConfig]) -> str:
    """Who opens a discussion when nobody is named: the first student, else the first agent."""
    return next((a.id for a in agents if a.role == "student"), agents[0].id)


class LessonContext(BaseModel):
    """Where the class is in a lesson, for the agent and director prompts.  Request-scoped: the
    lesson player (lessons/player.py) sets it from the session's lesson; it is never stored."""

    title: str
    level: str = ""
    scene: str = ""  # the current scene's title
    kind: Literal["slide", "quiz", "discussion"] = "slide"
    position: str = ""  # "slide 2 of 3", "scene 5 of 5"
    # question: the learner's message interrupts the lesson; lecture: the teacher lectures the slide
    # (no learner message); discuss: the lesson's discussion scene opens.
    task: Literal["question", "lecture", "discuss"] = "question"
    quiz: list[str] = Field(default_factory=list)  # the learner's graded answers, to talk them over
    # A question's grounding (lessons/grounding.py): the lesson's passages that answer it, or beyond: the
    # question is not the lesson's (say so, bring it back).  focus: the slide element asked about, whole.
    grounding: list[str] = Field(default_factory=list)
    beyond: bool = False
    focus: str | None = None
    # A live lecture's place in the lesson: open it (first slide), carry on, close it (last slide), or only.
    stage: Literal["open", "continue", "close", "only"] | None = None
    # Small models (replies/gate.py): the lesson's sentences live speech may rest on; the answer owed to a
    # question (the teacher's grounded line), said by whoever answers first if their reply does not carry it.
    sources: list[str] = Field(default_factory=list)
    answer: str | None = None


class ClassSettings(BaseModel):
    """The class as a session, a transcript header or a scenario keeps it: who is in it, its mode
    (Q&A, or a discussion's topic, prompt and initiator), its limits, language and director.  Only
    these are saved; what one round is played with is a :class:`RoundContext`."""

    agent_ids: list[str]
    discussion_topic: str | None = None
    discussion_prompt: str | None = None
    initiator_id: str | None = None  # who opens a discussion (named to the director)
    agent_configs: dict[str, AgentConfig] = Field(default_factory=dict)
    max_turns: int = Field(default=DEFAULT_MAX_TURNS, ge=1, le=50)  # as --max-turns: a file cannot lift it
    language: str | None = None
    # Who picks the next speaker (engine/policies.py): llm, rules, hybrid or a typed module:function;
    # None: the model's default.  A name here never imports code; only the --director flag does.
    director: str | None = None


class RoundContext(BaseModel):
    """What one round is played with beyond the class's settings; set by code (the runner) for that
    round alone and never saved, so a session or transcript someone sent can set none of it."""

    model_config = ConfigDict(frozen=True)

    trigger_agent_id: str | None = None  # who answers first (an @mention, a lecture's teacher)
    # Where the class is in a lesson (the lesson player's scene, a question's grounding); the lesson
    # itself is in the session.
    lesson: LessonContext | None = None
    compact_prompts: bool = False  # the prompt variant of the model serving the round
    # Routing guard: may an agent speak twice in one round?  A researcher's runner may allow it.
    allow_repeat_speaker: bool = False


class RoundOverrides(BaseModel):
    """The settings one round changes (a lesson's live lecture or discussion scene) and the lesson it
    was in, as :meth:`ClassRunner.play_round <.runner.ClassRunner.play_round>` takes them and a
    transcript records them, so ``replay --check`` can play that round again the same way."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    max_turns: int | None = Field(default=None, ge=1, le=50)
    discussion_topic: str | None = None
    discussion_prompt: str | None = None
    initiator_id: str | None = None
    lesson: LessonContext | None = None  # where the class was in a lesson (it reaches the prompts)

    def settings(self) -> dict[str, object]:
        """The class settings this round changes (``lesson`` is the round's context, not a setting)."""
        return {name: value for name in type(self).model_fields
                if name != "lesson" and (value := getattr(self, name)) is not None}


class TurnConfig(ClassSettings):
    """What one turn sees: the class's settings as this round has them (its overrides applied) and the
    round's context.  The runner builds one per round (:meth:`for_round`); the request-scoped fields
    are never dumped, so nothing saved can carry them."""

    trigger_agent_id: str | None = Field(default=None, exclude=True)
    allow_repeat_speaker: bool = Field(default=False, exclude=True)
    compact_prompts: bool = Field(default=False, exclude=True)
    lesson: LessonContext | None = Field(default=None, exclude=True)

    @classmethod
    def for_round(cls, settings: ClassSettings, context: RoundContext,
                  overrides: RoundOverrides | None = None, *, director: str | None = None) -> TurnConfig:
        """``settings`` with this round's ``overrides`` applied and its ``context``; ``director``: the
        name of the policy that plays it (what a transcript records)."""
        data: dict[str, Any] = {name: getattr(settings, name) for name in ClassSettings.model_fields}
        if overrides is not None:
            data.update(overrides.settings())
        if director is not None:
            data["director"] = director
        lesson = overrides.lesson if overrides is not None and overrides.lesson is not None else context.lesson
        return cls.model_validate({**data, "trigger_agent_id": context.trigger_agent_id, "lesson": lesson,
                                   "compact_prompts": context.compact_prompts,
                                   "allow_repeat_speaker": context.allow_repeat_speaker})


class ModelSettings(BaseModel):
    model: str = "scripted"
    temperature: float | None = None
    max_tokens: int | None = 800  # an agent turn; bounds a runaway reply


class TurnRequest(BaseModel):
    messages: list[Message] = Field(default_factory=list)
    store_state: StoreState = Field(default_factory=StoreState)
    config: TurnConfig
    director_state: DirectorState | None = None
    user_profile: UserProfile = Field(default_factory=UserProfile)
    model: ModelSettings = Field(default_factory=ModelSettings)
