"""Speech hygiene for small models, without the model.

Whole sentences only (a reply cut by the token cap ends at its last full sentence, and
views never see the unfinished one), one more try when a reply copies an earlier one,
and the offline grammar that keeps speech prose.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.round import run_round
from maic_cli.engine.schemas import SPEECH_MARK, agent_reply_schema
from maic_cli.engine.turn import RETRY_TEMPERATURE
from maic_cli.llm import local
from maic_cli.llm.port import LLMRequest
from maic_cli.llm.scripted import FunctionLLM, ScriptedReply
from maic_cli.replies.speech import SentenceGate, drop_copied_sentences, repeats_earlier
from tests.helpers import action, agent, decision, reply

CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T", allowed_actions=["wb_open", "wb_draw_text"]),
                           agent("mia", "student", "Mia"))}
ANSWER = ("The Earth is tilted, so each half gets more direct sunlight for part of the year. "
          "That half has summer. Where do you feel it most?")


def feed_all(gate: SentenceGate, text: str, size: int) -> list[str]:
    shown = [gate.feed(text[i:i + size]) for i in range(0, len(text), size)]
    return [*shown, gate.finish()]


@pytest.mark.parametrize("size", [1, 3, 7, 100])
def test_gate_never_shows_an_unfinished_sentence(size: int) -> None:
    gate = SentenceGate()
    shown = feed_all(gate, "Pi is about 3.14 here. It never ends! So we round it and", size)
    released = ""
    for piece in shown:
        released += piece
        assert released == "" or released.rstrip()[-1] in ".!?", released
    assert released == "Pi is about 3.14 here. It never ends!"


@pytest.mark.parametrize(("streamed", "shown"), [
    ("Light bends. It slows down in wat", "Light bends."),
    ("Is it 3.5 metres? Yes! And then", "Is it 3.5 metres? Yes!"),
    ('He said "stop." Then he', 'He said "stop."'),
    ("Already whole.  ", "Already whole."),
])
def test_gate_ends_a_reply_at_its_last_full_sentence(streamed: str, shown: str) -> None:
    assert "".join(feed_all(SentenceGate(), streamed, 2)) == shown


def test_gate_releases_a_finished_tail_and_a_lone_fragment() -> None:
    assert "".join(feed_all(SentenceGate(), "One. Two?", 2)) == "One. Two?"
    assert "".join(feed_all(SentenceGate(), "just a fragment", 4)) == "just a fragment"


def test_repeats_earlier_catches_a_near_copy_not_a_new_answer() -> None:
    copy = ANSWER.replace("more direct", "direct").replace("Where", "When")
    assert repeats_earlier(copy, [ANSWER])
    assert repeats_earlier(ANSWER[:70], ["Something else entirely was said first.", ANSWER])  # an opening
    middle = "Great question, Sam, let us see. " + ANSWER  # a copy of one of its sentences
    assert repeats_earlier("The Earth is tilted, so each half gets direct sunlight for part of the year.", [middle])
    assert not repeats_earlier("Ice floats because it is less dense than the water under it.", [ANSWER])
    assert not repeats_earlier("Good question, Sam.", ["Good question, Sam."])  # too short to be a copy


def test_an_opening_sentence_copied_whole_is_a_copy_even_with_a_stray_semicolon() -> None:
    earlier = ("In Python, for loops can be used to iterate over a sequence (such as lists or strings) and "
               "perform specific tasks. For example: I like apple; banana.")
    reply = ("In Python, for loops can be used to iterate over a sequence (such as lists or strings) and "
             "perform specific tasks.; The output of the first line is: I like apple, and then banana and cherry.")
    assert repeats_earlier(reply, [earlier])  # seen from the offline model in a lesson
    kept, dropped = drop_copied_sentences(reply, [earlier])
    assert dropped == 1 and kept.strip().startswith("The output of the first line")
    assert not repeats_earlier("Good question. Loops repeat the same lines for each item, one at a time.", [earlier])


def scripted_class(agent_replies: list[str | ScriptedReply]) -> tuple[FunctionLLM, Iterator[str | ScriptedReply]]:
    """The teacher answers every question, then the round ends; agents get ``agent_replies`` in order."""
    replies = iter(agent_replies)

    def respond(request: LLMRequest) -> str | ScriptedReply:
        if request.purpose == "director":
            spoken = request.facts.spoken if request.facts else ()
            return decision("END" if spoken else "teacher")
        return next(replies)

    return FunctionLLM(respond), replies


def play(classroom: Classroom, llm: FunctionLLM, question: str, compact: bool = True) -> list:
    events: list = []
    classroom.add_learner_message(question)
    asyncio.run(run_round(classroom, TurnConfig(agent_ids=list(CLASS), compact_prompts=compact), llm,
                          registry=CLASS, on_event=events.append))
    return events


def deltas(events: list) -> list[str]:
    return [e.content for e in events if e.type == "text_delta"]


def test_a_reply_cut_by_the_cap_ends_at_its_last_sentence_and_keeps_its_raw_text() -> None:
    cut = reply("Seasons come from the tilt. The north leans toward the Sun in June, so the da")[:-3]
    llm, _ = scripted_class([ScriptedReply(reply=cut, chunk_size=3)])
    classroom = Classroom()
    events = play(classroom, llm, "Why do we have seasons?")
    assert "".join(deltas(events)) == "Seasons come from the tilt."
    assert classroom.messages[-1].text == "Seasons come from the tilt."
    assert classroom.messages[-1].raw_reply == cut  # as the model wrote it
    assert all(not d.rstrip() or d.rstrip()[-1] == "." for d in deltas(events))


def test_a_full_model_streams_everything_as_it_comes() -> None:
    cut = reply("Seasons come from the tilt. The north leans toward the Sun in June, so the da")[:-3]
    llm, _ = scripted_class([cut])
    events = play(Classroom(), llm, "Why do we have seasons?", compact=False)
    assert "".join(deltas(events)).endswith("so the da")


def test_a_finished_sentence_is_shown_before_the_action_that_follows_it() -> None:
    llm, _ = scripted_class([reply("Look at the board.", action("wb_open"), "Here is the tilt.")])
    events = [e for e in play(Classroom(), llm, "Why?") if e.type in ("text_delta", "action")]
    assert [(e.type, getattr(e, "content", getattr(e, "action_name", ""))) for e in events] == [
        ("text_delta", "Look at the board."), ("action", "wb_open"), ("text_delta", " Here is the tilt.")]


def test_a_copy_of_an_earlier_answer_is_asked_again_hotter_and_never_shown() -> None:
    fresh = "Ice floats because frozen water is less dense than liquid water."
    llm, left = scripted_class([reply(ANSWER), reply(ANSWER), reply(fresh)])
    classroom = Classroom()
    play(classroom, llm, "Why do we have seasons?")
    events = play(classroom, llm, "Why does ice float?")
    assert "".join(deltas(events)) == fresh
    assert classroom.messages[-1].text == fresh
    agent_calls = [c for c in llm.calls if c.purpose == "agent"]
    assert len(agent_calls) == 3 and next(left, None) is None
    assert agent_calls[2].temperature == RETRY_TEMPERATURE
    assert agent_calls[2].messages == agent_calls[1].messages  # the same prompt: all of it cached
    assert sum(1 for e in events if e.type == "agent_start") == 1


def test_a_second_copy_is_not_asked_again_but_loses_its_copied_sentences() -> None:
    llm, _ = scripted_class([reply(ANSWER), reply(ANSWER), reply(ANSWER)])
    classroom = Classroom()
    play(classroom, llm, "Why do we have seasons?")
    play(classroom, llm, "Why does ice float?")
    assert classroom.messages[-1].text == "That half has summer. Where do you feel it most?"  # too short to judge
    assert sum(1 for c in llm.calls if c.purpose == "agent") == 3


def test_the_speech_marker_is_the_one_the_offline_client_reads() -> None:
    assert local.SPEECH_MARK == SPEECH_MARK
    schema = agent_reply_schema(["wb_open", "wb_draw_text"], compact=True)
    assert SPEECH_MARK in json.dumps(schema)
    assert SPEECH_MARK not in json.dumps(agent_reply_schema(["wb_open"]))  # big models: plain strings


GRAMMAR_CHECK = """
import json, sys
from llama_cpp.llama_grammar import LlamaGrammar
from maic_cli.engine.schemas import agent_reply_schema
from maic_cli.llm.local import speech_gbnf
gbnf = speech_gbnf(agent_reply_schema(["wb_open", "wb_draw_text", "spotlight"], compact=True))
LlamaGrammar.from_string(gbnf, verbose=False)
print(json.dumps(gbnf))
"""


def test_the_offline_grammar_parses_and_narrows_speech_to_prose() -> None:
    pytest.importorskip("llama_cpp")
    # In a subprocess: a bad grammar once crashed llama.cpp's parser (a segfault, not an error).
    out = subprocess.run([sys.executable, "-c", GRAMMAR_CHECK], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    gbnf = json.loads(out.stdout.strip().splitlines()[-1])
    rules = dict(line.split(" ::= ", 1) for line in gbnf.splitlines() if " ::= " in line)
    speech_users = [name for name, body in rules.items() if "maic-speech " in body and name.endswith("-content")]
    assert speech_users and not any("params" in name for name in speech_users)  # speech only, not board text
    assert rules["maic-speech-end"] == "[.!?]"
    for forbidden in ('"', "\\\\", "{}", "\\[\\]", "\\x00-\\x1F"):
        assert forbidden in rules["maic-speech-char"]


def test_a_dropped_stream_keeps_its_finished_sentences_even_while_the_opening_was_checked() -> None:
    said = reply("Ice is lighter than water. It floats because its molecules sit far ap")
    llm, _ = scripted_class([reply(ANSWER), ScriptedReply(reply=said, disconnect_after=len(said) - 5)])
    classroom = Classroom()
    play(classroom, llm, "Why do we have seasons?")
    events = play(classroom, llm, "Why does ice float?")
    assert "".join(deltas(events)) == "Ice is lighter than water."
    assert [e.type for e in events].count("error") == 1


@pytest.mark.parametrize(("streamed", "shown"), [
    ('"Light bends in water. So the spoon looks broken."', "Light bends in water. So the spoon looks broken."),
    ('"Light bends in water.', "Light bends in water."),
    ('Light bends. It looks "broken."', 'Light bends. It looks "broken."'),  # a paired quote stays
    ('"Eureka!" he said.', '"Eureka!" he said.'),
])
def test_a_stray_quote_around_the_reply_is_dropped(streamed: str, shown: str) -> None:
    assert "".join(feed_all(SentenceGate(), streamed, 3)) == shown


def test_a_sentence_copied_from_an_earlier_reply_is_left_out() -> None:
    # As the offline model did: a student's question, then the teacher's answer word for word.
    opening = "I wonder how the tilt changes the length of the day in June?"
    said = f"{opening} " + ANSWER.split(". ")[0] + ". And what about the poles in winter?"
    llm, _ = scripted_class([reply(ANSWER), reply(said)])
    classroom = Classroom()
    play(classroom, llm, "Why do we have seasons?")
    events = play(classroom, llm, "Tell me more.")
    assert "".join(deltas(events)) == f"{opening} And what about the poles in winter?"
    assert classroom.messages[-1].raw_reply == reply(said)



def test_a_huge_reply_keeps_only_bounded_state_while_it_streams() -> None:
    """The copy check reads only the opening and the gate scans only new text: a long reply (a hostile
    server ignores max_tokens) costs time linear in its length, not quadratic."""
    from maic_cli.engine.agent_reply import HEARD_CHARS, ReplyStream

    stream = ReplyStream(agent("teacher", "teacher"), [], "m", gated=True, earlier=["An earlier answer."])
    stream.feed('[{"type": "text", "content": "')
    for _ in range(2_000):
        stream.feed("words without any sentence end ")
    assert len(stream._heard) <= HEARD_CHARS
    stream.feed('and then one. "')
    stream.feed("]")
    stream.finish()
    assert stream.content.endswith("and then one.")  # released at its sentence end, nothing after it


def test_the_gate_finds_a_sentence_end_split_across_deltas() -> None:
    gate = SentenceGate()
    assert gate.feed("x" * 500 + " Done.") == ""  # no whitespace after the "." yet
    assert gate.feed(" Next") == "x" * 500 + " Done."
