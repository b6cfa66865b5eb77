"""Benchmark: how good is an offline class?  The built-in model, the default class of six.

Run:  python tests/benchmarks/offline_quality.py [--seed N] [--show] [--parts free,lesson,grading]
(needs the offline extra)

The class is played as ``maic chat`` plays it: a :class:`ClassRunner` on the offline model
(SmolLM2-135M through llama.cpp, compact prompts) with its default director policy (``rules``
for the offline model), the default class (``agents/``).  Three parts:

* ``free`` — six ordinary learner questions with no lesson, one round each;
* ``lesson`` — questions asked during the built-in lessons (``lessons/``), at the slide they
  belong to, through the lesson player (grounded: lessons/ask.py), and three questions
  outside the lesson;
* ``grading`` — right and wrong short answers to the lessons' short questions, graded by the
  grading entry point (``lessons/quiz.py``'s ``grade``) on the offline model.

Then it prints what a watcher would notice:

* clean prose: speech with no braces, brackets, escapes or JSON fragments;
* stray quotes: speech that opens with a quote mark;
* verbatim repeats: a reply (nearly) identical to an earlier reply of the session, to an
  example reply written in the prompt templates, or to an earlier question; and replies
  with a long sentence copied from an earlier reply;
* cut replies: speech that stops mid-sentence (no final . ! ? …);
* rounds with two or more speakers;
* markup in speech (``**``, backticks, headings, bullets, HTML tags);
* junk in speech or on the whiteboard: URLs, e-mail addresses, file paths, hashes, random tokens;
* empty turns: an agent message with no speech and no action;
* students (and the assistant) clearing or deleting board elements;
* the median and worst time per round;
* grounded answers (lesson part): the share of lesson questions whose teacher's reply carries a
  retrieved lesson sentence (lessons/grounding.py's ``carries``, as lessons/ask.py checks it),
  the share after the teacher's fallback, how many fallbacks, and the questions outside the lesson
  met honestly;
* grading agreement: right answers given at least half the points, wrong ones less than half;
  answers left "not graded".

Targets: 100% clean, 0 repeats, 0 cut, >= 2/3 of rounds with two or more
speakers, 0 markdown, 0 student clears, median round <= 30 s; 0 junk, 0 empty
turns, every lesson answer carrying the lesson (after the fallback), every outside question
met honestly, grading never inverted.  ``--show`` prints every reply.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import itertools
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import Message, TurnConfig, UserProfile
from maic_cli.engine.runner import ClassRunner, RunnerHooks
from maic_cli.lessons.grounding import carries, ground
from maic_cli.lessons.lesson import Lesson, LessonPlay, QuizScene
from maic_cli.lessons.player import LessonPlayer
from maic_cli.lessons.quiz import grade
from maic_cli.llm.local import LocalLlamaClient
from maic_cli.llm.port import LLMClient
from maic_cli.llm.recording import CallRecord, RecordingLLM
from maic_cli.store.lessons import load_lesson
from maic_cli.store.personas import DEFAULT_CLASS, load_registry

LESSONS = Path(__file__).resolve().parents[2] / "lessons"

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: the question set beside this script
from tests.benchmarks.offline_quality_set import GRADING, LESSON_QUESTIONS, OUTSIDE, QUESTIONS  # noqa: E402

PROFILE = UserProfile(nickname="Sam", bio="15 years old, likes football, finds physics hard")
NOT_PROSE = re.compile(r'[{}\[\]]|\\[nut"\\]|"(type|content|name|params)"\s*:')
MARKDOWN = re.compile(r"\*\*|__|`|^\s*#{1,6}\s|^\s*[-*+]\s|^\s*\d+\.\s|</?[a-z][a-z0-9]*>", re.MULTILINE)
SENTENCE_END = re.compile(r"[.!?…]['\")\]]*\s*$")
REPEAT_RATIO = 0.8  # difflib ratio: 0.8 catches a copy with a few words changed
CLEARS = {"wb_clear", "wb_delete"}
EXAMPLE = re.compile(r'"content": ?"([^"]{20,})"')
JUNK = {
    "url": re.compile(r"https?://|\bwww\.|\b[\w-]+\.(com|org|net|io|edu|gov)\b", re.IGNORECASE),
    "email": re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+"),
    "path": re.compile(r"(^|[\s(\"'])(~|\.{1,2})?/[\w.-]+/[\w./-]*|\b[A-Za-z]:\\\w"),
    "hash": re.compile(r"#?\b[0-9a-f]{12,}\b|#[0-9a-f]{6,}\b", re.IGNORECASE),
}
TOKEN = re.compile(r"\b[A-Za-z0-9]{8,}\b")
FORMULA = re.compile(r"^([A-Z][a-z]?\d*)+$")  # C6H12O6 is chemistry, not a random token


def random_tokens(text: str) -> list[str]:
    """Words that look generated: long, mixed case inside the word (wiBwLlGvMn), or letters and digits mixed."""
    found = []
    for token in TOKEN.findall(text):
        if FORMULA.match(token):
            continue
        switches = sum(1 for a, b in itertools.pairwise(token) if a.islower() and b.isupper())
        digits = sum(c.isdigit() for c in token)
        if switches >= 2 or (digits >= 2 and sum(c.isalpha() for c in token) >= 3):
            found.append(token)
    return found


def junk_in(text: str) -> list[str]:
    kinds = [kind for kind, pattern in JUNK.items() if pattern.search(text)]
    return kinds + (["token"] if random_tokens(text) else [])


def prompt_examples() -> list[str]:
    """The example replies written in the built-in prompt templates (a small model may copy them)."""
    from maic_cli.engine.prompt_set import PromptSet

    builtin = PromptSet.builtin()
    return [m for name in builtin.names for m in EXAMPLE.findall(builtin.source(name).text)]


@dataclass
class Reply:
    round: int
    agent_id: str
    role: str
    text: str
    actions: list[str] = field(default_factory=list)
    scripted: bool = False  # said by the lesson player (a fallback), not by the model
    board: list[str] = field(default_factory=list)  # text this reply put on the whiteboard


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?…])\s+", text) if len(s) >= 40]


def copies_a_sentence(text: str, earlier: list[str]) -> bool:
    """A long sentence of ``text`` is (nearly) one of an earlier reply's sentences."""
    theirs = [s for e in earlier for s in sentences(e)]
    return any(is_repeat(mine, theirs) for mine in sentences(text))


