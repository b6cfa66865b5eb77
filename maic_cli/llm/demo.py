"""``demo``: a canned class that needs no model at all.

It exists so that a fresh install can show the screen, the whiteboard and the
round loop before any model is set up.  It is not a language model: the
director follows a fixed pattern (teacher, then one student, then the
learner's turn) and agents say stock lines around the learner's words.  The
chat header says so.

It acts on the request's :class:`TurnFacts` (turn number, who may speak, who
spoke, the learner's words, the speaker's role), never on the prompts'
wording: rewording a prompt does not change the demo.
"""

from __future__ import annotations

import json
import re

from .port import LLMRequest, TurnFacts
from .scripted import FunctionLLM

_MENTION = re.compile(r"^@[\w-]+\s*")
_LINES = {
    "assistant": "Quick second angle on \"{topic}\": try one small example first, then the general rule.",
    "curious_student": "Wait, so is \"{topic}\" something I could see at home? That would help me picture it.",
    "note_taker": "I'm writing that down: {topic}, key idea first, example second.",
    "deep_thinker": "Okay but what if we flipped it? Would \"{topic}\" still work the same way?",
    "class_clown": "Ha, if {topic} were a pizza topping, I'd order it twice. Seriously though, good question.",
}
_GENERIC = "Good question about \"{topic}\". I'd like to hear what the others think."


def _learner_text(facts: TurnFacts) -> str:
    text = _MENTION.sub("", " ".join((facts.learner_text or "").split()))
    return text or "today's topic"


def _topic(text: str) -> str:
    text = text.rstrip("?!. ")
    return text if len(text) <= 60 else text[:57] + "…"


class DemoLLM(FunctionLLM):
    def __init__(self) -> None:
        super().__init__(self._respond, name="demo")
        self._rounds = 0

    def _respond(self, request: LLMRequest) -> str:
        facts = request.facts or TurnFacts()
        if request.purpose == "director":
            return self._direct(facts)
        topic = _topic(_learner_text(facts))
        if facts.agent_role == "teacher":
            items = [
                {"type": "text", "content": f"Let's think about \"{topic}\" together. "},
                {"type": "action", "name": "wb_open", "params": {}},
                {"type": "action", "name": "wb_draw_text", "params": {"content": topic}},
                {"type": "text", "content": "Start from what you already know: what do you notice first?"},
            ]
        else:
            line = _LINES.get(request.agent_id or "", _GENERIC)
            items = [{"type": "text", "content": line.format(topic=topic)}]
        return json.dumps(items)

    def _direct(self, facts: TurnFacts) -> str:
        ids = list(facts.eligible)
        teachers = [i for i in ids if i == "teacher"] or ids[:1]
        students = [i for i in ids if i not in teachers and i not in facts.spoken]
        turn = facts.turn
        if turn == 0 and teachers:
            self._rounds += 1
            return json.dumps({"next_agent": teachers[0]})
        if turn == 1 and students:
            return json.dumps({"next_agent": students[self._rounds % len(students)]})
        return json.dumps({"next_agent": "USER"})
