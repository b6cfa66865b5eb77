"""Speech hygiene: whole sentences (or words) only, no copies, no echo of a prompt, no learner's voice.

Pure functions and one small stateful filter, used by the agent turn when compact
prompts are on (a 135M model ran into its token cap mid-sentence, and once answered
a new question with its previous answer word for word):

* :class:`SentenceGate` ends a streamed reply at its last full sentence: it releases text
  up to the last finished sentence and holds back the unfinished one until the reply
  ends, so a view never shows words that are later taken back;
* :func:`drop_stray_quotes` removes an unpaired ``"`` opening (or closing) the reply;
* :func:`drop_copied_sentences` leaves out a sentence copied from an earlier reply;
* :func:`repeats_earlier` tells whether a reply (or its opening) copies an earlier one;
* :func:`drop_repeated_within` leaves out a sentence said twice in the same reply;
* :class:`WordGate` releases any model's stream a whole word at a time (a URL split across
  deltas is made inert whole, replies/junk.py);
* :func:`example_sentences` reads a rendered prompt's own example speech, and
  :func:`echoes_example` tells whether a sentence says five words of one in a row;
* :func:`speaks_as_learner` tells whether an agent speaks in the learner's place ("I'm a
  Python beginner…"), and :func:`drop_learner_voice` leaves such sentences out.
"""

from __future__ import annotations

import difflib
import re

# A sentence ends with . ! ? or … (then maybe closing quotes/brackets, and a stray ; : or , that
# small models add: "tasks.; The output…"); inside a stream it counts only once the next
# character is whitespace ("3.5", "e.g." stay whole).
_END = r"[.!?…]['\")\]”’]*[;:,]?"
_BOUNDARY = re.compile(_END + r"(?=\s)")
_FINAL = re.compile(_END + r"\s*$")
REPEAT_RATIO = 0.8  # difflib ratio: a copy with a few words changed still counts
MIN_REPEAT_CHARS = 40  # shorter openings ("Good question, Sam.") are common, not copies
MAX_COMPARED_CHARS = 400  # difflib is quadratic: compare bounded texts only


def ends_sentence(text: str) -> bool:
    return bool(_FINAL.search(text))


def _last_boundary(text: str, start: int = 0) -> int:
    """The end of the last finished sentence in ``text[start:]`` (0: none)."""
    last = 0
    for match in _BOUNDARY.finditer(text, start):
        last = match.end()
    return last


class SentenceGate:
    """Releases streamed speech a whole sentence at a time.

    ``feed`` returns what may be shown now; ``finish`` returns the rest at the end of the
    reply: the held tail if it ends a sentence (or if nothing was shown at all: a fragment
    beats silence), else nothing — the unfinished sentence is dropped.
    """

    LOOKBACK = 64  # a sentence end split across deltas: "." then " " (closing quotes in between)

    def __init__(self) -> None:
        self.held = ""
        self._released_any = False  # some speech was shown
        self._released_quotes = 0  # '"' in what was shown (an unpaired closing one is dropped at the end)

    def feed(self, delta: str) -> str:
        start = max(0, len(self.held) - self.LOOKBACK)  # the held text had no boundary: scan only the new end
        self.held += delta
        cut = _last_boundary(self.held, start)
        if not cut:
            return ""
        out, self.held = self.held[:cut], self.held[cut:]
        return self._release(out)

    def _release(self, out: str) -> str:
        if not self._released_any:
            out = drop_stray_quotes(out)
        self._released_any = self._released_any or bool(out.strip())
        self._released_quotes += out.count('"')
        return out

    def flush_sentence(self) -> str:
        """The held text, if it ends a sentence (an item ends here: nothing more will join it)."""
        if not ends_sentence(self.held):
            return ""
        out, self.held = self.held, ""
        return self._release(out)

    def finish(self) -> str:
        tail, self.held = self.held, ""
        if not ends_sentence(tail) and self._released_any:
            return ""
        out = tail.rstrip()
        if out.endswith('"') and (self._released_quotes + out.count('"')) % 2 == 1:
            out = out[:-1]  # an unpaired closing quote
        return self._release(out)


def split_sentences(text: str) -> list[str]:
    """``text`` in finished sentences (each with the whitespace before it) and any unfinished rest."""
    pieces, start = [], 0
    for match in _BOUNDARY.finditer(text):
        pieces.append(text[start:match.end()])
        start = match.end()
    return [*pieces, text[start:]] if text[start:] else pieces


