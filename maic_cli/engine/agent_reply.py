"""One agent reply, streamed: parsed items become the events of one message.

Speech deltas become ``TextDeltaEvent``s (text items joined by a space), allowed actions
with acceptable parameters become ``ActionEvent``s, the rest is counted as dropped.

With ``gated`` (small models), speech is released a whole sentence at a time
(:class:`~.speech.SentenceGate`): the unfinished sentence a token cap leaves behind is
never shown, so nothing a view printed is taken back (the cost: speech shows a sentence,
not a word, at a time; large models keep word-by-word streaming, they rarely need this).
With ``earlier`` replies given (and ``may_retry``), the opening of the reply is also held (up to
``CHECK_CHARS`` of speech, the first action or the end) and compared with them: a copy
sets ``repeat`` and emits nothing, so the caller can ask again; later, a sentence that
copies one of theirs is left out (``copied_sentences``).
"""

from __future__ import annotations

from .actions import CATALOGUE, accept_action_params
from .events import ActionEvent, Event, TextDeltaEvent
from .models import AgentConfig, WhiteboardActionRecord, new_id
from .parser import StructuredStreamParser
from .parser_items import Item, TextItem
from .speech import SentenceGate, drop_copied_sentences, repeats_earlier

CHECK_CHARS = 60  # about one sentence: enough to tell a copy, little delay before speech shows
HEARD_CHARS = 800  # kept of the opening: what repeats_earlier compares (2 × its 400) and no more


class ReplyStream:
    """Assembles the events of one attempt at an agent's reply."""

    def __init__(self, agent: AgentConfig, allowed: list[str], message_id: str, *, gated: bool = False,
                 earlier: list[str] | None = None, may_retry: bool = True) -> None:
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
        self._heard = ""  # the opening of the speech, copies included (the opening check reads it; bounded)
        self._last_spoken = ""  # the last character of the speech so far (content is joined only at the end)
        self._text_index = -1
        self._gate = SentenceGate() if gated else None
        self._earlier = earlier or []
        self._pending: list[Event] | None = [] if self._earlier and may_retry else None  # None: no check (left)

    @property
    def content(self) -> str:
        return "".join(self.speech)

    def feed(self, text: str) -> list[Event]:
        self.raw.append(text)
        return self._release(self._events(self.parser.feed(text)), final=False)

    def finish(self) -> list[Event]:
        events = self._events(self.parser.finish())
        if self._gate is not None:
            events += self._speak(self._gate.finish())
        return self._release(events, final=True)

    # -- items → events -------------------------------------------------------------------
    def _speak(self, content: str) -> list[Event]:
        if len(self._heard) < HEARD_CHARS:  # the opening is all the check reads: stays linear
            self._heard += content
        if content and self._gate is not None and self._earlier:
            content, dropped = drop_copied_sentences(content, self._earlier)
            self.copied_sentences += dropped
            if not self._last_spoken:
                content = content.lstrip()
        if not content:
            return []
        self.speech.append(content)
        self._last_spoken = content[-1]
        return [TextDeltaEvent(message_id=self.message_id, content=content)]

    def _text(self, item: TextItem) -> list[Event]:
        content = item.content
        if item.index != self._text_index:
            spoken = (self._gate.held if self._gate else "")[-1:] or self._last_spoken
            if spoken and not spoken.isspace():
                content = " " + content.lstrip()
            self._text_index = item.index
        return self._speak(self._gate.feed(content) if self._gate else content)

    def _events(self, items: list[Item]) -> list[Event]:
        out: list[Event] = []
        for item in items:
            if isinstance(item, TextItem):
                out += self._text(item)
                continue
            if self._gate is not None:  # a finished sentence before an action is shown before it
                out += self._speak(self._gate.flush_sentence())
            if item.name not in self.allowed or item.name not in CATALOGUE or not accept_action_params(item):
                self.dropped += 1
                continue
            self.actions += 1
            out.append(ActionEvent(action_id=new_id("act"), action_name=item.name, params=item.params,
                                   agent_id=self.agent.id, message_id=self.message_id))
            if item.name.startswith("wb_"):
                self.wb_actions.append(WhiteboardActionRecord(
                    action_name=item.name, agent_id=self.agent.id, agent_name=self.agent.name,
                    params=item.params))
        return out

    def _release(self, events: list[Event], *, final: bool) -> list[Event]:
        """Events to show now; while the opening is unchecked, they wait (see the module doc)."""
        if self._pending is None:
            return events
        self._pending += events
        ready = final or len(self._heard) >= CHECK_CHARS or any(isinstance(e, ActionEvent) for e in events)
        if not ready:
            return []
        if repeats_earlier(self._heard, self._earlier) or (self.copied_sentences and not self.content.strip()):
            self.repeat = True
            return []
        out, self._pending = self._pending, None
        return out
