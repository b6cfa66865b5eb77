"""Director policies (engine/policies.py): rules, hybrid, the model's default and a researcher's hook."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.events import Event
from maic_cli.engine.models import AgentConfig, DirectorState, LessonContext, Message, TurnConfig
from maic_cli.engine.outcomes import Pick
from maic_cli.engine.policies import builtin_policy, default_policy_name, load_hook, policy_from_flag
from maic_cli.engine.round import RoundResult
from maic_cli.engine.runner import ClassRunner, RunnerHooks
from maic_cli.errors import InputError
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.llm.spec import ModelSpec
from tests.helpers import agent, decision, reply

CLASS = {a.id: a for a in (agent("mia", "student", "Mia", priority=4), agent("teacher", "teacher", "Ms. T"),
                           agent("assistant", "assistant", "Sam"), agent("leo", "student", "Leo", priority=9))}
SEEN: list[tuple[list[str], int, int, str | None]] = []


def pick_leo_then_ask(agents: Sequence[AgentConfig], state: DirectorState, messages: Sequence[Message],
                      config: TurnConfig) -> str | None:
    """A researcher's hook: Leo opens, then the LLM decides."""
    SEEN.append(([a.id for a in agents], state.turn_count, len(messages), config.director))
    return "leo" if not state.agent_responses else None


def always_leo(agents: object, state: object, messages: object, config: object) -> str:
    return "leo"


def broken_hook(agents: object, state: object, messages: object, config: object) -> object:
    raise RuntimeError("oops\nsecond line " + "x" * 1000)


def padded_hook(agents: object, state: DirectorState, messages: object, config: object) -> str:
    return " leo\n" if not state.agent_responses else "user"


def number_hook(agents: object, state: object, messages: object, config: object) -> object:
    return 42


def typed_hook(agents: object, state: DirectorState, messages: object, config: object) -> Pick:
    return Pick.agent("leo") if not state.agent_responses else Pick.user()


class Collect(RunnerHooks):
    def __init__(self) -> None:
        self.events: list[Event] = []

    def event(self, event: Event) -> None:
        self.events.append(event)


def play(llm: ScriptedLLM, *, director: str | None = None, config: TurnConfig | None = None,
         spec: ModelSpec | None = None, text: str = "Why is the sky blue?",
         lesson: LessonContext | None = None) -> tuple[RoundResult, list[Event]]:
    hooks = Collect()
    runner = ClassRunner(Classroom(), config or TurnConfig(agent_ids=list(CLASS)), llm, agents=CLASS,
                         spec=spec, hooks=[hooks], director=policy_from_flag(director) if director else None)
    runner.enter_scene(lesson)
    result = asyncio.run(runner.play(text))
    assert llm.remaining == 0  # every scripted reply used: exactly the calls the policy needs
    return result, hooks.events


def director_calls(llm: ScriptedLLM) -> int:
    return sum(1 for call in llm.calls if call.purpose == "director")


def test_rules_teacher_then_one_other_then_the_learner_without_a_director_call() -> None:
    llm = ScriptedLLM([reply("Blue light scatters most."), reply("Like a prism.")])
    result, events = play(llm, director="rules")
    assert result.speakers == ["teacher", "leo"] and result.reason == "cue_user"  # Leo: highest priority
    assert director_calls(llm) == 0 and not [e for e in events if e.type == "director_correction"]


def test_rules_a_question_to_the_class_goes_to_a_student_and_allows_a_third_speaker() -> None:
    llm = ScriptedLLM([reply("What colour scatters most?"), reply("Blue? Why not violet?"), reply("Our eyes.")])
    result, _ = play(llm, director="rules")
    assert result.speakers == ["teacher", "leo", "mia"] and result.reason == "cue_user"


