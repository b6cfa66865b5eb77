"""The runner owns the round: the class's saved settings apart from one round's context, typed
overrides for one round, the lesson player asking instead of writing, one place for the director."""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import (
    AgentConfig,
    ClassSettings,
    DirectorState,
    LessonContext,
    Message,
    RoundContext,
    RoundOverrides,
    TurnConfig,
)
from maic_cli.engine.outcomes import Pick
from maic_cli.engine.policies import DirectorPolicy, choose_policy, rules
from maic_cli.engine.runner import ClassRunner, RunnerHooks
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.llm.spec import ModelSpec
from maic_cli.store.session import Session, load_session, save_session
from maic_cli.store.transcript import read_transcript
from tests.helpers import agent, decision, reply

CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T"), agent("mia", "student", "Mia"))}
ROOT = Path(__file__).resolve().parent.parent
LESSON = LessonContext(title="Plants", scene="What a plant needs", position="slide 1 of 2")


class Spy:
    """A policy that records the config each turn sees and lets the rules pick."""

    def __init__(self) -> None:
        self.seen: list[TurnConfig] = []

    def __call__(self, agents: Sequence[AgentConfig], state: DirectorState, messages: Sequence[Message],
                 config: TurnConfig) -> Pick:
        self.seen.append(config)
        return rules(agents, state, messages, config)


class Started(RunnerHooks):
    def __init__(self) -> None:
        self.overrides: list[RoundOverrides | None] = []

    def round_started(self, trigger: str | None, overrides: RoundOverrides | None = None) -> None:
        self.overrides.append(overrides)


def make(llm: ScriptedLLM, settings: ClassSettings | None = None, **options: object) -> tuple[ClassRunner, Spy]:
    spy = Spy()
    runner = ClassRunner(Classroom(), settings or ClassSettings(agent_ids=list(CLASS)), llm, agents=CLASS,
                         director=DirectorPolicy("spy", spy), **options)  # type: ignore[arg-type]
    return runner, spy


def test_overrides_change_one_round_only_and_never_the_class_settings() -> None:
    settings = ClassSettings(agent_ids=list(CLASS))
    before = settings.model_dump()
    llm = ScriptedLLM([reply("Let us discuss."), reply("I think so."), reply("Light scatters."), reply("Blue!")])
    runner, spy = make(llm, settings)
    overrides = RoundOverrides(max_turns=2, discussion_topic="Is math invented?", initiator_id="mia")
    asyncio.run(runner.play_round("mia", overrides=overrides, fresh=True))
    assert {(c.max_turns, c.discussion_topic, c.initiator_id) for c in spy.seen} == {(2, "Is math invented?", "mia")}
    spy.seen.clear()
    asyncio.run(runner.play("Why is the sky blue?"))
    assert spy.seen and all((c.max_turns, c.discussion_topic, c.initiator_id) == (6, None, None) for c in spy.seen)
    assert settings.model_dump() == before and runner.config is settings  # the session's object, never written


def test_a_fresh_round_starts_the_director_over_and_a_plain_one_does_not() -> None:
    settings = ClassSettings(agent_ids=list(CLASS), max_turns=3)
    spent = DirectorState(turn_count=3)  # the last round used every turn
    runner, _ = make(ScriptedLLM([reply("Welcome to the slide.")]), settings)
    runner.classroom.director_state = spent.model_copy()
    assert asyncio.run(runner.play_round("teacher")).reason == "max_turns"  # nothing said: still the old round
    runner.classroom.director_state = spent.model_copy()
    result = asyncio.run(runner.play_round("teacher", overrides=RoundOverrides(max_turns=1), fresh=True))
    assert result.speakers == ["teacher"] and result.reason == "max_turns"