def is_repeat(text: str, earlier: list[str]) -> bool:
    norm = " ".join(text.lower().split())
    if len(norm) < 20:
        return False
    return any(difflib.SequenceMatcher(None, norm, " ".join(e.lower().split())).ratio() >= REPEAT_RATIO
               for e in earlier)


def describe_calls(calls: list[CallRecord]) -> str:
    """Where a round's time went: per purpose, calls, seconds, prompt/cached/completion tokens."""
    parts = []
    for purpose in ("director", "agent"):
        mine = [c for c in calls if c.purpose == purpose]
        tokens = [sum(getattr(c.usage, k) for c in mine)
                  for k in ("prompt_tokens", "cached_tokens", "completion_tokens")]
        parts.append(f"{purpose} {len(mine)} calls {sum(c.duration for c in mine):.1f} s "
                     f"prompt {tokens[0]} cached {tokens[1]} out {tokens[2]}")
    return "; ".join(parts)


def board_texts(message: Message) -> list[str]:
    """The strings an agent's message drew on the whiteboard."""
    return [str(value) for action in message.actions if action.name.startswith("wb_")
            for value in action.params.values() if isinstance(value, str)]


class Scripted(RunnerHooks):
    """Which agent messages the lesson player said itself (a lecture step, a fallback)."""

    def __init__(self) -> None:
        self.lecture = False
        self.ids: set[str] = set()

    def lecture_started(self, trigger: str | None) -> None:
        self.lecture = True

    def round_started(self, trigger, overrides=None) -> None:  # type: ignore[no-untyped-def]
        self.lecture = False

    def event(self, event) -> None:  # type: ignore[no-untyped-def]
        if event.type == "agent_start" and self.lecture:
            self.ids.add(event.message_id)


@dataclass
class Run:
    replies: list[Reply] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    speakers: list[list[str]] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    empty: int = 0
    grounded: list[tuple[str, bool, bool]] = field(default_factory=list)  # question, model carried, carried after
    fallbacks: int = 0
    outside: list[tuple[str, bool, str]] = field(default_factory=list)  # question, met honestly, what was said
    grades: list[tuple[str, bool, float, int, str, str]] = field(default_factory=list)

    def collect(self, classroom: Classroom, before: int, number: int, agents: dict, scripted: set[str]) -> list[Reply]:
        new = []
        for message in classroom.messages[before:]:
            if message.role != "agent" or not message.agent_id:
                continue
            if not message.text.strip() and not message.actions:
                self.empty += 1
            agent = agents.get(message.agent_id)
            new.append(Reply(number, message.agent_id, agent.role if agent else "?", message.text.strip(),
                             [a.name for a in message.actions], message.id in scripted, board_texts(message)))
        self.replies += new
        return new


def make_llm(seed: int, calls: list[CallRecord]) -> LLMClient:
    return RecordingLLM(LocalLlamaClient(seed=seed), calls.append)