def test_rules_a_question_during_a_lesson_is_the_teachers_alone() -> None:
    lesson = LessonContext(title="Plants", level="beginner", scene="What a plant needs", kind="slide",
                           position="slide 1 of 3", task="question")
    llm = ScriptedLLM([reply("Most of the mass comes from the air.")])
    result, _ = play(llm, director="rules", lesson=lesson)
    assert result.speakers == ["teacher"] and result.reason == "cue_user"
    assert director_calls(llm) == 0


def test_rules_discussion_opens_with_the_initiator_and_others_join() -> None:
    config = TurnConfig(agent_ids=list(CLASS), discussion_topic="Is math invented?", initiator_id="mia")
    llm = ScriptedLLM([reply("I think so."), reply("Let me frame it."), reply("Maybe both.")])
    result, _ = play(llm, director="rules", config=config, text="Go on.")
    assert result.speakers == ["mia", "teacher", "assistant"] and result.reason == "cue_user"
    assert director_calls(llm) == 0


def test_hybrid_rules_open_the_round_and_the_llm_decides_after() -> None:
    llm = ScriptedLLM([reply("Scattering."), decision("mia"), reply("Why blue?"), decision("USER")])
    result, _ = play(llm, director="hybrid")
    assert result.speakers == ["teacher", "mia"] and director_calls(llm) == 2


def test_hybrid_hands_back_after_three_speakers() -> None:
    llm = ScriptedLLM([reply("A."), decision("mia"), reply("B."), decision("leo"), reply("C.")])
    result, _ = play(llm, director="hybrid")
    assert result.speakers == ["teacher", "mia", "leo"] and result.reason == "cue_user"
    assert director_calls(llm) == 2


def test_llm_policy_asks_the_llm_every_time() -> None:
    llm = ScriptedLLM([decision("teacher"), reply("A."), decision("USER")])
    result, _ = play(llm, director="llm")
    assert result.speakers == ["teacher"] and director_calls(llm) == 2


def test_a_hook_picks_and_none_asks_the_llm_and_its_name_reaches_the_config() -> None:
    SEEN.clear()
    llm = ScriptedLLM([reply("Rayleigh!"), decision("teacher"), reply("Yes."), decision("USER")])
    result, _ = play(llm, director="tests.test_policies:pick_leo_then_ask")
    assert result.speakers == ["leo", "teacher"] and director_calls(llm) == 2
    assert SEEN[0] == (list(CLASS), 0, 1, "tests.test_policies:pick_leo_then_ask")


def test_a_hook_s_picks_go_through_the_guards() -> None:
    llm = ScriptedLLM([reply("Rayleigh!"), reply("Yes, and...")])
    result, events = play(llm, director="tests.test_policies:always_leo",
                          config=TurnConfig(agent_ids=list(CLASS), max_turns=2))
    assert result.speakers == ["leo", "teacher"] and director_calls(llm) == 0
    assert [(e.original, e.corrected, e.rule) for e in events if e.type == "director_correction"] == [
        ("leo", "teacher", "repeat_speaker")]


@pytest.mark.parametrize(("hook", "problem"), [("broken_hook", "RuntimeError: oops"),
                                               ("number_hook", "returned int")])
def test_a_failing_hook_ends_the_round_with_one_error(hook: str, problem: str) -> None:
    result, events = play(ScriptedLLM([]), director=f"tests.test_policies:{hook}")
    assert result.reason == "error" and problem in (result.error or "")
    assert "\n" not in (result.error or "") and len(result.error or "") < 400
    assert [e.type for e in events] == ["error", "done"]


def test_small_offline_models_default_to_rules_others_to_llm() -> None:
    assert default_policy_name(ModelSpec.parse("local").compact_prompts) == "rules"
    assert default_policy_name(ModelSpec.parse("scripted:x.yaml").compact_prompts) == "llm"
    llm = ScriptedLLM([reply("Scattering."), reply("And sunsets are red.")], name="local")
    result, _ = play(llm, spec=ModelSpec.parse("local"))
    assert result.speakers == ["teacher", "leo"] and director_calls(llm) == 0