def test_the_scene_the_runner_is_told_reaches_every_round_and_is_recorded_but_never_saved(tmp_path: Path) -> None:
    llm = ScriptedLLM([reply("Plants need light."), reply("And water!"), reply("Light."), reply("Yes.")])
    started = Started()
    runner, spy = make(llm, hooks=[started])
    runner.enter_scene(LESSON)
    asyncio.run(runner.play("What do plants need?"))
    assert spy.seen and all(c.lesson == LESSON for c in spy.seen)
    assert started.overrides == [RoundOverrides(lesson=LESSON)]  # a transcript records where the class was
    session = Session(config=runner.config, agents=list(CLASS.values()), classroom=runner.classroom)
    save_session(session, tmp_path / "s.json")
    saved = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["config"]
    assert set(saved) == set(ClassSettings.model_fields)  # no lesson, trigger, prompt variant or guard switch
    spy.seen.clear()
    runner.enter_scene(None)
    asyncio.run(runner.play("Why?"))
    assert spy.seen and all(c.lesson is None for c in spy.seen) and started.overrides[-1] is None


def test_a_questions_own_lesson_context_holds_for_its_round_only() -> None:
    asked = LESSON.model_copy(update={"grounding": ["Plants make sugar from light."]})
    llm = ScriptedLLM([reply("From light."), reply("Sugar!"), reply("Yes."), reply("Indeed.")])
    runner, spy = make(llm)
    runner.enter_scene(LESSON)
    asyncio.run(runner.play("Where does the sugar come from?", overrides=RoundOverrides(lesson=asked)))
    assert spy.seen and all(c.lesson == asked for c in spy.seen)
    assert runner.lesson == LESSON
    spy.seen.clear()
    asyncio.run(runner.play("And the air?"))
    assert spy.seen and all(c.lesson == LESSON for c in spy.seen)