def drop_copied_sentences(text: str, earlier: list[str]) -> tuple[str, int]:
    """``text`` without the sentences that copy one of ``earlier``'s replies, and how many went."""
    kept = [s for s in split_sentences(text) if not repeats_earlier(s, earlier)]
    return "".join(kept), len(split_sentences(text)) - len(kept)


MIN_SELF_REPEAT_CHARS = 12  # "The answer is 1/2." said three times in one reply: short, but plainly a loop


def drop_repeated_within(text: str, said: str) -> tuple[str, int]:
    """``text`` without its sentences that repeat one already ``said`` in this same reply (word for
    word, or alike by :func:`repeats_earlier` when long enough), and how many went."""
    def key(sentence: str) -> str:
        return _norm(sentence).strip(" .!?…;:,\"'")

    seen = {key(s) for s in _sentences(said)}
    kept: list[str] = []
    for sentence in split_sentences(text):
        norm = key(sentence)
        if len(norm) >= MIN_SELF_REPEAT_CHARS and (norm in seen or repeats_earlier(sentence, [said])):
            continue
        kept.append(sentence)
        seen.add(norm)
        said += sentence
    return "".join(kept), len(split_sentences(text)) - len(kept)


def drop_stray_quotes(text: str) -> str:
    """``text`` without an unpaired ``"`` at its very start or end (a small model's habit)."""
    stripped = text.strip()
    if stripped.count('"') % 2 == 1:
        if stripped.startswith('"'):
            return text.replace('"', "", 1).lstrip()
        if stripped.endswith('"'):
            return text[:text.rindex('"')] + text[text.rindex('"') + 1:]
    return text


def _norm(text: str) -> str:
    return " ".join(text[:MAX_COMPARED_CHARS * 2].lower().split())[:MAX_COMPARED_CHARS]


def _sentences(text: str) -> list[str]:
    return [s for s in (p.strip() for p in _BOUNDARY.split(text + " ")) if s]


def repeats_earlier(text: str, earlier: list[str], ratio: float = REPEAT_RATIO) -> bool:
    """Whether ``text`` (a whole reply or its opening) copies one of ``earlier``'s replies:
    their opening of the same length, or one of their sentences, is at least ``ratio`` alike."""
    norm = _norm(text)
    if len(norm) < MIN_REPEAT_CHARS:
        return False
    opening = _sentences(text)[:1]  # an opening sentence copied whole, the rest new, is a copy too
    first = _norm(opening[0]) if opening else ""
    for other in earlier:
        other_norm = _norm(other)
        sentences = [_norm(s) for s in _sentences(other)]
        pairs = [(norm, c) for c in (other_norm[:len(norm) + 10], *sentences)]
        if len(first) >= MIN_REPEAT_CHARS and first != norm:
            pairs += [(first, c) for c in sentences]
        if any(_alike(a, b, ratio) for a, b in pairs):
            return True
    return False


def _alike(a: str, b: str, ratio: float) -> bool:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.real_quick_ratio() >= ratio and matcher.quick_ratio() >= ratio and matcher.ratio() >= ratio


class WordGate:
    """Releases streamed text a whole word at a time (up to the last whitespace), so a URL or an
    address split across deltas is seen whole before it is shown (replies/junk.py makes it inert)."""

    def __init__(self) -> None:
        self.held = ""

    def feed(self, delta: str) -> str:
        self.held += delta
        cut = max(self.held.rfind(" "), self.held.rfind("\n"), self.held.rfind("\t")) + 1
        out, self.held = self.held[:cut], self.held[cut:]
        return out

    def finish(self) -> str:
        out, self.held = self.held, ""
        return out


# -- a prompt's own example text -------------------------------------------------------------

_JSON_CONTENT = re.compile(r'"content"\s*:\s*"((?:[^"\\\n]|\\.){1,600})"')
_QUOTED = re.compile(rf'"([^"\n]{{{MIN_REPEAT_CHARS},600}})"')


def example_sentences(prompt: str) -> list[str]:
    """The example speech a rendered prompt shows (the ``content`` of its JSON examples and its
    quoted sample replies): an agent must not say it (it is compared like an earlier reply)."""
    found = [m.group(1).replace('\\"', '"') for m in _JSON_CONTENT.finditer(prompt)]
    found += [m.group(1) for m in _QUOTED.finditer(prompt)]
    seen: dict[str, None] = {}
    for text in found:
        if len(text.strip()) >= MIN_REPEAT_CHARS and not text.lstrip().startswith(("{", "[", "<")):
            seen.setdefault(text.strip(), None)
    return list(seen)


