"""The prompt templates: golden renderings per role and mode, overrides, the sandbox, errors.

The golden files under ``tests/golden/`` are the exact messages each call would send,
written for a reviewer to read.  After a deliberate wording change, rewrite them with
``MAIC_UPDATE_GOLDEN=1 pytest tests/test_prompt_templates.py`` and review the diff.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import maic_cli.prompts
from maic_cli.engine.actions import allowed_actions
from maic_cli.engine.agent_prompt import build_agent_call, build_agent_context, build_agent_prompt
from maic_cli.engine.director_prompt import build_director_prompt
from maic_cli.engine.models import (
    AgentTurnSummary,
    DirectorState,
    Message,
    MessagePart,
    Slide,
    SlideElement,
    StoreState,
    TurnConfig,
    TurnRequest,
    UserProfile,
    WhiteboardActionRecord,
)
from maic_cli.engine.prompt_set import PromptError, PromptSet
from maic_cli.engine.schemas import COMPACT_ACTION_PARAMS
from maic_cli.engine.whiteboard import apply_action
from maic_cli.store.personas import load_registry
from maic_cli.store.prompts import load_prompt_set
from tests.helpers import agent

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("MAIC_UPDATE_GOLDEN") == "1"
CLASS = load_registry().agents
PROFILE = UserProfile(nickname="Ana", bio="15 years old, plays football, finds physics hard")
SPEAKERS = {"teacher": "teacher", "assistant": "assistant", "student": "curious_student"}
MODES = ["qa", "discussion-initiator", "discussion-joiner", "slide", "whiteboard"]
TOPIC, DISCUSSION_PROMPT = "Should Pluto be called a planet again?", "What makes something a planet?"


def said(agent_id: str, text: str, **extra: Any) -> Message:
    a = CLASS[agent_id]
    return Message(role="agent", agent_id=a.id, agent_name=a.name, parts=[MessagePart(kind="text", text=text)],
                   **extra)


def summary(agent_id: str, text: str, drawn: Sequence[str] = ()) -> AgentTurnSummary:
    a = CLASS[agent_id]
    return AgentTurnSummary(agent_id=a.id, agent_name=a.name, content_preview=text, action_count=len(drawn),
                            whiteboard_actions=[WhiteboardActionRecord(action_name=n, agent_id=a.id, agent_name=a.name)
                                                for n in drawn])


TEACHER_ANSWER = ("Sunlight is a mix of all colours, and air scatters blue light much more than red. "
                  "So blue reaches your eyes from every part of the sky. What colour would you expect at sunset?")
EARLIER = [Message.from_learner("Hi! Can we talk about light?"), said("teacher", "Of course, Ana. Ask away."),
           Message.from_learner("Why is the sky blue?")]


def scene(role: str, mode: str, compact: bool) -> tuple[TurnRequest, DirectorState]:
    """A request for the agent of ``role`` in ``mode``, and the round's director state."""
    speaker = SPEAKERS[role]
    first = "teacher" if speaker != "teacher" else "curious_student"
    config = TurnConfig(agent_ids=list(CLASS), compact_prompts=compact)
    messages, store, state = list(EARLIER), StoreState(), DirectorState()
    if speaker != "teacher" and mode in ("qa", "slide", "whiteboard"):
        messages.append(said("teacher", TEACHER_ANSWER))
        state = DirectorState(turn_count=1, agent_responses=[summary("teacher", TEACHER_ANSWER)])
    if mode.startswith("discussion"):
        config = config.model_copy(update={"discussion_topic": TOPIC, "discussion_prompt": DISCUSSION_PROMPT,
                                           "initiator_id": speaker if mode == "discussion-initiator" else first})
        messages = []
        if mode == "discussion-joiner":
            opening = "I read that Pluto was demoted in 2006. Was that fair, or just a vote?"
            messages.append(said(first, opening))
            state = DirectorState(turn_count=1, agent_responses=[summary(first, opening)])
    if mode == "slide":
        store = StoreState(slides=[Slide(id="s1", title="Scattering of light", elements=[
            SlideElement(id="title_1", type="text", content="Why is the sky blue?"),
            SlideElement(id="img_1", type="image", content="sunlight entering the atmosphere"),
            SlideElement(id="eq_1", type="formula", content="I ∝ 1 / λ⁴")])])
    if mode == "whiteboard":  # drawn in the earlier round, by the teacher and by Sam
        messages[2:2] = [said("assistant", "Short waves scatter most.")]
        apply_action(store, "wb_draw_latex", {"latex": r"I \propto \frac{1}{\lambda^4}", "x": 80, "y": 60}, "teacher")
        apply_action(store, "wb_draw_text", {"content": "blue: short wavelength", "x": 80, "y": 160}, "assistant")
    request = TurnRequest(messages=messages, store_state=store, config=config, user_profile=PROFILE)
    return request, state