def new_runner(llm: LLMClient, hooks: list[RunnerHooks]) -> tuple[ClassRunner, dict]:
    agents = load_registry().agents
    ids = [i for i in DEFAULT_CLASS if i in agents]
    return ClassRunner(Classroom(), TurnConfig(agent_ids=ids), llm, agents=agents, profile=PROFILE,
                       hooks=hooks), agents


async def play_free(run: Run, llm: LLMClient, calls: list[CallRecord]) -> None:
    runner, agents = new_runner(llm, [])
    print(f"director policy: {runner.policy.name}", flush=True)
    for question in QUESTIONS:
        before, first_call = len(runner.classroom.messages), len(calls)
        start = time.monotonic()
        result = await runner.play(question)
        run.times.append(time.monotonic() - start)
        run.speakers.append(result.speakers)
        run.questions.append(question)
        run.collect(runner.classroom, before, len(run.questions), agents, set())
        print(f"round {len(run.questions)}: {run.times[-1]:.1f} s, {result.reason}, speakers {result.speakers}; "
              f"{describe_calls(calls[first_call:])}", flush=True)


def lesson_player(name: str, llm: LLMClient) -> tuple[LessonPlayer, dict, Scripted]:
    scripted = Scripted()
    runner, agents = new_runner(llm, [scripted])
    player = LessonPlayer(runner, LessonPlay(lesson=load_lesson(LESSONS / f"{name}.yaml")))
    player.start()
    return player, agents, scripted


def goto(player: LessonPlayer, scene_id: str) -> None:
    for number, slide in enumerate(player.lesson.slides(), 1):
        if slide.id == scene_id:
            player.goto_slide(number)
            player.progress.step = 10**6  # the lecture is over: the learner asks about the slide
            return
    raise SystemExit(f"no slide {scene_id}")


async def play_lessons(run: Run, llm: LLMClient, calls: list[CallRecord]) -> None:
    for name, scene_id, question in [*LESSON_QUESTIONS, *OUTSIDE]:
        player, agents, scripted = lesson_player(name, llm)
        goto(player, scene_id)
        grounding = ground(player.lesson, question, current=scene_id)
        before, first_call = len(player.runner.classroom.messages), len(calls)
        start = time.monotonic()
        result = await player.ask(question)
        run.times.append(time.monotonic() - start)
        run.questions.append(question)
        new = run.collect(player.runner.classroom, before, len(run.questions), agents, scripted.ids)
        run.speakers.append([r.agent_id for r in new if not r.scripted])
        model = [r.text for r in new if not r.scripted]
        said = [r.text for r in new if r.scripted]
        if (name, scene_id, question) in OUTSIDE:
            honest = any("beyond today's lesson" in text for text in model + said)
            run.outside.append((question, honest, " / ".join(model + said)))
        else:
            language = player.lesson.language or "english"
            teacher = [r.text for r in new if not r.scripted and r.role == "teacher"] or model  # as ask.py checks
            model_carried = any(carries(text, grounding, language) for text in teacher)
            after = model_carried or any(carries(text, grounding, language) for text in said)
            run.grounded.append((question, model_carried, after))
            run.fallbacks += bool(said)
        print(f"[{name}] {question!r}: {run.times[-1]:.1f} s, {result.reason}, {grounding.verdict}, "
              f"speakers {run.speakers[-1]}, fallback {bool(said)}; {describe_calls(calls[first_call:])}", flush=True)


async def play_grading(run: Run, llm: LLMClient) -> None:
    lessons: dict[str, Lesson] = {}
    for name, question_id, answer, right in GRADING:
        lesson = lessons.setdefault(name, load_lesson(LESSONS / f"{name}.yaml"))
        question = next(q for scene in lesson.scenes if isinstance(scene, QuizScene) for q in scene.questions
                        if q.id == question_id)
        graded = await grade(question, answer, llm, language=lesson.language)
        run.grades.append((answer, right, graded.points, graded.max_points, graded.graded_by, graded.comment or ""))
        print(f"[grade {name}/{question_id}] {'right' if right else 'wrong'} -> {graded.points:g}/{graded.max_points} "
              f"({graded.graded_by}) {graded.comment or ''}", flush=True)