def test_a_policy_named_by_a_file_never_imports_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "evil_director.py").write_text("import sys\nsys.modules['maic_was_pwned'] = sys\n"
                                               "def pick(*a):\n    return 'END'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert builtin_policy("evil_director:pick") is None
    config = TurnConfig(agent_ids=list(CLASS), director="evil_director:pick")  # as a session or transcript holds
    llm = ScriptedLLM([decision("teacher"), reply("A."), decision("USER")])
    result, _ = play(llm, config=config)
    assert "evil_director" not in sys.modules and "maic_was_pwned" not in sys.modules
    assert result.speakers == ["teacher"] and director_calls(llm) == 2  # the model's default: llm


def test_a_scenario_cannot_name_a_director(tmp_path: Path) -> None:
    from maic_cli.evaluation.scenarios import load_scenario

    path = tmp_path / "s.yaml"
    path.write_text("class: {agents: [teacher]}\nmessages: [hi]\ndirector: evil_director:pick\n")
    with pytest.raises(InputError, match="director"):
        load_scenario(path)


@pytest.mark.parametrize("flag", ["nocolon", "no_such_module_xyz:pick", "tests.test_policies:missing", ":x"])
def test_a_bad_director_flag_is_a_one_line_input_error(flag: str) -> None:
    with pytest.raises(InputError) as caught:
        load_hook(flag)
    assert "\n" not in str(caught.value) and "--director" in str(caught.value)


def test_rules_the_initiator_opens_only_the_discussions_first_round() -> None:
    from maic_cli.engine.policies import rules

    config = TurnConfig(agent_ids=list(CLASS), discussion_topic="Is math invented?", initiator_id="mia")
    opening = [Message.from_learner("Go on.")]
    later = [*opening, Message(role="agent", agent_id="mia"), Message.from_learner("And proofs?")]
    assert rules(list(CLASS.values()), DirectorState(), opening, config) == Pick.agent("mia")
    assert rules(list(CLASS.values()), DirectorState(), later, config) == Pick.agent("teacher")


def test_a_hooks_pick_is_read_like_the_llms_spaces_and_case_aside() -> None:
    result, _ = play(ScriptedLLM([reply("Rayleigh!")]), director="tests.test_policies:padded_hook")
    assert result.speakers == ["leo"] and result.reason == "cue_user"


def test_a_hook_may_answer_a_typed_pick() -> None:
    result, _ = play(ScriptedLLM([reply("Rayleigh!")]), director="tests.test_policies:typed_hook")
    assert result.speakers == ["leo"] and result.reason == "cue_user"


def test_a_hook_in_the_current_folder_is_found_by_the_installed_script(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``maic`` console script (unlike ``python -m``) does not put the current folder on sys.path."""
    import os
    import sys

    from maic_cli.engine.policies import load_hook

    (tmp_path / "hook_in_cwd.py").write_text("def pick(agents, state, messages, config):\n    return 'END'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", os.getcwd())])
    assert load_hook("hook_in_cwd:pick").name == "hook_in_cwd:pick"


def test_rules_reads_the_question_at_the_end_of_the_whole_reply() -> None:
    """A long reply ending in a question to the class counts (the turn summary keeps only 300 characters);
    a rhetorical question answered in the same reply does not."""
    long_question = "Light is a wave. " * 20 + "So which colour do you think scatters most?"
    llm = ScriptedLLM([reply("Blue light scatters most."), reply(long_question), reply("Violet, maybe.")])
    result, _ = play(llm, director="rules")
    assert result.speakers == ["teacher", "leo", "mia"]  # Leo asked the class: one more speaker
    rhetorical = "Why is it blue? Because blue light scatters most."
    llm = ScriptedLLM([reply("Blue light scatters most."), reply(rhetorical)])
    result, _ = play(llm, director="rules")
    assert result.speakers == ["teacher", "leo"] and result.reason == "cue_user"  # nobody was asked
