"""Benchmark: does the class on the built-in offline model say only what the lesson says?

Run:  python tests/benchmarks/offline_truth.py [--lesson NAME ...] [--samples FILE]   (needs the offline extra)

Plays every built-in lesson (lessons/*.yaml) on SmolLM2-135M as ``maic chat --lesson`` does (the lesson's
class, the model's default director): each slide is lectured, then asked questions — about the slide,
beside it, off the lesson, and addressed to a classmate by name — each discussion is played, quizzes are
skipped.  It reports, per lesson and in all:

* ``gate``: the share of live sentences (everything an agent said but the lesson's authored script
  lines) that pass the lesson's gate (maic_cli/replies/gate.py, against every sentence of the lesson
  and the question being answered);
* ``numbers``: numbers said live that neither the lesson nor the question holds;
* ``pointers``: spotlights and lasers shown on an element not on the slide on screen, or at a quiz or
  a discussion;
* ``unanswered``: questions after which no agent said anything;
* ``named``: questions to a classmate by name after which that classmate said nothing;
* ``reads well``: the share of live messages that read as prose (maic_cli/replies/prose.py's ``problems``: no
  slide title glued in front, no sentence twice, no stray mark or list word, no word cut short, a capital
  first and an end mark last);
* ``expected``: over ``faq_heldout.yaml`` (learner paraphrases written before the lessons' ``faq:``, never
  tuned on), each question asked at its scene: the lesson's expected answer said for the right faq (right),
  for another one or for a question the faqs do not hold (wrong), or not said where one was expected (missed).

Goals: 100 %, 0, 0, 0, 0, 100 %, wrong 0 and missed at most 10 %.  ``--samples FILE`` writes every question
and what was said after it.
The gate module is loaded from this tree by its path (it imports nothing of maic), so the same
measure runs against an older checkout: ``PYTHONPATH=/tmp/base python tests/benchmarks/offline_truth.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import Event
from maic_cli.engine.models import AgentConfig, ClassSettings
from maic_cli.engine.round import RoundResult
from maic_cli.engine.runner import ClassRunner, RunnerHooks
from maic_cli.lessons.faq import expected_questions
from maic_cli.lessons.lesson import DiscussionScene, Lesson, LessonPlay, QuizScene, SlideScene
from maic_cli.lessons.player import LessonPlayer
from maic_cli.llm.local import LocalLlamaClient
from maic_cli.llm.spec import ModelSpec
from maic_cli.replies.prose import problems
from maic_cli.store.lessons import load_lesson
from maic_cli.store.personas import DEFAULT_CLASS, load_registry

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "lessons"
POINTERS = ("spotlight", "laser")
OFF_LESSON = ["What is the capital of Australia?", "How many legs does a spider have?"]
# Questions beside the built-in lessons' slides (the issue's own, and a few like them); every lesson also
# gets the generic ones built from its slides, so a lesson not listed here is asked as much.
EXTRA = {
    "fractions": ["So is 3/4 bigger than 2/3? How can I tell?", "Why do the slices have to be the same size?"],
    "photosynthesis": ["Why are leaves green and not blue?"],
    "seasons": ["Is it summer in Australia when it is winter in Canada?"],
    "python_loops": ["What happens if a loop never stops?"],
}
CLASSMATE = {"fractions": "is 6/8 the same as 3/4?"}
DISCUSSION_REPLY = "I think it depends on where you are."  # a statement, not a question
HELDOUT = Path(__file__).resolve().parent / "faq_heldout.yaml"


def load_gate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("offline_truth_gate", ROOT / "maic_cli" / "replies" / "gate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


GATE = load_gate()


def lesson_texts(lesson: Lesson) -> list[str]:
    """Every sentence the lesson holds (its authored lines, classmates' too, and its quizzes)."""
    texts = [lesson.title, lesson.description or ""]
    for scene in lesson.scenes:
        if isinstance(scene, SlideScene):
            texts += [scene.title, *(e.plain_text() for e in scene.elements)]
            texts += [item for e in scene.elements for item in e.items]
            texts += [f"{scene.title}: {item}" for e in scene.elements for item in e.items]  # a bullet under its title
            texts += [s.say for s in scene.script if s.say]
            texts += [f.a for f in getattr(scene, "faq", [])]  # the answers the lesson expects to give
        elif isinstance(scene, DiscussionScene):
            texts += [scene.title or "", scene.topic, scene.prompt or ""]
            texts += [s.say for s in getattr(scene, "script", []) if s.say]
            texts += [f.a for f in getattr(scene, "faq", [])] + [s.say for s in getattr(scene, "close", []) if s.say]
        elif isinstance(scene, QuizScene):
            for q in scene.questions:
                texts += [q.question, *q.options, q.rubric or "", q.explanation or ""]
    return [t for t in texts if t]


@dataclass
class Said:
    agent_id: str
    text: str = ""
    authored: bool = False  # a line of the lesson's script, not live speech
    refusal: bool = False  # the class's fixed "the lesson does not cover that" (a grounding event of kind beyond)


@dataclass
class Tally:
    sentences: int = 0
    passed: int = 0
    numbers: int = 0
    pointers: int = 0
    questions: int = 0
    unanswered: int = 0
    named: int = 0
    named_silent: int = 0
    dropped_by_gate: int = 0
    dropped_pointers: int = 0
    refusals: int = 0
    messages: int = 0
    read_well: int = 0
    right: int = 0
    wrong: int = 0
    missed: int = 0
    expected: int = 0  # heldout questions asked
    failures: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("sentences", "passed", "numbers", "pointers", "questions", "unanswered", "named",
                     "named_silent", "dropped_by_gate", "dropped_pointers", "refusals", "messages", "read_well",
                     "right", "wrong", "missed", "expected"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.failures += other.failures

    def row(self, name: str) -> str:
        share = 100.0 * self.passed / self.sentences if self.sentences else 100.0
        return (f"{name:<16} gate {share:5.1f}% ({self.passed}/{self.sentences})  numbers {self.numbers}  "
                f"pointers {self.pointers}  unanswered {self.unanswered}/{self.questions}  "
                f"named {self.named_silent}/{self.named}  (refused: {self.refusals}; dropped: "
                f"{self.dropped_by_gate} sentences, {self.dropped_pointers} pointers)  reads well "
                f"{100.0 * self.read_well / self.messages if self.messages else 100.0:5.1f}% "
                f"({self.read_well}/{self.messages})  expected: right {self.right}, wrong {self.wrong}, missed "
                f"{self.missed} of {self.expected}")


class Watch(RunnerHooks):
    """Collects what was said, by whom, and every pointer with the scene on screen."""

    def __init__(self, lesson: Lesson) -> None:
        self.lesson = lesson
        self.said: list[Said] = []
        self.authoring = False  # inside a block of the lesson's authored script
        self.scene: Any = None
        self.off_slide = 0
        self.dropped_by_gate = 0
        self.dropped_pointers = 0
        self.open: dict[str, Said] = {}
        self.refusing = False
        self.expected: list[str] = []  # the expected answers said (grounding events of kind expected)

    def event(self, event: Event) -> None:
        if event.type == "scene":
            self.scene = self.lesson.scenes[event.index]
        elif event.type == "grounding" and event.kind == "beyond":
            self.refusing = True
        elif event.type == "grounding" and event.kind == "expected":
            self.expected += event.sentences
        elif event.type == "agent_start":
            said = Said(event.agent_id, authored=self.authoring, refusal=self.refusing)
            self.refusing = False
            self.open[event.message_id] = said
            self.said.append(said)
        elif event.type == "text_delta" and event.message_id in self.open:
            self.open[event.message_id].text += event.content
        elif event.type == "action" and event.action_name in POINTERS:
            target = event.params.get("elementId")
            if not isinstance(self.scene, SlideScene) or target not in {e.id for e in self.scene.elements}:
                self.off_slide += 1
        elif event.type == "done":
            self.dropped_by_gate += getattr(event, "ungrounded_sentences", 0)
            self.dropped_pointers += getattr(event, "dropped_pointers", 0)


def measure(said: list[Said], ground: Any, tally: Tally, where: str, titles: list[str] | None = None) -> None:
    for item in said:
        if item.authored or item.refusal:
            tally.refusals += item.refusal
            continue
        if item.text.strip():
            tally.messages += 1
            bad = problems(item.text, titles or [])
            tally.read_well += not bad
            if bad:
                tally.failures.append(f"{where}: {item.agent_id}: does not read well ({'; '.join(bad)}): "
                                      f"{item.text.strip()!r}")
        for sentence in GATE.sentences(item.text):
            tally.sentences += 1
            verdict = GATE.check(sentence, ground)
            tally.passed += bool(verdict.passes)
            if not verdict.passes:
                tally.failures.append(f"{where}: {item.agent_id}: {sentence!r} ({verdict.reason})")
            tally.numbers += sum(1 for n in GATE.numbers(sentence) if n not in ground.numbers)


def questions_for(name: str, lesson: Lesson, student: AgentConfig | None) -> dict[int, list[tuple[str, str | None]]]:
    """Scene index → (question, the classmate it names) to ask after that scene's lecture."""
    slides = [i for i, s in enumerate(lesson.scenes) if isinstance(s, SlideScene)]
    asked: dict[int, list[tuple[str, str | None]]] = {i: [] for i in slides}
    if not slides:
        return asked
    first, second, last = slides[0], slides[min(1, len(slides) - 1)], slides[-1]
    titles = {i: str(lesson.scenes[i].title).lower().rstrip(".?!") for i in slides}
    for index in slides:
        asked[index].append((f"Can you explain {titles[index]} again?", None))
    asked[second].append((f"Is there an everyday example of {titles[second]}?", None))
    asked[last] += [(q, None) for q in OFF_LESSON]
    for question in EXTRA.get(name, []):
        asked[first].append((question, None))
    if student is not None:
        about = CLASSMATE.get(name, f"why does {titles[first]} matter?")
        asked[first].append((f"{student.name}, what do you think: {about}", student.id))
    return asked


async def play(name: str, llm: LocalLlamaClient, samples: list[str]) -> Tally:
    lesson = load_lesson(LESSONS / f"{name}.yaml")
    registry = load_registry()
    ids = list(lesson.agents or [i for i in DEFAULT_CLASS if i in registry.agents])
    agents = {a.id: a for a in registry.require(ids)}
    watch = Watch(lesson)
    runner = ClassRunner(Classroom(), ClassSettings(agent_ids=ids, language=lesson.language), llm, agents=agents,
                         hooks=[watch], spec=ModelSpec.parse("local"))
    original = runner.play_scripted

    player = LessonPlayer(runner, LessonPlay(lesson=lesson))
    student = next((a for a in agents.values() if a.role == "student"), None)
    asked = questions_for(name, lesson, student)
    texts = lesson_texts(lesson)
    names = [a.name for a in agents.values()] + ["Learner"]
    titles = [s.title for s in lesson.scenes if isinstance(s, SlideScene)]
    tally = Tally()
    player.start()
    while True:
        scene = player.scene
        start = len(watch.said)
        if isinstance(scene, SlideScene):
            watch.authoring = bool(scene.script)
            await player.lecture()
            watch.authoring = False
            measure(watch.said[start:], GATE.build_ground(texts, names=names), tally, f"{name}/{scene.id} lecture",
                    titles)
            for question, classmate in asked.get(player.progress.scene, []):
                since = len(watch.said)
                await player.ask(question)
                after = watch.said[since:]
                tally.questions += 1
                tally.unanswered += not any(s.text.strip() for s in after)
                if classmate is not None:
                    tally.named += 1
                    tally.named_silent += not any(s.agent_id == classmate and s.text.strip() for s in after)
                measure(after, GATE.build_ground(texts, [question], names=names), tally, f"{name}/{scene.id}", titles)
                samples.append(f"[{name} / {scene.title}] Learner: {question}")
                samples += [f"    {agents[s.agent_id].name if s.agent_id in agents else s.agent_id}: {s.text.strip()}"
                            for s in after if s.text.strip()]
        elif isinstance(scene, DiscussionScene):
            async def marked(events: Any, trigger: str | None = None) -> RoundResult:
                watch.authoring = True
                try:
                    return await original(events, trigger=trigger)
                finally:
                    watch.authoring = False

            runner.play_scripted = marked  # type: ignore[method-assign]  # a discussion's scripted lines
            await player.discuss()
            runner.play_scripted = original  # type: ignore[method-assign]
            since = len(watch.said)
            await player.ask(DISCUSSION_REPLY)  # the learner's reply: one answer, then the closing
            measure(watch.said[start:], GATE.build_ground(texts, [DISCUSSION_REPLY], names=names), tally,
                    f"{name}/{scene.id} discussion", titles)
            tally.questions += 1
            tally.unanswered += not any(s.text.strip() for s in watch.said[since:])
            samples.append(f"[{name} / discussion: {scene.topic}] (then the learner: {DISCUSSION_REPLY})")
            samples += [f"    {agents[s.agent_id].name if s.agent_id in agents else s.agent_id}"
                        f"{' (scripted)' if s.authored else ''}: {s.text.strip()}" for s in watch.said[start:]
                        if s.text.strip()]
        if not player.next():
            break
    tally.pointers = watch.off_slide
    tally.dropped_by_gate, tally.dropped_pointers = watch.dropped_by_gate, watch.dropped_pointers
    return tally


async def expected(name: str, llm: LocalLlamaClient, items: list[dict[str, Any]], samples: list[str]) -> Tally:
    """The heldout paraphrases of ``name``, each asked at its scene in a class of its own: which expected answer
    (if any) was said, against the one the question set expects."""
    lesson = load_lesson(LESSONS / f"{name}.yaml")
    registry = load_registry()
    ids = list(lesson.agents or [i for i in DEFAULT_CLASS if i in registry.agents])
    agents = {a.id: a for a in registry.require(ids)}
    answers = {(e.scene_id, e.faq.phrasings[0]): e.faq.a for e in expected_questions(lesson)}
    titles = [s.title for s in lesson.scenes if isinstance(s, SlideScene)]
    tally = Tally()
    for item in items:
        watch = Watch(lesson)
        runner = ClassRunner(Classroom(), ClassSettings(agent_ids=ids, language=lesson.language), llm, agents=agents,
                             hooks=[watch], spec=ModelSpec.parse("local"))
        play = LessonPlay(lesson=lesson)
        play.progress.scene = next(i for i, s in enumerate(lesson.scenes) if s.id == item["scene"])
        play.progress.discussed = [s.id for s in lesson.scenes]  # a discussion's opening is over: the learner asks
        player = LessonPlayer(runner, play)
        player.start()
        await player.ask(item["question"])
        said = [s.text.strip() for s in watch.said if s.text.strip()]
        # ``expect:`` and ``also:`` (faqs whose answer is as right) name faqs by their first q; each its answer
        rights = [q for q in [item["expect"], *(item.get("also") or [])] if q]
        wanted = {answers.get((item["scene"], q)) or next((a for (_, p), a in answers.items() if p == q), None)
                  for q in rights} - {None}
        got = watch.expected[0] if watch.expected else None
        tally.expected += 1
        verdict = ("right" if (got in wanted if got is not None else not rights) else
                   "missed" if got is None else "wrong")
        setattr(tally, verdict, getattr(tally, verdict) + 1)
        measure(watch.said, GATE.build_ground(lesson_texts(lesson), [item["question"]]), tally,
                f"{name}/{item['scene']} expected", titles)
        samples.append(f"[{name} / {item['scene']}] ({verdict}) Learner: {item['question']}")
        samples += [f"    {text}" for text in said]
    return tally


async def main(names: list[str], samples: list[str]) -> int:
    llm = LocalLlamaClient(name="local")
    total = Tally()
    rows = []
    for name in names:
        began = time.monotonic()
        tally = await play(name, llm, samples)
        items = [i for i in yaml.safe_load(HELDOUT.read_text(encoding="utf-8")) if i["lesson"] == name]
        tally.add(await expected(name, llm, items, samples))
        total.add(tally)
        rows.append(tally.row(name) + f"  {time.monotonic() - began:.0f} s")
        print(rows[-1], flush=True)
    print(total.row("all"))
    for failure in total.failures[:40]:
        print("  fails:", failure)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lesson", action="append", help="a built-in lesson's name (default: all)")
    parser.add_argument("--samples", type=Path, help="write every question and what was said after it here")
    args = parser.parse_args()
    chosen = args.lesson or sorted(p.stem for p in LESSONS.glob("*.yaml"))
    said: list[str] = []
    code = asyncio.run(main(chosen, said))
    if args.samples is not None:
        args.samples.write_text("\n".join(said) + "\n", encoding="utf-8")
    sys.exit(code)