def report(run: Run, show: bool) -> None:
    replies = [r for r in run.replies if not r.scripted]  # the model's own replies
    spoken = [r for r in replies if r.text]
    clean = [r for r in spoken if not NOT_PROSE.search(r.text)]
    quotes = [r for r in spoken if r.text[:1] in "\"'“"]
    cut = [r for r in spoken if not SENTENCE_END.search(r.text)]
    markdown = [r for r in spoken if MARKDOWN.search(r.text)]
    repeats = [r for i, r in enumerate(spoken) if is_repeat(r.text, [e.text for e in spoken[:i]])]
    copied = [r for i, r in enumerate(spoken) if copies_a_sentence(r.text, [e.text for e in spoken[:i]])]
    examples = prompt_examples()
    copies = [r for r in spoken if is_repeat(r.text, examples)]
    asked = [r for r in spoken if is_repeat(r.text, run.questions[:r.round - 1])]
    clears = [r for r in replies if r.role != "teacher" and CLEARS & set(r.actions)]
    junk = [r for r in run.replies if junk_in(" ".join([r.text, *r.board]))]
    multi = sum(1 for s in run.speakers if len(set(s)) >= 2)
    n = len(spoken) or 1
    print()
    print(f"replies with speech:        {len(spoken)} (of {len(replies)} agent turns; "
          f"{len(run.replies) - len(replies)} said by the lesson player)")
    print(f"clean prose:                {len(clean)}/{len(spoken)} ({len(clean) / n:.0%})")
    print(f"stray opening quote:        {len(quotes)}")
    print(f"verbatim repeats:           {len(repeats)}")
    print(f"replies copying a sentence: {len(copied)}")
    print(f"copies of a prompt example: {len(copies)}")
    print(f"copies of an earlier question: {len(asked)}")
    print(f"cut mid-sentence:           {len(cut)}")
    print(f"rounds with >= 2 speakers:  {multi}/{len(run.speakers)}")
    print(f"markdown/markup in speech:  {len(markdown)}")
    print(f"junk (URL, e-mail, path, hash, token) in speech or board: {len(junk)}")
    print(f"empty turns:                {run.empty}")
    print(f"non-teachers clear/delete:  {len(clears)}")
    if run.times:
        print(f"time per round:             median {statistics.median(run.times):.1f} s, max {max(run.times):.1f} s")
    print(f"speakers per round:         {[len(s) for s in run.speakers]}")
    if run.grounded:
        model = sum(1 for _, carried, _ in run.grounded if carried)
        after = sum(1 for _, _, carried in run.grounded if carried)
        total = len(run.grounded)
        print(f"lesson questions whose model's answer carries the lesson: {model}/{total} ({model / total:.0%})")
        print(f"... after the teacher's fallback:                      {after}/{total} ({after / total:.0%}); "
              f"fallbacks {run.fallbacks}")
    if run.outside:
        honest = sum(1 for _, met, _ in run.outside if met)
        print(f"questions outside the lesson met honestly: {honest}/{len(run.outside)}")
    if run.grades:
        agree = [g for g in run.grades if (g[2] >= g[3] / 2) == g[1] and g[4] != "none"]
        inverted = [g for g in run.grades if g[4] != "none" and (g[2] >= g[3] / 2) != g[1]]
        ungraded = [g for g in run.grades if g[4] == "none"]
        print(f"grading agreement:          {len(agree)}/{len(run.grades)}; the wrong way round "
              f"{len(inverted)}; not graded {len(ungraded)}")
        for answer, right, points, most, by, comment in run.grades:
            print(f"  {'right' if right else 'wrong'} {points:g}/{most} ({by}) {answer!r} — {comment!r}")
    unclean = [r for r in spoken if all(r is not c for c in clean)]
    groups = {"NOT-CLEAN": unclean, "CUT": cut, "MARKDOWN": markdown, "REPEAT": repeats, "JUNK": junk,
              "COPIED-SENTENCE": copied, "QUOTE": quotes, "EXAMPLE-COPY": copies, "OLD-QUESTION": asked}
    print()
    for r in run.replies:
        marks = [name for name, group in groups.items() if any(x is r for x in group)]
        if show or marks:
            actions = f" actions={r.actions}" if r.actions else ""
            who = "lesson player" if r.scripted else r.role
            print(f"[round {r.round}: {run.questions[r.round - 1]!r}] {r.agent_id} ({who}){actions} "
                  f"{' '.join(marks)}\n  {r.text!r}")


async def play(seed: int, parts: list[str]) -> Run:
    run = Run()
    calls: list[CallRecord] = []
    llm = make_llm(seed, calls)
    if "free" in parts:
        await play_free(run, llm, calls)
    if "lesson" in parts:
        await play_lessons(run, llm, calls)
    if "grading" in parts:
        await play_grading(run, llm)
    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", action="store_true", help="print every reply, not only the flagged ones")
    parser.add_argument("--parts", default="free,lesson,grading", help="which parts to play (comma-separated)")
    args = parser.parse_args()
    run = asyncio.run(play(args.seed, [p.strip() for p in args.parts.split(",")]))
    report(run, args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