ECHO_WORDS = 5  # a run of this many words of a prompt's example, in order, is an echo of it
_WORD_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = [w.lower() for w in _WORD_RE.findall(text[:MAX_COMPARED_CHARS * 2])]
    return {tuple(words[i:i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1)}


def echoes_example(text: str, examples: list[str]) -> bool:
    """Whether ``text`` says ``ECHO_WORDS`` words in a row of one of a prompt's ``examples`` (the
    offline model said "You can try it at lunch." from the assistant's example: too short for
    :func:`repeats_earlier`, still not its own words)."""
    mine = _shingles(text)
    return bool(mine) and any(mine & _shingles(example) for example in examples)


def drop_example_echoes(text: str, examples: list[str]) -> tuple[str, int]:
    """``text`` without its sentences that echo a prompt's example, and how many went."""
    pieces = split_sentences(text)
    kept = [s for s in pieces if not echoes_example(s, examples)]
    return "".join(kept), len(pieces) - len(kept)


# -- speaking in the learner's place ---------------------------------------------------------

# First-person lines only the learner says: a teacher or assistant saying them speaks as the learner.
_LEARNER_LINES = re.compile(
    r"\bas (?:the learner|your student|a learner, i)\b"
    r"|\bi(?:'m| am) (?:just |only |still |totally |a total |a complete )?(?:an? |the )?(?:[\w+#-]+ ){0,2}"
    r"(?:beginner|learner|newbie|novice)s?\b"
    r"|\bi(?:'m| am) (?:very |quite |pretty |completely |totally )?new to\b"
    r"|\bi (?:want|would like|'d like|wanna) to learn\b"
    r"|\bteach me\b"
    r"|\bthank(?:s| you),? (?:for (?:explaining|teaching|the explanation),? )?"
    r"(?:teacher|sir|miss|professor|mrs?\.?|ms\.?)(?:\W|$)",
    re.IGNORECASE)
_ROLE_WORDS = frozenset({"teacher", "assistant", "student", "learner", "the learner", "class"})
_SELF_INTRO = r"(?:i'm|i am|my name is|call me)\s+(?:(?:mr|mrs|ms|miss|dr|professor)\.?\s+)?$"


def _names_in(text: str, name: str) -> list[int]:
    """Where ``name`` (or its last word, 3+ letters, not a role word) is said in ``text`` as a whole word."""
    words = [w for w in {name.strip(), name.strip().split(" ")[-1] if name.strip() else ""}
             if len(w) >= 3 and w.lower() not in _ROLE_WORDS]
    spots: list[int] = []
    for word in words:
        spots += [m.start() for m in re.finditer(r"(?<!\w)" + re.escape(word) + r"(?!\w)", text, re.IGNORECASE)]
    return spots


def speaks_as_learner(text: str, role: str, own_name: str = "", learner_name: str = "",
                      learner_bio: str = "") -> bool:
    """Whether an agent's ``text`` speaks in the learner's place: it says it is the learner (by that
    word or the learner's name), a teacher or assistant says what only a learner says ("I'm a Python
    beginner…", "teach me"), or it addresses its own speaker by name (the teacher
    talked to "Ms. Lee" as if she were the learner).  Students are learners too: for them only
    the first and last kinds count, and claiming the learner's background ("I'm a {bio}")."""
    text = text[:2000]
    lowered = text.lower()
    if re.search(r"\bas the learner\b", lowered):
        return True
    if learner_name and learner_name.lower() not in ("learner", "the learner"):
        for spot in _names_in(text, learner_name):
            if re.search(_SELF_INTRO, lowered[max(0, spot - 24):spot]):
                return True
    if learner_bio.strip() and role == "student":
        bio = re.escape(" ".join(learner_bio.lower().split())[:60])
        if re.search(r"\bi(?:'m| am) (?:an? )?" + bio, " ".join(lowered.split())):
            return True
    if role != "student" and _LEARNER_LINES.search(text):
        return True
    if own_name:
        for spot in _names_in(text, own_name):
            if not re.search(_SELF_INTRO, lowered[max(0, spot - 24):spot]):
                return True  # an agent addressing itself: it answers as someone else
    if role == "teacher" and re.search(r"(?:^|[.!?]\s+)(?:hi|hello|dear|thanks|thank you),? teacher\b", lowered):
        return True
    return False


def drop_learner_voice(text: str, role: str, own_name: str = "", learner_name: str = "",
                       learner_bio: str = "") -> tuple[str, int]:
    """``text`` without its sentences that speak in the learner's place, and how many went."""
    pieces = split_sentences(text)
    kept = [s for s in pieces if not speaks_as_learner(s, role, own_name, learner_name, learner_bio)]
    return "".join(kept), len(pieces) - len(kept)