def agent_messages(role: str, mode: str, compact: bool) -> list[dict[str, str]]:
    request, state = scene(role, mode, compact)
    speaker = CLASS[SPEAKERS[role]]
    actions = allowed_actions(speaker, request.store_state.scene_type)
    if compact:  # as engine/turn.py does: small models get the simple actions only
        actions = [name for name in actions if name in COMPACT_ACTION_PARAMS]
    messages, _ = build_agent_call(request, speaker, actions, state)
    return messages


def director_prompt(case: str, compact: bool) -> str:
    config = TurnConfig(agent_ids=list(CLASS), compact_prompts=compact)
    messages, state = list(EARLIER), DirectorState()
    if case == "qa-later-turn":
        messages.append(said("teacher", TEACHER_ANSWER))
        state = DirectorState(turn_count=1, agent_responses=[summary("teacher", TEACHER_ANSWER, ["wb_draw_latex"])],
                              whiteboard_ledger=[WhiteboardActionRecord(action_name="wb_draw_latex", agent_id="teacher",
                                                                        agent_name="Ms. Rivera")])
    if case == "discussion":
        config = config.model_copy(update={"discussion_topic": TOPIC, "discussion_prompt": DISCUSSION_PROMPT,
                                           "initiator_id": "curious_student"})
        messages = []
    return build_director_prompt(list(CLASS.values()), state, messages, StoreState(), config, PROFILE)


def as_text(title: str, messages: list[dict[str, str]]) -> str:
    parts = [f"# {title}\n# regenerate: MAIC_UPDATE_GOLDEN=1 pytest tests/test_prompt_templates.py"]
    parts += [f"=== {m['role']} ===\n{m['content']}" for m in messages]
    return "\n\n".join(parts) + "\n"


def check_golden(relative: str, text: str) -> None:
    path = GOLDEN / relative
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} is missing: run with MAIC_UPDATE_GOLDEN=1 to write it"
    assert text == path.read_text(encoding="utf-8"), f"{relative} differs: review, then MAIC_UPDATE_GOLDEN=1"


