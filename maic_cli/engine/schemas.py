"""JSON schemas of the replies, for backends that can constrain decoding.

The director's reply is ``{"next_agent": <a class id | "USER" | "END">}``; an
agent's reply is an array of text items and of actions limited to the ones it
may use.  Backends that cannot constrain output ignore these.
"""

from __future__ import annotations

from typing import Any


def director_reply_schema(agent_ids: list[str], spoken: set[str] | None = None,
                          first_turn: bool = False, opener: list[str] | None = None) -> dict[str, Any]:
    """``{"next_agent": …}`` limited to sensible choices: agents who have not spoken
    this round, and ``USER``/``END`` only once someone has (a round never ends unanswered).
    ``opener`` narrows the first turn further (small models: the teacher opens a Q&A round)."""
    eligible = [i for i in agent_ids if i not in (spoken or set())]
    if first_turn and opener:
        eligible = [i for i in eligible if i in opener] or eligible
    choices = eligible if first_turn and eligible else [*eligible, "USER", "END"]
    return {
        "type": "object",
        "properties": {"next_agent": {"type": "string", "enum": choices}},
        "required": ["next_agent"],
        "additionalProperties": False,
    }


# For small models: the few actions they can use well, with their parameters spelled out.
COMPACT_ACTION_PARAMS: dict[str, dict[str, Any]] = {
    "wb_open": {}, "wb_close": {}, "wb_clear": {},
    "wb_draw_text": {"content": {"type": "string", "maxLength": 120}},
    "wb_draw_latex": {"latex": {"type": "string", "maxLength": 120}},
    "spotlight": {"elementId": {"type": "string", "maxLength": 40}},
    "laser": {"elementId": {"type": "string", "maxLength": 40}},
}


# Marks a string schema as spoken prose: a backend that builds its own grammar (the offline
# model) may narrow it further (no braces, brackets, backslashes, quotes or newlines, and a
# final . ! ?).  Other backends ignore unknown ``x-`` keys.
SPEECH_MARK = "x-maic-speech"


def _text_item(min_length: int = 0, speech_only: bool = False) -> dict[str, Any]:
    content: dict[str, Any] = {"type": "string"}
    if min_length:
        content["minLength"] = min_length
    if speech_only:
        content[SPEECH_MARK] = True
    return {"type": "object", "properties": {"type": {"const": "text"}, "content": content},
            "required": ["type", "content"], "additionalProperties": False}


def _action_item(name: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object",
            "properties": {"type": {"const": "action"}, "name": {"const": name},
                           "params": {"type": "object", "properties": params, "required": list(params),
                                      "additionalProperties": False}},
            "required": ["type", "name", "params"], "additionalProperties": False}


def agent_reply_schema(actions: list[str], compact: bool = False) -> dict[str, Any]:
    """The reply array with only this agent's actions.

    ``compact`` (small models): speech first, at most three items, and only the simple
    actions, each with its exact (short) parameters.  Speech length is left to
    ``max_tokens``: a length limit in a llama.cpp grammar nests one rule per character.
    """
    if compact:
        usable = [a for a in actions if a in COMPACT_ACTION_PARAMS]
        items: list[dict[str, Any]] = [_text_item(min_length=2, speech_only=True)]
        items += [_action_item(a, COMPACT_ACTION_PARAMS[a]) for a in usable]
        text, any_item = _text_item(min_length=2, speech_only=True), {"anyOf": items} if len(items) > 1 else items[0]
        # Tuples (speech first, then up to two more items), as llama.cpp's grammar converter reads them.
        return {"anyOf": [{"type": "array", "items": [text, *[any_item] * extra]} for extra in range(3)]}
    variants: list[dict[str, Any]] = [_text_item()]
    if actions:
        variants.append({
            "type": "object",
            "properties": {"type": {"const": "action"},
                           "name": {"type": "string", "enum": list(actions)},
                           "params": {"type": "object"}},
            "required": ["type", "name", "params"],
            "additionalProperties": False,
        })
    return {"type": "array", "items": {"anyOf": variants} if len(variants) > 1 else variants[0],
            "minItems": 1}
