"""OpenMAIC's stateless chat request (``POST /api/chat``), as maic reads it: shape, types and bounds.

The body is what OpenMAIC's web client sends on every iteration of its agent loop (its ``StatelessChatRequest``):
the conversation as UI messages with ``parts``, the store state (stage, scenes, current scene, mode, whether the
whiteboard is open), the class (``config``: agent ids, session type, a discussion's topic, prompt and first
speaker, the configs of generated agents), the director state the previous response handed back, and the
learner's profile.  Every field is checked here, once: required fields as OpenMAIC's own route requires them
(``messages``, ``storeState``, ``config.agentIds``), types strictly, and every list bounded — what a real client
may send at length is cut (a long conversation keeps its latest messages; free text is cut where it is used),
what none sends is refused (more than 20 agents, an id or name past 200 characters).  A problem is one
:class:`RequestProblem` (an error code as OpenMAIC's ``apiError`` names them, and one line naming the field).

The fields that would choose a model (``apiKey``, ``baseUrl``, ``model``, ``providerType``, thinking and web
search settings) are not part of this model: pydantic drops them unread, so nothing downstream can dial them or
write them to a log.  The model and its key are the server's (docs/guide/openmaic-api.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)

from ..replies.sanitize import clean_object

MAX_MESSAGES = 400  # a conversation's messages in one request
MAX_PARTS = 200  # parts of one message
MAX_TEXT = 20_000  # characters of one text part, a persona, a discussion prompt
MAX_NAME = 200  # names, ids, roles, topics' short fields
MAX_AGENTS = 20  # agents in a class (= Lesson.agents' limit)
MAX_SCENES = 200  # scenes sent; the lesson keeps the first 60 maic can play
MAX_RESPONSES = 500  # director state: earlier agent turns summarised
MAX_LEDGER = 1_000  # director state: whiteboard actions so far
MAX_ACTIONS = 100  # allowed actions of one agent

ShortText = Annotated[StrictStr, Field(max_length=MAX_NAME)]
LongText = StrictStr  # free text (a message, a persona, a prompt): cut to MAX_TEXT where it is used, not refused


def _first(count: int) -> BeforeValidator:
    """A list past ``count`` items keeps its first ``count`` (what is sent beyond a bound is not refused)."""
    return BeforeValidator(lambda value: value[:count] if isinstance(value, list) else value)


def _last(count: int) -> BeforeValidator:
    """A list past ``count`` items keeps its last ``count`` (a long conversation: its latest messages)."""
    return BeforeValidator(lambda value: value[-count:] if isinstance(value, list) else value)
# An action's params as sent: surrogates replaced, and ``{}`` when nested past maic's depth for params (so what
# is echoed back in ``done`` can always be written as JSON).
Params = Annotated[dict[str, Any], AfterValidator(clean_object)]


class _Lenient(BaseModel):
    """Unknown keys are dropped (OpenMAIC's types grow; a newer client must still be served)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class UIPart(_Lenient):
    """One part of a UI message: ``text`` with its ``text``, or ``action-<name>`` with its name and input."""

    type: ShortText
    text: LongText | None = None
    actionId: ShortText | None = None
    actionName: ShortText | None = None
    input: Params | None = None
    state: ShortText | None = None


class UIMetadata(_Lenient):
    senderName: ShortText | None = None
    originalRole: ShortText | None = None
    agentId: ShortText | None = None
    interrupted: StrictBool | None = None


class UIMessage(_Lenient):
    id: ShortText | None = None
    role: Literal["user", "assistant", "system"]
    parts: Annotated[list[UIPart], _first(MAX_PARTS)] = Field(default_factory=list)
    metadata: UIMetadata | None = None


class QuizResult(_Lenient):
    questionId: ShortText
    correct: StrictBool | None = None
    earned: Annotated[StrictInt | StrictFloat, Field(ge=0, le=1_000)] = 0
    aiComment: LongText | None = None


class QuizResults(_Lenient):
    """The learner's graded answers to the current quiz scene (sent once they submitted it)."""

    sceneId: ShortText
    answers: Annotated[dict[str, LongText | Annotated[list[ShortText], _first(26)]], Field(max_length=100)] = \
        Field(default_factory=dict)
    results: Annotated[list[QuizResult], _first(100)] = Field(default_factory=list)


class StoreState(_Lenient):
    """The client's store: the stage and its scenes are read as the lesson (serve/openmaic_lesson.py)."""

    stage: dict[str, Any] | None = None
    scenes: Annotated[list[Any], _first(MAX_SCENES)] = Field(default_factory=list)
    currentSceneId: ShortText | None = None
    mode: ShortText | None = None
    whiteboardOpen: StrictBool = False
    quizResults: QuizResults | None = None


class AgentSpec(_Lenient):
    """A generated agent's config, sent because no server knows it (``config.agentConfigs``)."""

    id: ShortText
    name: ShortText = ""
    role: ShortText = "student"
    persona: LongText = ""
    avatar: StrictStr = ""  # an emoji or a picture's address (kept when short): echoed to the client, never fetched
    color: ShortText = ""
    allowedActions: Annotated[list[ShortText], _first(MAX_ACTIONS)] = Field(default_factory=list)
    priority: StrictInt | StrictFloat = 5


class ChatConfig(_Lenient):
    agentIds: Annotated[list[ShortText], Field(min_length=1, max_length=MAX_AGENTS)]
    sessionType: ShortText | None = None
    discussionTopic: LongText | None = None
    discussionPrompt: LongText | None = None
    triggerAgentId: ShortText | None = None
    agentConfigs: Annotated[list[AgentSpec], _first(2 * MAX_AGENTS)] | None = None


class WhiteboardRecord(_Lenient):
    actionName: ShortText
    agentId: ShortText = ""
    agentName: ShortText = ""
    params: Params = Field(default_factory=dict)


class AgentResponse(_Lenient):
    agentId: ShortText
    agentName: ShortText = ""
    contentPreview: LongText = ""
    actionCount: Annotated[StrictInt, Field(ge=0, le=10_000)] = 0
    whiteboardActions: Annotated[list[WhiteboardRecord], _first(MAX_ACTIONS)] = Field(default_factory=list)


class OpenMaicDirectorState(_Lenient):
    turnCount: Annotated[StrictInt, Field(ge=0, le=100_000)] = 0
    agentResponses: Annotated[list[AgentResponse], _last(MAX_RESPONSES)] = Field(default_factory=list)
    whiteboardLedger: Annotated[list[WhiteboardRecord], _last(MAX_LEDGER)] = Field(default_factory=list)


class Profile(_Lenient):
    nickname: ShortText | None = None
    bio: LongText | None = None


class ChatRequest(_Lenient):
    """``StatelessChatRequest`` without the fields that would pick a model (they are never read)."""

    messages: Annotated[list[UIMessage], _last(MAX_MESSAGES)]
    storeState: StoreState
    config: ChatConfig
    directorState: OpenMaicDirectorState | None = None
    userProfile: Profile | None = None


class RequestProblem(Exception):
    """What is wrong with a request: OpenMAIC's error code and one line naming the field."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _missing(body: dict[str, Any]) -> str | None:
    """The first required field OpenMAIC's own route checks for and does not find, named as it names it."""
    if not isinstance(body.get("messages"), list):
        return "messages"
    if not body.get("storeState"):
        return "storeState"
    config = body.get("config")
    if not isinstance(config, dict) or not config.get("agentIds"):
        return "config.agentIds"
    return None


def parse_request(body: Any) -> ChatRequest:
    """``body`` (parsed JSON) as a :class:`ChatRequest`, or a :class:`RequestProblem`."""
    if not isinstance(body, dict):
        raise RequestProblem("INVALID_REQUEST", "The request body must be a JSON object")
    if (field := _missing(body)) is not None:
        raise RequestProblem("MISSING_REQUIRED_FIELD", f"Missing required field: {field}")
    try:
        return ChatRequest.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))[:120]
        message = " ".join(str(first.get("msg", "invalid")).split())[:160]
        count = exc.error_count()
        more = f" (and {count - 1} more)" if count > 1 else ""
        raise RequestProblem("INVALID_REQUEST", f"Invalid field {where}: {message}{more}") from None
