"""What a small model may not do in a class, played through the real round and turn.

Junk (addresses, URLs, paths, hashes, random tokens) cuts a small model's reply before it and
is shown inert for any model; board text must come from the class; a prompt's example
sentences are never said; a reply that speaks as the learner is asked again; a reply dropped
whole takes no turn anywhere (view events, transcript, exports, metrics).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.engine.agent_prompt import build_agent_prompt
from maic_cli.engine.agent_reply import cut_before_junk
from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import TurnConfig, UserProfile
from maic_cli.engine.round import run_round
from maic_cli.evaluation.metrics import RoundLog
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM, ScriptedReply
from maic_cli.replies.speech import drop_learner_voice, example_sentences, speaks_as_learner
from maic_cli.ui.export import classroom_to_markdown
from maic_cli.ui.export_html import classroom_to_html
from tests.helpers import action, agent, decision, reply

CLASS = {a.id: a for a in (
    agent("teacher", "teacher", "Ms. Rivera", allowed_actions=["wb_open", "wb_draw_text", "wb_draw_latex"]),
    agent("mia", "student", "Mia"))}
PROFILE = UserProfile(nickname="Ana", bio="Python beginner")


def scripted(agent_replies: list[str | ScriptedReply]) -> tuple[FunctionLLM, Iterator[str | ScriptedReply]]:
    """The teacher is picked first, then the round ends; agents get ``agent_replies`` in order."""
    replies = iter(agent_replies)

    def respond(request: LLMRequest) -> str | ScriptedReply:
        if request.purpose == "director":
            spoken = request.facts.spoken if request.facts else ()
            return decision("END" if spoken else "teacher")
        return next(replies)

    return FunctionLLM(respond), replies


def play(llm: FunctionLLM, question: str = "Why does it rain?", *, compact: bool = True,
         classroom: Classroom | None = None) -> tuple[Classroom, list]:
    classroom = classroom or Classroom()
    classroom.add_learner_message(question)
    events: list = []
    asyncio.run(run_round(classroom, TurnConfig(agent_ids=list(CLASS), compact_prompts=compact), llm,
                          registry=CLASS, profile=PROFILE, on_event=events.append))
    return classroom, events


def spoken(events: list) -> str:
    return "".join(e.content for e in events if e.type == "text_delta")


def agent_calls(llm: FunctionLLM) -> list[LLMRequest]:
    return [c for c in llm.calls if c.purpose == "agent"]


# -- junk ---------------------------------------------------------------------------------------

def test_a_small_models_reply_is_cut_before_the_sentence_with_junk_and_nothing_after_is_used() -> None:
    llm, left = scripted([reply("Rain falls when droplets grow heavy.",
                                "See /Users/ana/.Miscellaneous for notes.", "Clouds are cold.",
                                action("wb_draw_text", content="droplets grow heavy"))])
    classroom, events = play(llm)
    assert spoken(events) == "Rain falls when droplets grow heavy."
    assert not [e for e in events if e.type == "action"]  # the drawing came after the cut
    assert classroom.messages[-1].text == "Rain falls when droplets grow heavy."
    assert next(left, None) is None


def test_a_reply_that_opens_with_junk_is_asked_again_and_the_junk_is_never_shown() -> None:
    junk = reply("#20f3ab5aef12-shakir@yahoo.com/changetexts (A) wiBwLlGvMn.")
    llm, _ = scripted([junk, reply("Rain comes from clouds full of heavy droplets.")])
    _, events = play(llm)
    assert spoken(events) == "Rain comes from clouds full of heavy droplets."
    assert len(agent_calls(llm)) == 2
    assert sum(1 for e in events if e.type == "agent_start") == 1


def test_any_models_links_are_shown_inert_even_split_across_deltas() -> None:
    text = "Read https://docs.python.org/3/tutorial or write to ana@school.edu today."
    llm, _ = scripted([ScriptedReply(reply=reply(text), chunk_size=3)])
    classroom, events = play(llm, compact=False)
    inert = "Read https[:]//docs[.]python[.]org/3/tutorial or write to ana[at]school[.]edu today."
    assert spoken(events) == inert and classroom.messages[-1].text == inert
    assert all("://" not in e.content and "@" not in e.content for e in events if e.type == "text_delta")
    markdown = classroom_to_markdown(classroom, CLASS)
    html = classroom_to_html(classroom, CLASS)
    for export in (markdown, html):
        assert "https://docs" not in export and "ana@school" not in export and "href" not in export.split("<body")[-1]


def test_board_text_is_defanged_for_any_model() -> None:
    llm, _ = scripted([reply("The docs say so.", action("wb_draw_text", content="docs: www.python.org"))])
    classroom, events = play(llm, compact=False)
    [drawn] = [e for e in events if e.type == "action"]
    assert drawn.params["content"] == "docs: www[.]python[.]org"
    assert classroom.store.whiteboard[0].params["content"] == "docs: www[.]python[.]org"


# -- board content on small models ----------------------------------------------------------------

def test_a_small_model_draws_only_what_the_class_said() -> None:
    llm, _ = scripted([reply("Warm air rises and cools, so water vapour condenses into droplets.",
                             action("wb_draw_text", content="vapour condenses into droplets"),
                             action("wb_draw_text", content="changetexts quantum shakir"))])
    _, events = play(llm)
    drawn = [e.params["content"] for e in events if e.type == "action" and e.action_name == "wb_draw_text"]
    assert drawn == ["vapour condenses into droplets"]
    done = [e for e in events if e.type == "done" and e.outcome and e.outcome.kind == "agent"]
    assert done[0].dropped_actions == 1


def test_a_small_model_may_draw_from_the_learners_question() -> None:
    llm, _ = scripted([reply("It is about gravity.", action("wb_draw_text", content="why does rain fall"))])
    _, events = play(llm, "Why does rain fall down?")
    assert [e.params["content"] for e in events if e.type == "action" and e.action_name == "wb_draw_text"] == [
        "why does rain fall"]


# -- a prompt's own examples ------------------------------------------------------------------------

def test_the_compact_prompts_example_sentences_are_found_in_the_rendered_prompt() -> None:
    system = build_agent_prompt(CLASS["teacher"], ["wb_open"], PROFILE, compact=True)
    examples = example_sentences(system)
    assert any(s.startswith("Light bends when it leaves water") for s in examples)
    full = build_agent_prompt(CLASS["teacher"], ["wb_draw_text"], PROFILE)
    assert any("Your eye assumes the light travelled" in s for s in example_sentences(full))


def test_an_example_sentence_from_the_prompt_is_never_said() -> None:
    example = ("Light bends when it leaves water, so your eye sees the spoon in the wrong place. "
               "That is why it looks broken.")
    fresh = "Rain falls when tiny droplets in a cloud join and grow too heavy to float."
    llm, _ = scripted([reply(example), reply(fresh)])
    _, events = play(llm)
    assert spoken(events) == fresh and len(agent_calls(llm)) == 2


def test_an_example_sentence_later_in_a_reply_is_left_out() -> None:
    start = "Rain falls when tiny droplets in a cloud join and grow too heavy to float."
    example = "Light bends when it leaves water, so your eye sees the spoon in the wrong place."  # the teacher's
    llm, _ = scripted([reply(start + " " + example)])
    _, events = play(llm)
    assert example not in spoken(events) and start in spoken(events)


# -- speaking as the learner ------------------------------------------------------------------------

def test_a_teacher_speaking_as_the_learner_is_asked_again() -> None:
    bad = "I'm a Python beginner, so can you explain for loops to me step by step?"
    good = "A for loop repeats the same steps once for each item in a list."
    llm, _ = scripted([reply(bad), reply(good)])
    _, events = play(llm, "How does a for loop work?")
    assert spoken(events) == good and len(agent_calls(llm)) == 2


def test_speaks_as_learner_reads_the_role_the_name_and_self_address() -> None:
    assert speaks_as_learner("As the learner, I think loops are hard.", "student")
    assert speaks_as_learner("I'm a complete beginner here.", "teacher")
    assert speaks_as_learner("Thank you for explaining, teacher!", "assistant")
    assert speaks_as_learner("Ms. Rivera, how do loops work?", "teacher", own_name="Ms. Rivera")
    assert speaks_as_learner("Hi, I'm Ana and loops confuse me.", "student", learner_name="Ana")
    assert speaks_as_learner("I am a python beginner too.", "student", learner_bio="Python beginner")
    assert not speaks_as_learner("I'm Ms. Rivera, your teacher today.", "teacher", own_name="Ms. Rivera")
    assert not speaks_as_learner("I'm new to this too, Ana!", "student", learner_name="Ana")  # a student may be new
    assert not speaks_as_learner("Ana, can you tell me what a loop repeats?", "teacher", own_name="Ms. Rivera",
                                 learner_name="Ana")
    assert not speaks_as_learner("Many beginners find loops hard at first.", "teacher")


# -- a reply dropped whole takes no turn -------------------------------------------------------------

def test_a_reply_dropped_whole_takes_no_turn_anywhere() -> None:
    junk = reply("See /Users/ana/.Miscellaneous first.")
    llm, _ = scripted([junk, junk, junk, junk])
    classroom, events = play(llm)
    assert not [e for e in events if e.type in ("agent_start", "agent_end", "text_delta")]
    assert [m.role for m in classroom.messages] == ["user"]  # no empty card in the view or the exports
    assert "Ms. Rivera" not in classroom_to_markdown(classroom, CLASS)
    assert "Ms. Rivera" not in classroom_to_html(classroom, CLASS)
    log = RoundLog(index=0, learner="Why does it rain?")
    for event in events:
        log.observe(event, CLASS)
    assert (log.agent_turns, log.empty_turns, log.speakers, log.dropped_replies) == (0, 0, [], 2)
    dropped = [e for e in events if e.type == "done" and e.reply_dropped]
    assert len(dropped) == 2 and all(not e.director_state.agent_responses for e in dropped)


# -- fuzz: the checks read untrusted model text ------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.sampled_from(["teacher", "assistant", "student"]), st.text(max_size=20),
       st.text(max_size=20))
def test_fuzz_the_speech_checks_never_fail_and_only_remove_text(text: str, role: str, own: str, learner: str) -> None:
    kept, dropped = drop_learner_voice(text, role, own, learner, "Python beginner")
    assert len(kept) <= len(text) and dropped >= 0
    cut = cut_before_junk(text)
    assert cut is None or text.startswith(cut)
    assert all(isinstance(s, str) for s in example_sentences(text))


def test_part_of_an_example_sentence_is_an_echo_and_is_left_out() -> None:
    assistant = agent("sam", "assistant", "Sam")
    klass = {"teacher": CLASS["teacher"], "sam": assistant}

    def respond(request: LLMRequest) -> str:
        if request.purpose == "director":
            spoken = request.facts.spoken if request.facts else ()
            return decision({0: "teacher", 1: "sam"}.get(len(spoken), "END"))
        if request.agent_id == "teacher":
            return reply("Rain falls when droplets in a cloud grow heavy.")
        return reply("Puddles form when the ground is full of water. You can try it at lunch.")

    llm = FunctionLLM(respond)
    classroom = Classroom()
    classroom.add_learner_message("Why does it rain?")
    events: list = []
    asyncio.run(run_round(classroom, TurnConfig(agent_ids=list(klass), compact_prompts=True), llm,
                          registry=klass, profile=PROFILE, on_event=events.append))
    said = classroom.messages[-1]
    assert said.agent_id == "sam" and said.text == "Puddles form when the ground is full of water."


def test_a_sentence_said_twice_in_one_reply_is_said_once() -> None:
    looped = ("The answer is 1/2. A fraction has two numbers, the numerator and the denominator. "
              "The answer is 1/2. A fraction has two numbers: the numerator and the denominator. The answer is 1/2.")
    llm, _ = scripted([reply(looped)])
    _, events = play(llm, "What is a fraction?")
    assert spoken(events) == "The answer is 1/2. A fraction has two numbers, the numerator and the denominator."
