"""``maic lesson new`` for the built-in small model: its fixed lesson shapes and the grammar each step
is decoded with."""

from __future__ import annotations

import json

import pytest

from maic_cli.authoring.schemas import COMPACT, quiz_schema, script_schema
from tests.lesson_steps import (
    REQUIREMENTS,
    generate,
    replies,
)

# -- the small model's shapes ------------------------------------------------------------------------

def test_compact_shapes_fix_the_lecture_and_put_the_right_answer_in_varying_places() -> None:
    steps = script_schema(["idea", "points", "picture"], COMPACT)["properties"]["steps"]["items"]
    assert [next(iter(step["properties"])) for step in steps] == ["spotlight", "say", "spotlight", "say"]
    assert [step["properties"]["spotlight"]["const"] for step in steps[::2]] == ["idea", "points"]
    question = quiz_schema(COMPACT)["properties"]["questions"]["items"][0]
    assert list(question["properties"]) == ["type", "question", "right", "wrong", "explanation"]
    quiz = {"questions": [{"type": "single", "question": "Which gas do plants take in?", "right": "Carbon dioxide",
                           "wrong": ["Helium", "Neon"], "explanation": "Leaves take it in."},
                          {"type": "single", "question": "What gives the energy?", "right": "Light",
                           "wrong": ["Soil", "Wind"], "explanation": "Light powers it."}]}
    result, _ = generate(replies((5, json.dumps(quiz))))
    first, second = result.lesson.scenes[2].questions
    assert first.options[next(iter(first.key()))] == "Carbon dioxide"
    assert second.options[next(iter(second.key()))] == "Light"
    assert first.answer != second.answer  # the right answer is not always in the same place


# -- the offline model's grammar -------------------------------------------------------------------------

def test_the_offline_grammar_of_every_compact_step_parses_and_keeps_the_schemas_order() -> None:
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_grammar import LlamaGrammar

    from maic_cli.authoring import schemas as s
    from maic_cli.llm.local import speech_gbnf

    schemas = [s.requirements_schema(COMPACT), s.outline_schema(["slide", "quiz"], 2, COMPACT),
               s.elements_schema(COMPACT), script_schema(["idea", "points"], COMPACT), quiz_schema(COMPACT),
               s.discussion_schema(["curious_student"], COMPACT)]
    for schema in schemas:
        LlamaGrammar.from_string(speech_gbnf(schema), verbose=False)
    quiz = speech_gbnf(quiz_schema(COMPACT))
    item = next(line for line in quiz.splitlines() if line.startswith("questions-tuple-0 ::="))
    assert item.index("-question-kv") < item.index("-right-kv") < item.index("-wrong-kv")  # not alphabetical
    # a question: prose of at most 160 characters; an option: a line of at most 60 that starts with a letter
    assert 'questions-tuple-0-question ::= "\\"" maic-letter maic-speech-char{0,158} maic-speech-end "\\""' in quiz
    assert 'questions-tuple-0-right ::= "\\"" maic-letter maic-speech-char{0,59} "\\""' in quiz
    assert "maic-letter ::= [A-Za-z" in quiz


def test_the_class_schemas_grammar_is_unchanged_by_the_unsorted_conversion() -> None:
    """The lesson steps need the schema's own property order; the class's schemas name every key in
    PROPERTY_ORDER, so their grammar is the one the sorted conversion gave."""
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from maic_cli.engine.schemas import agent_reply_schema, director_reply_schema
    from maic_cli.llm import local

    for schema in (director_reply_schema(["teacher", "mia"]), agent_reply_schema(["wb_open", "spotlight"], True),
                   agent_reply_schema(["wb_draw_text"])):
        marked = local._mark_speech(schema)
        sorted_grammar = json_schema_to_gbnf(json.dumps(marked, sort_keys=True), prop_order=list(local.PROPERTY_ORDER))
        assert json_schema_to_gbnf(json.dumps(marked), prop_order=list(local.PROPERTY_ORDER)) == sorted_grammar


def test_a_small_models_whole_lesson_follows_the_fixed_shapes() -> None:
    outline = {"scenes": [{"kind": "slide", "title": "Light", "goal": "Why light.", "points": ["Light", "Sun"]},
                          {"kind": "slide", "title": "Air", "goal": "Why air.", "points": ["Air", "Gas"]},
                          {"kind": "quiz", "title": "Check", "goal": "Check.", "points": ["Light", "Air"]}]}
    elements = {"elements": [{"type": "text", "id": "idea", "content": "Plants need %s."},
                             {"type": "bullets", "id": "points", "items": ["One", "Two"]},
                             {"type": "image", "id": "picture", "content": "A leaf."}]}
    script = {"steps": [{"spotlight": "idea"}, {"say": "Look here."}, {"spotlight": "points"}, {"say": "And here."}]}
    quiz = {"questions": [{"type": "single", "question": "What do plants need?", "right": "Light",
                           "wrong": ["Sand", "Noise"], "explanation": "Light powers it."},
                          {"type": "single", "question": "What gas?", "right": "Carbon dioxide",
                           "wrong": ["Helium", "Neon"], "explanation": "Leaves take it in."}]}
    items = [json.dumps(REQUIREMENTS), json.dumps(outline),
             json.dumps(elements).replace("%s", "light"), json.dumps(script),
             json.dumps(elements).replace("%s", "air"), json.dumps(script), json.dumps(quiz)]
    result, llm = generate(items, limits=COMPACT)
    assert [s.type for s in result.lesson.scenes] == ["slide", "slide", "quiz"]
    kinds = llm.calls[1].response_schema["properties"]["scenes"]["items"]  # type: ignore[index]
    assert [k["properties"]["kind"]["const"] for k in kinds] == ["slide", "slide", "quiz"]
    quiz_prompt = llm.calls[6].messages[-1]["content"]
    assert "question 1 checks: Plants need light." in quiz_prompt
    assert "question 2 checks: Plants need air." in quiz_prompt
    assert all("maic" not in call.messages[-1]["content"] for call in llm.calls)  # no template leaks