@pytest.mark.parametrize("compact", [False, True], ids=["full", "compact"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("role", list(SPEAKERS))
def test_agent_prompt_matches_golden(role: str, mode: str, compact: bool) -> None:
    variant = "compact" if compact else "full"
    messages = agent_messages(role, mode, compact)
    check_golden(f"agent/{role}-{mode}.{variant}.txt", as_text(f"agent: {role}, {mode}, {variant}", messages))


@pytest.mark.parametrize("compact", [False, True], ids=["full", "compact"])
@pytest.mark.parametrize("case", ["qa-first-turn", "qa-later-turn", "discussion"])
def test_director_prompt_matches_golden(case: str, compact: bool) -> None:
    variant = "compact" if compact else "full"
    prompt = director_prompt(case, compact)
    check_golden(f"director/{case}.{variant}.txt", as_text(f"director: {case}, {variant}",
                                                           [{"role": "system", "content": prompt}]))


# -- what the content must say (not only that it did not change) ------------------------------
def system_and_tail(role: str, mode: str, compact: bool = False) -> tuple[str, str]:
    messages = agent_messages(role, mode, compact)
    return messages[0]["content"], messages[-1]["content"]


@pytest.mark.parametrize("role", list(SPEAKERS))
def test_speech_rules_forbid_markdown_narration_and_stage_directions(role: str) -> None:
    system, _ = system_and_tail(role, "qa")
    for rule in ["No markdown", "Do not narrate your actions", "No stage directions", "A good reply", "Bad replies",
                 "Always finish your last sentence", "Never repeat an earlier answer"]:
        assert rule in system, rule
    compact, _ = system_and_tail(role, "qa", compact=True)
    assert "no markdown" in compact and "Do not say what you draw" in compact


def test_length_targets_are_in_sentences_and_shrink_by_role() -> None:
    targets = {role: system_and_tail(role, "qa")[0] for role in SPEAKERS}
    assert "2 to 4 short sentences" in targets["teacher"]
    assert "1 to 3 short sentences" in targets["assistant"]
    assert "1 or 2 short sentences" in targets["student"]
    assert all("words of speech" not in text for text in targets.values())


def test_whiteboard_guidelines_per_role_keep_the_board_open() -> None:
    teacher, assistant, student = (system_and_tail(role, "qa")[0] for role in ("teacher", "assistant", "student"))
    assert "Leave the board open" in teacher and "wb_clear" in teacher
    assert "Close the whiteboard. Only to go back to the slide" in teacher
    assert "close it when done" not in teacher.lower() and "when done with it" not in teacher
    assert "Never erase, clear or move what someone else drew" in assistant
    assert "unless the teacher or Ana asks you to come to the board" in student
    assert "Never erase, clear or redraw anything" in student
    for text in (assistant, student):  # the default personas cannot erase, so the prompt does not offer it
        assert "- wb_clear" not in text and "- wb_delete" not in text


def test_board_context_says_who_drew_what_and_not_to_redraw_it() -> None:
    _, teacher_tail = system_and_tail("teacher", "whiteboard")
    assert r"[wb_1] latex: I \propto \frac{1}{\lambda^4} (drawn by you)" in teacher_tail
    assert "[wb_2] text: blue: short wavelength (drawn by Sam)" in teacher_tail
    assert "do not draw it again" in teacher_tail
    _, student_tail = system_and_tail("student", "whiteboard", compact=True)
    assert "On the board (do not draw again)" in student_tail and "by Ms. Rivera" in student_tail


def test_peer_context_leaves_the_agent_itself_out() -> None:
    mia = CLASS["curious_student"]
    state = DirectorState(agent_responses=[summary("teacher", "Blue scatters most."),
                                           summary("curious_student", "Why not violet?")])
    context = build_agent_context(state, StoreState(), agent=mia)
    assert "- Ms. Rivera: Blue scatters most." in context
    assert "Why not violet?" not in context
    alone = DirectorState(agent_responses=[summary("curious_student", "Why not violet?")])
    assert "Already said" not in build_agent_context(alone, StoreState(), agent=mia)


def test_discussion_context_for_the_initiator_joiners_and_later_rounds() -> None:
    _, opening = system_and_tail("student", "discussion-initiator")
    assert 'You open the discussion on "Should Pluto be called a planet again?"' in opening
    assert "introduce the topic" in opening and "What makes something a planet?" in opening
    assert "open question" in opening
    _, joining = system_and_tail("teacher", "discussion-joiner")
    assert "You are joining the discussion" in joining and "do not introduce the topic again" in joining
    system, _ = system_and_tail("teacher", "discussion-joiner")
    assert "What it should explore: What makes something a planet?" in system  # the prompt reaches agents
    request, _ = scene("student", "discussion-joiner", False)
    later = request.model_copy(update={"messages": [*request.messages, Message.from_learner("I think it was fair.")]})
    _, context = build_agent_call(later, CLASS["teacher"], [], DirectorState())
    assert "is under way" in context and "You open the discussion" not in context


def test_learner_is_named_and_the_bio_shapes_the_examples() -> None:
    system, _ = system_and_tail("teacher", "qa")
    assert "Ana: 15 years old, plays football" in system
    assert "pick examples that fit their background" in system and "not in every turn" in system
    plain = build_agent_prompt(CLASS["teacher"], [], UserProfile(nickname="Bo"))
    assert "Bo" in plain and "background" not in plain


def test_director_rules_cover_routing_quality() -> None:
    first = director_prompt("qa-first-turn", False)
    for rule in ["the teacher answers first", "Nobody has answered yet", "After the teacher, consider one student",
                 "Never pick an agent who already spoke", "different role", "nobody explains it again",
                 "explain, then question, then go deeper, then another view, then sum up",
                 "One greeting per class", "agent turn 1 of at most 6", "question to the learner is still open"]:
        assert rule in first, rule
    later = director_prompt("qa-later-turn", False)
    assert "agent turn 2 of at most 6" in later and "The last speaker ended with a question to Ana." in later
    assert "Nobody has answered yet" not in later


def test_initiator_first_only_when_the_discussion_opens() -> None:
    opening = director_prompt("discussion", False)
    assert "This turn opens the discussion: the initiator speaks first (curious_student)" in opening
    config = TurnConfig(agent_ids=list(CLASS), discussion_topic=TOPIC, initiator_id="curious_student")
    later_round = [said("curious_student", "Was it fair?"), Message.from_learner("I think so.")]
    under_way = build_director_prompt(list(CLASS.values()), DirectorState(), later_round, StoreState(), config,
                                      PROFILE)
    assert "This turn opens the discussion" not in under_way and "The discussion is under way" in under_way
    compact = build_director_prompt(list(CLASS.values()), DirectorState(), later_round, StoreState(),
                                    config.model_copy(update={"compact_prompts": True}), PROFILE)
    assert "initiator speaks first" not in compact and "teacher answers the learner first" in compact


def test_compact_prompts_are_short_with_one_example() -> None:
    for role in SPEAKERS:
        full, _ = system_and_tail(role, "qa")
        compact, _ = system_and_tail(role, "qa", compact=True)
        assert len(compact) < len(full) / 3
        assert compact.count('[{"type":"text","content":') == 1
    assert len(director_prompt("qa-first-turn", True)) < len(director_prompt("qa-first-turn", False)) / 2


# -- the prompt set: overrides, the sandbox, errors ---------------------------------------------
def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_maic_home_prompts_override_a_snippet_by_its_relative_path(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAIC_HOME", str(tmp_path))
    assert load_prompt_set() is PromptSet.builtin()  # no prompts folder: the built-in set
    write(tmp_path / "prompts", "snippets/speech.md", "Speak like a pirate to {{ learner.name }}.\n")
    prompts = load_prompt_set()
    assert prompts.overridden == ("snippets/speech.md",)
    system = build_agent_prompt(CLASS["teacher"], [], PROFILE, prompts=prompts)
    assert "Speak like a pirate to Ana." in system and "No markdown" not in system
    assert "# Your part in the class" in system  # everything else is still the built-in text
    assert "No markdown" in build_agent_prompt(CLASS["teacher"], [], PROFILE)  # the built-in set is untouched


def test_prompts_folder_overrides_the_director_and_may_add_snippets(tmp_path: Path) -> None:
    write(tmp_path, "director/system.j2", 'Pick one of {{ ids | join(", ") }}. {% include "mine/extra.md" %}\n')
    write(tmp_path, "mine/extra.md", "Prefer {{ agents[0].name }}.\n")
    pair = [CLASS["teacher"], CLASS["assistant"]]
    config = TurnConfig(agent_ids=["teacher", "assistant"])
    prompt = build_director_prompt(pair, DirectorState(), [], StoreState(), config, PROFILE,
                                   prompts=load_prompt_set(tmp_path))
    assert prompt.startswith("Pick one of teacher, assistant") and prompt.endswith("Prefer Ms. Rivera.")


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("agent/system.j2", "line one\n{% if agent.name %}\nno end\n", "agent/system.j2:3: Unexpected end of template"),
    ("snippets/speech.md", "fine\n{{ learner.nickname }}\n", "snippets/speech.md:2: 'dict object' has no attribute"),
    ("agent/system.j2", 'a\n\n{% include "../../etc/passwd" %}\n', "agent/system.j2:3: no template '../../etc/passwd'"),
    ("agent/system.j2", "a\n{{ agent.__class__.__mro__ }}\n", "agent/system.j2:2: access to attribute '__class__'"),
    ("agent/system.j2", "a\n{{ actions.append(1) }}\n", "agent/system.j2:2: access to attribute 'append'"),
    ("agent/system.j2", "{{ undefined_name }}\n", "agent/system.j2:1: 'undefined_name' is undefined"),
])
def test_a_broken_template_is_one_line_naming_file_and_line(tmp_path: Path, name: str, text: str,
                                                            expected: str) -> None:
    write(tmp_path, name, text)
    with pytest.raises(PromptError) as caught:
        build_agent_prompt(CLASS["teacher"], ["wb_open"], PROFILE, prompts=load_prompt_set(tmp_path))
    message = str(caught.value)
    assert message.startswith(str(tmp_path / expected.split(":")[0])), message
    assert expected.split("/", 1)[1] in message and "\n" not in message
    assert caught.value.exit_code == 2


def test_a_syntax_error_is_reported_when_the_set_is_loaded(tmp_path: Path) -> None:
    path = write(tmp_path, "roles/student.md", "ok\n\n{{ oops(\n")
    with pytest.raises(PromptError, match=rf"^{path}:3: "):
        load_prompt_set(tmp_path)


def test_unreadable_prompt_files_are_input_errors(tmp_path: Path) -> None:
    from maic_cli.errors import InputError

    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "system.j2").write_bytes(b"\xff\xfe not text")
    with pytest.raises(InputError, match="not UTF-8"):
        load_prompt_set(tmp_path)
    with pytest.raises(InputError, match="no such prompts folder"):
        load_prompt_set(tmp_path / "missing")


