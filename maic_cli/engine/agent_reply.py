"""One agent reply, streamed: parsed items become the events of one message.

Speech deltas become ``TextDeltaEvent``s (text items joined by a space), allowed actions
with acceptable parameters become ``ActionEvent``s, the rest is counted as dropped.

With ``gated`` (small models), speech is released a whole sentence at a time
(:class:`~maic_cli.replies.speech.SentenceGate`): the unfinished sentence a token cap leaves behind is
never shown, so nothing a view printed is taken back (the cost: speech shows a sentence,
not a word, at a time; large models keep word-by-word streaming, they rarely need this).
With ``earlier`` replies given (and ``may_retry``), the opening of the reply is also held (up to
``CHECK_CHARS`` of speech, the first action or the end) and compared with them: a copy
sets ``repeat`` and emits nothing, so the caller can ask again; later, a sentence that
copies one of theirs is left out (``copied_sentences``).  ``examples`` are the example
sentences of the agent's own rendered prompt (speech.example_sentences): compared like earlier
replies, and five words of one in a row are an echo too (the opening is asked again, a later
sentence left out).

What a small model may not do (gated replies): speak in the learner's place (such a sentence
is left out, ``learner_voice``; an opening that does it is asked again), say junk — an
address, URL, path, hash or random token (replies/junk.py): the reply is cut before the
sentence that holds it (``junk_cut``) — or draw board text that does not come from its own
speech, the learner's message or the lesson (``hygiene.sources``; the drawing is dropped).  In a
lesson (``hygiene.ground``), every sentence must pass the lesson's gate (replies/gate.py) or is left
out (``ungrounded``).  For every model, a spotlight or laser on an element that is not on the slide on
screen (``hygiene.pointable``; none at a quiz or a discussion) is left out (``dropped_pointers``).
Any model's speech and board text is made inert (URLs and addresses defanged), a whole word
at a time: ungated speech is released word by word so a split URL is seen whole.
A reply whose every sentence was left out asks again too (``repeat``), and the caller
drops it whole if the second try fares no better: it takes no turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..replies.gate import Ground, keep_grounded
from ..replies.junk import drawn_from, drawn_text, first_junk, inert_params, make_inert
from ..replies.parser import StructuredStreamParser
from ..replies.parser_items import Item, TextItem
from ..replies.prose import tidy
from ..replies.speech import (
    SentenceGate,
    WordGate,
    drop_copied_sentences,
    drop_example_echoes,
    drop_learner_voice,
    drop_repeated_within,
    echoes_example,
    repeats_earlier,
    speaks_as_learner,
    split_sentences,
)
from .action_params import accept_action_params
from .actions import CATALOGUE
from .events import ActionEvent, Event, TextDeltaEvent
from .models import AgentConfig, WhiteboardActionRecord, new_id

CHECK_CHARS = 60  # about one sentence: enough to tell a copy, little delay before speech shows
HEARD_CHARS = 800  # kept of the opening: what repeats_earlier compares (2 × its 400) and no more
DRAWS = ("wb_draw_", "wb_edit_code")  # actions that put text on the board
POINTERS = ("spotlight", "laser", "play_video")  # actions that point at an element of the slide on screen


@dataclass(frozen=True)
class Hygiene:
    """What a reply is checked against, from the turn's request (turn.py builds it)."""

    learner_name: str = ""
    learner_bio: str = ""
    sources: str = ""  # the learner's message and the lesson's slide: what a small model may draw from
    ground: Ground | None = None  # a lesson on a small model: what its sentences may rest on (the gate)
    pointable: frozenset[str] | None = None  # the elements of the slide on screen (None: no check)
    titles: tuple[str, ...] = ()  # the lesson's and the slide's titles: never glued in front of a sentence


def cut_before_junk(text: str) -> str | None:
    """``text`` up to the sentence that holds junk (``None``: no junk)."""
    at = first_junk(text)
    if at is None:
        return None
    kept, length = [], 0
    for sentence in split_sentences(text):
        if length + len(sentence) > at:
            break
        kept.append(sentence)
        length += len(sentence)
    return "".join(kept)


