"""The judge's rubrics: which template judges which criteria, with which labels, for which turns.

A rubric is a pair of templates (the system message and the round) and its criteria, each with
the labels a verdict may give it and the one that counts as *good* in the reports (the rate of a
criterion is the share of judged turns given its good label).

* ``default`` (``judge/rubric.j2``): five yes/no criteria for every agent turn, and whether the
  learner's message was answered, per round.  Its verdicts keep their true/false fields
  (evaluation/judge.py ``TurnVerdict``), the fields every results file and report holds.
* ``pedagogy`` (``judge/pedagogy.j2``): the eight dimensions on which the BEA 2025 shared task
  on AI tutors (and MRBench, the benchmark behind it) annotates tutor responses, for teacher-side
  turns only (the teacher's and the assistant's; students are shown as context, not judged).
  Six are ``yes`` / ``to some extent`` / ``no``; *revealing the answer* also (its good label is
  ``no``: MRBench's two "yes" labels, correct or not, are folded into ``yes`` and a hint that gives
  most of it away is ``to some extent``); *tutor tone* is ``encouraging`` / ``neutral`` /
  ``offensive`` as in MRBench (good: ``encouraging``).

A judge's label is read leniently (:func:`normalise_label`: case, ``_``/``-`` for spaces, true/false
for yes/no); anything else is not a label.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

THREE = ("yes", "to some extent", "no")
TONE = ("encouraging", "neutral", "offensive")
_SYNONYMS = {"true": "yes", "false": "no", "partly": "to some extent", "partially": "to some extent",
             "somewhat": "to some extent", "some extent": "to some extent"}


@dataclass(frozen=True)
class Criterion:
    name: str  # its key in a verdict and in report.json
    label: str  # for people
    labels: tuple[str, ...]  # the labels a verdict may give
    good: str  # the label a rate counts
    question: str = ""  # for the documentation (the template asks it in its own words)


@dataclass(frozen=True)
class Rubric:
    name: str
    template: str  # the system message
    round_template: str  # the user message: one round
    criteria: tuple[Criterion, ...]
    roles: frozenset[str] | None = None  # the roles whose turns are judged (None: every agent)
    answered: bool = True  # a round with a learner message is judged on whether it was answered
    boolean: bool = True  # verdicts are true/false fields (the default rubric's form)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.criteria)

    @property
    def templates(self) -> tuple[str, ...]:
        return (self.template, self.round_template)

    def judges(self, role: str) -> bool:
        return self.roles is None or role in self.roles

    def criterion(self, name: str) -> Criterion:
        return next(c for c in self.criteria if c.name == name)

    def read(self, name: str, value: Any) -> str | None:
        """A judge's or a person's label for one criterion, normalised; ``None`` when it is not one."""
        label = normalise_label(value)
        return label if label in self.criterion(name).labels else None


def normalise_label(value: Any) -> str | None:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, str) or len(value) > 40:
        return None
    text = " ".join(value.lower().replace("_", " ").replace("-", " ").split()).strip(" .")
    return _SYNONYMS.get(text, text)


def _yes_no(name: str, label: str) -> Criterion:
    return Criterion(name, label, ("yes", "no"), "yes")


DEFAULT = Rubric("default", "judge/rubric.j2", "judge/round.j2", (
    _yes_no("on_topic", "on topic"), _yes_no("correct", "correct"), _yes_no("in_role", "in role and persona"),
    _yes_no("brief", "brief enough"), _yes_no("new", "adds something new")))

PEDAGOGY = Rubric("pedagogy", "judge/pedagogy.j2", "judge/pedagogy_round.j2", (
    Criterion("mistake_identification", "mistake identification", THREE, "yes",
              "does the tutor notice that the learner made a mistake (or has a gap)?"),
    Criterion("mistake_location", "mistake location", THREE, "yes",
              "does the tutor point to where the mistake is?"),
    Criterion("revealing_answer", "revealing the answer", THREE, "no",
              "does the tutor give the answer away instead of letting the learner find it?"),
    Criterion("providing_guidance", "providing guidance", THREE, "yes",
              "does the tutor give correct, relevant help: an explanation, a hint, an example?"),
    Criterion("actionability", "actionability", THREE, "yes",
              "is it clear what the learner should do next?"),
    Criterion("coherence", "coherence", THREE, "yes",
              "does it follow from the conversation so far?"),
    Criterion("tutor_tone", "tutor tone", TONE, "encouraging",
              "is the tone encouraging, neutral or offensive?"),
    Criterion("humanlikeness", "humanlikeness", THREE, "yes",
              "does it sound like a human tutor?")),
    roles=frozenset({"teacher", "assistant"}), answered=False, boolean=False)

RUBRICS = {rubric.name: rubric for rubric in (DEFAULT, PEDAGOGY)}


def rubric_named(name: str) -> Rubric:
    """The rubric called ``name`` (``ValueError`` naming the known ones otherwise)."""
    try:
        return RUBRICS[name]
    except KeyError:
        raise ValueError(f"unknown rubric {name[:40]!r} (known: {', '.join(RUBRICS)})") from None