def test_an_old_session_with_scratch_fields_in_its_config_loads_and_saves_without_them(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    save_session(Session(config=ClassSettings(agent_ids=list(CLASS), director="rules"),
                         agents=list(CLASS.values())), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["config"].update(trigger_agent_id="mia", allow_repeat_speaker=True, compact_prompts=True,
                          lesson={"title": "Plants"})  # what older or crafted files may hold
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = load_session(path)
    assert loaded.config.agent_ids == list(CLASS) and loaded.config.director == "rules"
    runner = ClassRunner(loaded.classroom, loaded.config, ScriptedLLM([]), agents=CLASS,
                         spec=ModelSpec.parse("openai/gpt-4o-mini"))
    assert runner.round_context("teacher") == RoundContext(trigger_agent_id="teacher")  # none of it from the file
    save_session(loaded, path)
    assert "trigger_agent_id" not in json.loads(path.read_text(encoding="utf-8"))["config"]


def test_the_shipped_transcripts_still_load_with_their_recorded_trigger_field() -> None:
    shipped = sorted((ROOT / "transcripts").glob("*.jsonl"))
    assert shipped
    for path in shipped:
        header = read_transcript(path).header
        assert header.config.agent_ids and not hasattr(header.config, "trigger_agent_id")


def test_only_code_lets_an_agent_speak_twice_in_a_round() -> None:
    def replies() -> ScriptedLLM:
        return ScriptedLLM([decision("teacher"), reply("Light scatters."), decision("mia"), reply("Why blue?"),
                            decision("teacher"), reply("Shorter waves."), decision("USER")])

    strict = ClassRunner(Classroom(), ClassSettings(agent_ids=list(CLASS)), replies(), agents=CLASS,
                         director=DirectorPolicy("llm", lambda *args: None))
    assert asyncio.run(strict.play("Why is the sky blue?")).speakers == ["teacher", "mia"]
    allowed = ClassRunner(Classroom(), ClassSettings(agent_ids=list(CLASS)), replies(), agents=CLASS,
                          director=DirectorPolicy("llm", lambda *args: None), allow_repeat_speaker=True)
    assert asyncio.run(allowed.play("Why is the sky blue?")).speakers == ["teacher", "mia", "teacher"]


def test_one_place_chooses_the_director_policy() -> None:
    hook = DirectorPolicy("mylab:pick", lambda *args: None)
    assert choose_policy(hook, "rules", compact_prompts=False) is hook  # the flag the user typed wins
    assert choose_policy(None, "hybrid", compact_prompts=False).name == "hybrid"  # a built-in a file names
    assert choose_policy(None, "mylab:pick", compact_prompts=False).name == "llm"  # a file never loads code
    assert choose_policy(None, None, compact_prompts=True).name == "rules"  # a small model's default
    assert choose_policy(None, None, compact_prompts=False).name == "llm"
    small = ClassRunner(Classroom(), ClassSettings(agent_ids=list(CLASS), director="mylab:pick"), ScriptedLLM([]),
                        agents=CLASS, spec=ModelSpec.parse("local"))
    assert small.policy.name == "rules"


# Calls on the runner's settings, classroom or hooks that only read.
READS = {"model_copy", "model_dump", "model_dump_json", "get", "copy", "index", "count", "items", "keys", "values",
         "slide_number", "find", "message", "startswith"}
WATCHED = ("runner.config", "runner.classroom", "runner.hooks")


def _into_the_runner(expr: ast.expr) -> bool:
    """``expr`` is (a part of) the runner's settings, classroom or hooks: ``….runner.config…``."""
    node: ast.expr = expr
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        text = ast.unparse(node)
        if any(text == part or text.endswith(f".{part}") for part in WATCHED):
            return True
        node = node.value
    return False


def _writes_into_the_runner(tree: ast.AST) -> list[str]:
    """Assignments and deletions into ``….runner.config`` / ``.classroom`` / ``.hooks``, calls of their
    methods other than reads (``append``, ``add_learner_message``, ``clear`` …), ``setattr``/``delattr``
    on them, and a name bound to one of them (``c = runner.config``, then written through ``c``)."""
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if value is not None and any(ast.unparse(value).endswith(part) for part in WATCHED):
                targets = [*targets, value]  # an alias: writes through it are out of sight
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr not in READS:
            targets = [node.func.value]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
            targets = node.args[:1]
        for target in targets:
            if _into_the_runner(target):
                found.append(f"{getattr(node, 'lineno', '?')}: {ast.unparse(target)}")
    return found


def test_nothing_outside_the_runner_writes_into_its_settings_or_classroom() -> None:
    offenders = {}
    for path in sorted((ROOT / "maic_cli").rglob("*.py")):
        if path.name == "runner.py" and path.parent.name == "engine":
            continue
        found = _writes_into_the_runner(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert offenders == {}


def test_the_write_detector_sees_the_writes_it_forbids() -> None:
    sample = ("self.runner.config.lesson = x\nrunner.classroom.director_state = None\n"
              "runner.hooks.append(h)\nrunner.config.max_turns += 1\n")
    assert len(_writes_into_the_runner(ast.parse(sample))) == 4
    more = ("runner.classroom.add_learner_message('x')\nrunner.classroom.messages.pop()\nrunner.hooks.clear()\n"
            "setattr(runner.config, 'max_turns', 50)\nc = runner.config\ndel runner.classroom.messages[-1]\n"
            "self.runner.config.agent_configs.update(d)\n")
    assert len(_writes_into_the_runner(ast.parse(more))) == 7
    reads = ("x = runner.config.lesson\nrunner.enter_scene(c)\nf(runner.classroom.messages)\n"
             "runner.classroom.model_copy()\n")
    assert _writes_into_the_runner(ast.parse(reads)) == []


def test_a_rounds_context_given_to_the_runner_as_a_class_setting_is_refused_not_lost() -> None:
    for scratch in ({"lesson": LESSON}, {"compact_prompts": True}, {"allow_repeat_speaker": True},
                    {"trigger_agent_id": "mia"}):
        with pytest.raises(ValueError, match="round's context"):
            ClassRunner(Classroom(), TurnConfig(agent_ids=list(CLASS), **scratch), ScriptedLLM([]),
                        agents=CLASS)
    ClassRunner(Classroom(), TurnConfig(agent_ids=list(CLASS), max_turns=2), ScriptedLLM([]), agents=CLASS)
