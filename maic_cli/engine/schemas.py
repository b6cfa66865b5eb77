"""JSON schemas of the replies, for backends that can constrain decoding.

The director's reply is ``{"next_agent": <a class id | "USER" | "END">}``; an
agent's reply is an array of text items and of actions limited to the ones it
may use.  Backends that cannot constrain output ignore these.
"""

from __future__ import annotations

from typing import Any


def director_reply_schema(agent_ids: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"next_agent": {"type": "string", "enum": [*agent_ids, "USER", "END"]}},
        "required": ["next_agent"],
        "additionalProperties": False,
    }


def agent_reply_schema(actions: list[str]) -> dict[str, Any]:
    text_item = {
        "type": "object",
        "properties": {"type": {"const": "text"}, "content": {"type": "string"}},
        "required": ["type", "content"],
        "additionalProperties": False,
    }
    items: list[dict[str, Any]] = [text_item]
    if actions:
        items.append({
            "type": "object",
            "properties": {"type": {"const": "action"},
                           "name": {"type": "string", "enum": list(actions)},
                           "params": {"type": "object"}},
            "required": ["type", "name", "params"],
            "additionalProperties": False,
        })
    return {"type": "array", "items": {"anyOf": items} if len(items) > 1 else text_item,
            "minItems": 1}