class ReplyStream:
    """Assembles the events of one attempt at an agent's reply."""

    def __init__(self, agent: AgentConfig, allowed: list[str], message_id: str, *, gated: bool = False,
                 earlier: list[str] | None = None, may_retry: bool = True, hygiene: Hygiene | None = None,
                 examples: list[str] | None = None) -> None:
        self.agent = agent
        self.allowed = allowed
        self.message_id = message_id
        self.parser = StructuredStreamParser()
        self.raw: list[str] = []
        self.speech: list[str] = []
        self.wb_actions: list[WhiteboardActionRecord] = []
        self.actions = 0
        self.dropped = 0
        self.repeat = False
        self.copied_sentences = 0
        self.learner_voice = 0  # sentences left out: they spoke in the learner's place
        self.junk_cut = False  # the reply was cut before junk (and ends there)
        self.ungrounded = 0  # sentences left out: the lesson's gate did not pass them
        self.dropped_pointers = 0  # pointers at nothing on the slide on screen
        self.hygiene = hygiene or Hygiene()
        self._heard = ""  # the opening of the speech, copies included (the opening check reads it; bounded)
        self._last_spoken = ""  # the last character of the speech so far (content is joined only at the end)
        self._text_index = -1
        self._gate = SentenceGate() if gated else None
        self._words = None if gated else WordGate()
        self._earlier = earlier or []
        self._examples = examples or []  # the prompt's example sentences: never said, not even in part
        self._pending: list[Event] | None = [] if gated and may_retry else None  # None: no check (left)

    @property
    def content(self) -> str:
        return "".join(self.speech)

    def feed(self, text: str) -> list[Event]:
        self.raw.append(text)
        return self._release(self._events(self.parser.feed(text)), final=False)

    def finish(self) -> list[Event]:
        events = self._events(self.parser.finish())
        if self._gate is not None and not self.junk_cut:
            events += self._speak(self._gate.finish())
        if self._words is not None:
            events += self._speak(self._words.finish())
        return self._release(events, final=True)

    @property
    def dropped_sentences(self) -> int:
        return self.copied_sentences + self.learner_voice + self.ungrounded + int(self.junk_cut)

    # -- items → events -------------------------------------------------------------------
    def _speak(self, content: str) -> list[Event]:
        if len(self._heard) < HEARD_CHARS:  # the opening is all the check reads: stays linear
            self._heard += content
        if content and self._gate is not None:
            cut = cut_before_junk(content)
            if cut is not None:
                content, self.junk_cut = cut, True
            if self._earlier:
                content, dropped = drop_copied_sentences(content, self._earlier)
                self.copied_sentences += dropped
            if self._examples:
                content, dropped = drop_example_echoes(content, self._examples)
                self.copied_sentences += dropped
            content, dropped = drop_repeated_within(content, self.content[-HEARD_CHARS:])
            self.copied_sentences += dropped
            content, dropped = drop_learner_voice(content, self.agent.role, self.agent.name,
                                                  self.hygiene.learner_name, self.hygiene.learner_bio)
            self.learner_voice += dropped
            if self.hygiene.ground is not None:
                content, dropped = keep_grounded(content, self.hygiene.ground)
                self.ungrounded += dropped
                if content.strip():  # a lesson's speech reads as prose: no "Second," no ";", nothing said twice
                    content = tidy(content, "".join(self.speech)[-HEARD_CHARS:], self.hygiene.titles)
            if not self._last_spoken:
                content = content.lstrip()
        content = make_inert(content)
        if not content:
            return []
        self.speech.append(content)
        self._last_spoken = content[-1]
        return [TextDeltaEvent(message_id=self.message_id, content=content)]

    def _text(self, item: TextItem) -> list[Event]:
        content = item.content
        if item.index != self._text_index:
            held = self._gate.held if self._gate else self._words.held if self._words else ""
            spoken = held[-1:] or self._last_spoken
            if spoken and not spoken.isspace():
                content = " " + content.lstrip()
            self._text_index = item.index
        if self._gate is not None:
            return self._speak(self._gate.feed(content))
        return self._speak(self._words.feed(content) if self._words else content)

    def _grounded(self, params: dict[str, object]) -> bool:
        """A small model's drawing: its text comes from its speech, the learner's message or the lesson."""
        said = self.content + (self._gate.held if self._gate else "")
        return drawn_from(drawn_text(params), said + "\n" + self.hygiene.sources)

    def _events(self, items: list[Item]) -> list[Event]:
        out: list[Event] = []
        for item in items:
            if self.junk_cut:  # the reply ended before its junk: nothing after it is used
                continue
            if isinstance(item, TextItem):
                out += self._text(item)
                continue
            if self._gate is not None:  # a finished sentence before an action is shown before it
                out += self._speak(self._gate.flush_sentence())
            elif self._words is not None:
                out += self._speak(self._words.finish())
            if item.name not in self.allowed or item.name not in CATALOGUE or not accept_action_params(item):
                self.dropped += 1
                continue
            pointable = self.hygiene.pointable
            if item.name in POINTERS and pointable is not None and item.params.get("elementId") not in pointable:
                self.dropped += 1  # nothing on the slide on screen to point at
                self.dropped_pointers += 1
                continue
            if self._gate is not None and item.name.startswith(DRAWS) and not self._grounded(item.params):
                self.dropped += 1  # a drawing whose text came from nowhere in the class
                continue
            params = inert_params(item.params)
            assert isinstance(params, dict)
            self.actions += 1
            out.append(ActionEvent(action_id=new_id("act"), action_name=item.name, params=params,
                                   agent_id=self.agent.id, message_id=self.message_id))
            if item.name.startswith("wb_"):
                self.wb_actions.append(WhiteboardActionRecord(
                    action_name=item.name, agent_id=self.agent.id, agent_name=self.agent.name,
                    params=params))
        return out

    def _release(self, events: list[Event], *, final: bool) -> list[Event]:
        """Events to show now; while the opening is unchecked, they wait (see the module doc)."""
        if self._pending is None:
            return events
        self._pending += events
        ready = (final or self.junk_cut or len(self._heard) >= CHECK_CHARS
                 or any(isinstance(e, ActionEvent) for e in events))
        if not ready:
            return []
        h = self.hygiene
        if (repeats_earlier(self._heard, self._earlier) or echoes_example(self._heard, self._examples)
                or speaks_as_learner(self._heard, self.agent.role, self.agent.name, h.learner_name, h.learner_bio)
                or (self.dropped_sentences and not self.content.strip())):
            self.repeat = True
            return []
        out, self._pending = self._pending, None
        return out
