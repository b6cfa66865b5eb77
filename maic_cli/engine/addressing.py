"""Who the learner speaks to by name: ``Sam, what do you think?`` goes to Sam first, as ``@assistant`` does.

:func:`addressed_agent` reads the start of the learner's message only.  A name counts when it opens
the message (after at most two greeting words: ``hey``, ``hi``, ``ok``, ``so`` …, and a comma) and
is a whole word there: ``Samuel`` is not ``Sam``, ``Miami`` is not ``Mia``.  Right after the name
comes the end of the message or a mark that sets a name off (``,`` ``:`` ``!`` ``?`` ``.`` ``;`` a
dash); after a greeting word a space is enough too (``hey Sam what is …``), since the greeting
already says the name is a call.  A name anywhere else never counts (``I think Sam is right``).

What a class member answers to, case-insensitively: its id (``curious_student``, also with spaces
for ``_``/``-``), its whole name (``Ms. Rivera``, ``Curious Kit``), any word of its name but a title
(``Kit`` and ``Curious`` for ``Curious Kit``, ``Quill`` for ``Professor Quill``), and its name
without a title — a word or a title-less name only when no other member answers to it too: a shared
word matches nobody.  The longest name wins
(``Sam Lee`` over ``Sam``).  Names come from persona files (untrusted): they are compared as plain
text, never made into a pattern.  Pure, no I/O.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

from .models import AgentConfig

GREETINGS = frozenset({"hey", "hi", "hello", "ok", "okay", "so", "well", "oh", "yo", "um"})
TITLES = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "sir", "madam", "teacher"})
SETS_OFF = ",:;!?.\u2014\u2013-"  # what may follow a name that calls someone
MAX_GREETINGS = 2
MAX_LOOK = 200  # characters of the message looked at: a name is at its start


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _words(name: str) -> list[str]:
    return " ".join(_fold(name).split()).split(" ") if name.strip() else []


def names_of(agent: AgentConfig) -> set[str]:
    """Every name ``agent`` answers to, folded: its id (also spaced), its whole name, its first name
    and its name without a title (whether another member shares one is for the caller)."""
    names = {_fold(agent.id), _fold(agent.id.replace("_", " ").replace("-", " "))}
    words = _words(agent.name)
    if words:
        names.add(" ".join(words))
    if len(words) > 1:
        untitled = words[1:] if words[0].rstrip(".") in TITLES else words
        names.add(" ".join(untitled))
        for word in untitled:  # each word alone ("Kit", "Curious"), its marks off ("O'Neil," → "o'neil")
            bare = word.strip(SETS_OFF + "\"'()[]")
            if bare and bare.rstrip(".") not in TITLES and bare not in GREETINGS and any(c.isalnum() for c in bare):
                names.add(bare)
    return {name for name in names if name}


def _callable_names(agents: Iterable[AgentConfig]) -> dict[str, str]:
    """Each name that calls exactly one agent → that agent's id (a shared name calls nobody)."""
    called: dict[str, set[str]] = {}
    for agent in agents:
        for name in names_of(agent):
            called.setdefault(name, set()).add(agent.id)
    return {name: next(iter(ids)) for name, ids in called.items() if len(ids) == 1}


def _word_end(text: str, end: int) -> bool:
    """Nothing of the same word goes on at ``end`` (``Sam`` in ``Samuel`` does not end there)."""
    return end >= len(text) or not (text[end].isalnum() or text[end] in "_'’")


def _starts(text: str) -> list[tuple[int, bool]]:
    """Where a name may start: the message's start, and after each of its first greeting words (with
    whether a greeting came before)."""
    found, at = [(0, False)], 0
    for _ in range(MAX_GREETINGS):
        parts = text[at:].split(maxsplit=1)
        word = parts[0] if parts else ""
        if word.rstrip(",!.") not in GREETINGS:
            break
        at += len(word)
        while at < len(text) and (text[at].isspace() or text[at] in ",!"):
            at += 1
        found.append((at, True))
    return found


def _sets_off(rest: str, after_greeting: bool) -> bool:
    """What follows a name makes it a call: the end, a mark (spaces before it allowed), or a space
    right after a greeting."""
    follow = rest.lstrip()
    if not follow or follow[0] in SETS_OFF:
        return True
    return after_greeting and rest[:1].isspace()


def _call(text: str, agents: Sequence[AgentConfig]) -> tuple[str, str] | None:
    """The id of the class member the message opens by calling, and the (folded) rest after the call."""
    folded = _fold(text[:MAX_LOOK]).lstrip()
    if not folded or not agents:
        return None
    names = sorted(_callable_names(agents).items(), key=lambda item: len(item[0]), reverse=True)
    for start, after_greeting in _starts(folded):
        rest = folded[start:]
        for name, agent_id in names:
            if rest.startswith(name) and _word_end(rest, len(name)) and _sets_off(rest[len(name):], after_greeting):
                return agent_id, rest[len(name):]
    return None


def addressed_agent(text: str, agents: Sequence[AgentConfig]) -> str | None:
    """The id of the class member the message opens by calling (see the module), else ``None``."""
    called = _call(text, agents)
    return called[0] if called is not None else None


def without_call(text: str, agents: Sequence[AgentConfig]) -> str:
    """The message without the call that opens it ("Mia, who won …" → "who won …", folded), for what the
    question is about: a classmate's name is not part of the question."""
    called = _call(text, agents)
    if called is None:
        return text
    return called[1].lstrip(" \t,:;!?.-–—") + _fold(text[MAX_LOOK:])