def test_templates_get_plain_data_only() -> None:
    with pytest.raises(TypeError, match="plain data only"):
        PromptSet.builtin().render("snippets/your_turn.md", {"agent": agent("mia")})
    with pytest.raises(TypeError, match="plain data only"):
        PromptSet.builtin().render("snippets/your_turn.md", {"hook": print})


def test_every_builtin_template_compiles_and_is_shipped_in_the_package() -> None:
    builtin = PromptSet.builtin()
    builtin.check()
    folder = Path(maic_cli.prompts.__file__).parent
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.suffix in (".j2", ".md")}
    assert set(builtin.names) == on_disk and "agent/system.j2" in on_disk


def test_small_model_director_is_pointed_at_a_student_not_heard_recently() -> None:
    from maic_cli.engine.director_prompt import suggested_next

    agents = list(CLASS.values())
    assert suggested_next(agents, DirectorState(), []) == "teacher"
    after_teacher = DirectorState(turn_count=1, agent_responses=[summary("teacher", "Blue scatters most.")])
    assert suggested_next(agents, after_teacher, []) == "curious_student"  # the highest-priority student
    heard = [said("curious_student", "Why?"), said("deep_thinker", "Always?"), said("note_taker", "So: blue.")]
    assert suggested_next(agents, after_teacher, heard) == "class_clown"  # the one not heard yet
    after_student = DirectorState(turn_count=1, agent_responses=[summary("class_clown", "A joke.")])
    assert CLASS[suggested_next(agents, after_student, heard)].role != "student"
    compact = build_director_prompt(agents, after_teacher, heard, StoreState(),
                                    TurnConfig(agent_ids=list(CLASS), compact_prompts=True), PROFILE)
    assert 'A good choice now: {"next_agent": "class_clown"}' in compact


@pytest.mark.parametrize(("text", "expected"), [
    ("{% for i in range(5000) %}x{% endfor %}\n", "agent/system.j2:1: range() of more than 1000 numbers"),
    ("{% for i in range(1000) %}{% for j in range(1000) %}xxx{% endfor %}{% endfor %}\n",
     "agent/system.j2: renders more than 200,000 characters"),
])
def test_a_runaway_template_is_stopped(tmp_path: Path, text: str, expected: str) -> None:
    write(tmp_path, "agent/system.j2", text)
    with pytest.raises(PromptError, match=re.escape(f"{tmp_path}/{expected}")):
        build_agent_prompt(CLASS["teacher"], [], PROFILE, prompts=load_prompt_set(tmp_path))


def test_a_template_error_quoting_control_characters_is_printed_clean(tmp_path: Path) -> None:
    folder = tmp_path / "evil\x1b[2Jname"  # a folder name someone sent along with a prompt set
    write(folder, "agent/system.j2", "{% if %}\n")
    with pytest.raises(PromptError) as caught:
        load_prompt_set(folder)
    assert "\x1b" not in str(caught.value) and "evilname/agent/system.j2:1: " in str(caught.value)
