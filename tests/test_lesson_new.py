"""``maic lesson new``, the pipeline: generation on scripted replies, repairs, fix-ups, retries and
failures, limits on what a model sends, and one run through litellm to a loopback server."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from maic_cli.authoring.generation import GenerationError, Initiator, LessonBrief, generate_lesson, read_json_object
from maic_cli.authoring.schemas import COMPACT
from maic_cli.cli.app import app
from maic_cli.lessons.lesson import DiscussionScene, QuizScene, SlideScene
from maic_cli.llm.port import LLMRequest, StreamPiece
from maic_cli.llm.scripted import ScriptedLLM
from maic_cli.store.lessons import load_lesson
from maic_cli.testing.openai_server import LoopbackOpenAIServer
from tests.lesson_steps import DISCUSSION, ELEMENTS, OUTLINE, QUIZ, REQUIREMENTS, SCRIPT, generate, new, replies

# -- a whole lesson ------------------------------------------------------------------------------

def test_a_whole_lesson_from_scripted_replies_is_written_and_loads(tmp_path: Path) -> None:
    result, out = new(tmp_path, replies())
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == str(out)
    lesson = load_lesson(out)
    assert lesson.title == REQUIREMENTS["title"] and lesson.level == "beginner" and lesson.language == "English"
    slide, talk, quiz = lesson.scenes
    assert isinstance(slide, SlideScene) and isinstance(talk, DiscussionScene) and isinstance(quiz, QuizScene)
    assert slide.title == "What a plant needs" and slide.id == "what-a-plant-needs"
    assert [(e.id, e.type) for e in slide.elements] == [("question", "text"), ("inputs", "bullets"),
                                                        ("parts", "table")]
    assert slide.elements[1].items == ["Light", "Water", "Carbon dioxide"]
    assert [s.model_dump(exclude_none=True) for s in slide.script] == SCRIPT["steps"]
    assert (talk.topic, talk.initiator) == (DISCUSSION["topic"], "curious_student")
    assert [(q.type, q.answer, q.points) for q in quiz.questions] == [("single", ["B"], 1), ("multiple", ["A", "B"], 2),
                                                                      ("short", [], 2)]
    assert quiz.questions[2].rubric == "Light gives the energy."
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# A lesson written by maic lesson new on ")
    assert "# topic: photosynthesis\n" in text and f"# model: scripted:{tmp_path}" in text
    assert "Photosynthèse → how plants eat" in text  # unicode kept, not escaped
    assert "{" not in text and "\n  - type: slide\n" in text  # block style, list items indented
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert "wrote" in result.stderr and "3 scenes (1 slide, 1 quiz, 1 discussion)" in result.stderr
    assert "6 model calls" in result.stderr and "tokens" in result.stderr
    assert [p.name for p in out.parent.iterdir()] == ["lesson.yaml"]  # no temp file left


def test_every_step_is_a_structured_generate_call() -> None:
    result, llm = generate(replies(), initiators=(Initiator("curious_student", "Mia"), Initiator("class_clown", "Leo")))
    assert result.calls == 6 and llm.remaining == 0
    assert all(call.purpose == "generate" and call.response_schema for call in llm.calls)
    script_call = llm.calls[3]
    assert "question (text): Where does a tree's mass come from?" in script_call.messages[-1]["content"]
    targets = script_call.response_schema["properties"]["steps"]["items"]["anyOf"][1]  # type: ignore[index]
    assert targets["properties"]["spotlight"]["enum"] == ["question", "inputs", "parts"]
    discussion_call = llm.calls[4]
    assert discussion_call.response_schema["properties"]["initiator"]["enum"] == [  # type: ignore[index]
        "curious_student", "class_clown"]
    assert "curious_student (Mia), class_clown (Leo)" in discussion_call.messages[-1]["content"]
    quiz_prompt = llm.calls[5].messages[-1]["content"]  # the quiz is written from what the slides held and said
    assert "What a plant needs: Where does a tree's mass come from?; - Light; - Water" in quiz_prompt
    assert "The teacher said: A tree weighs tonnes. Where does that come from? Mostly from the air." in quiz_prompt


def test_progress_names_every_step_in_order() -> None:
    seen: list[tuple[str, str, int, int | None]] = []
    asyncio.run(generate_lesson(LessonBrief(topic="photosynthesis", scenes=3), ScriptedLLM(replies()),
                                progress=lambda p: seen.append((p.kind, p.step, p.number, p.total))))
    done = [(step, number, total) for kind, step, number, total in seen if kind == "done"]
    assert done == [("requirements", 1, None), ("outline", 2, None), ("scene 1/3 (slide): elements", 3, 6),
                    ("scene 1/3 (slide): lecture", 4, 6), ("scene 2/3 (discussion): prompt", 5, 6),
                    ("scene 3/3 (quiz): questions", 6, 6)]


def test_the_generation_templates_can_be_overridden_like_any_prompt() -> None:
    from maic_cli.engine.prompt_set import PromptSet, TemplateSource

    custom = PromptSet.builtin().with_overrides(
        {"generation/system.j2": TemplateSource("Write about {{ topic }} for {{ level }}.", "mine/system.j2")}, "mine")
    llm = ScriptedLLM(replies())
    asyncio.run(generate_lesson(LessonBrief(topic="photosynthesis", scenes=3, level="adults"), llm, prompts=custom))
    assert {call.messages[0]["content"] for call in llm.calls} == {"Write about photosynthesis for adults."}


# -- repaired, fixed, retried ---------------------------------------------------------------------

def test_a_broken_json_step_is_repaired() -> None:
    broken = 'Here it is:\n```json\n{"scenes": [' + ", ".join(json.dumps(s) for s in OUTLINE["scenes"]) + ",]\n```"
    assert json.loads(json.dumps(OUTLINE))  # the good one parses; the broken one does not:
    with pytest.raises(ValueError):
        json.loads(broken[broken.index("{"):].rstrip("`\n"))
    result, llm = generate(replies((1, broken)))
    assert result.repaired == 1 and result.retries == 0 and llm.remaining == 0
    assert [s.title for s in result.lesson.scenes] == ["What a plant needs", "Plants in the dark", "Check"]


def test_read_json_object_finds_the_object_in_prose_and_repairs_a_cut_one() -> None:
    assert read_json_object('Sure! {"a": 1} trailing') == ({"a": 1}, False)
    assert read_json_object('{"a": [1, 2') == ({"a": [1, 2]}, True)
    assert read_json_object("no json here") == (None, False)
    assert read_json_object('{"a": ' + "{" * 30_000) == (None, False)  # deep junk is not handed to json-repair


def test_safe_fix_ups_are_made_and_counted() -> None:
    elements = {"elements": [{"type": "text", "id": "idea", "content": "One."},
                             {"type": "text", "id": "idea", "content": "Two."},
                             {"type": "bullets", "id": "key points", "items": ["a", "b"]}]}
    script = {"steps": [{"spotlight": "idea_2"}, {"say": "Look.", "laser": "key_points"}, {"spotlight": "nowhere"}]}
    quiz = {"questions": [{"type": "single", "question": "Which?", "options": ["A) one", "B) two"], "answer": "b",
                           "explanation": "Two it is."},
                          {"type": "single", "question": "Which one?", "options": ["x", "y"], "answer": "y",
                           "explanation": "Y it is."}]}
    talk = {**DISCUSSION, "initiator": "headmaster"}
    result, _ = generate(replies((2, json.dumps(elements)), (3, json.dumps(script)), (4, json.dumps(talk)),
                                 (5, json.dumps(quiz))), initiators=())
    slide, discussion, check = result.lesson.scenes
    assert [e.id for e in slide.elements] == ["idea", "idea_2", "key_points"]
    assert [s.model_dump(exclude_none=True) for s in slide.script] == [
        {"spotlight": "idea_2"}, {"laser": "key_points"}, {"say": "Look."}]
    assert check.questions[0].options == ["one", "two"] and check.questions[0].answer == ["B"]
    assert check.questions[1].answer == ["B"]  # the option's text, turned into its letter
    assert discussion.initiator is None  # no class given: the player's default opens it
    assert result.fixes == {"clashing element ids renamed": 1, "element ids made simple": 1,
                            "script steps split": 1, "script steps naming a missing element dropped": 1,
                            "letter prefixes taken off options": 2, "answer letters upper-cased": 1,
                            "answers given as text turned into letters": 1, "unknown discussion initiators replaced": 1}
    known, _ = generate(replies((4, json.dumps(talk))), initiators=(Initiator("mia", "Mia"),))
    assert known.lesson.scenes[1].initiator == "mia"


def test_elements_beyond_the_limit_are_dropped_and_an_empty_one_is_a_problem() -> None:
    from maic_cli.authoring.fixes import Fixes, StepProblem, slide_elements

    fixes = Fixes()
    many = [{"type": "text", "id": f"e{n}", "content": f"Fact {n}."} for n in range(7)]
    assert [e.id for e in slide_elements(many, 5, fixes)] == ["e0", "e1", "e2", "e3", "e4"]
    assert fixes == {"slide elements beyond the limit dropped": 2}
    with pytest.raises(StepProblem, match=r"elements\.1: the bullets element 'list' is empty"):
        slide_elements([many[0], {"type": "bullets", "id": "list", "items": []}], 5, fixes)


def test_an_invalid_reply_is_retried_and_the_model_is_told_what_was_wrong() -> None:
    silent = json.dumps({"steps": [{"spotlight": "question"}, {"laser": "inputs"}]})
    result, llm = generate(replies((3, [silent, json.dumps(SCRIPT)])))
    assert result.retries == 1 and result.calls == 7 and llm.remaining == 0
    first, retry = llm.calls[3], llm.calls[4]
    assert retry.messages[:2] == first.messages
    assert retry.messages[2] == {"role": "assistant", "content": silent}
    assert "the script has no step with \"say\"" in retry.messages[3]["content"]
    assert "corrected" in retry.messages[3]["content"]
    assert len(result.lesson.scenes[0].script) == 4


def test_a_repeated_question_is_dropped_and_counted() -> None:
    again = {"questions": [QUIZ["questions"][0], {**QUIZ["questions"][0], "question": " Where does most of A "
                                                                                    "tree's mass come from?"},
                           QUIZ["questions"][2]]}
    result, _ = generate(replies((5, json.dumps(again))))
    assert [q.id for q in result.lesson.scenes[2].questions] == ["q1", "q3"]
    assert result.fixes == {"repeated questions dropped": 1} and result.retries == 0


def test_a_small_model_is_asked_again_a_little_warmer() -> None:
    llm = ScriptedLLM(["no", "json", "here"])
    with pytest.raises(GenerationError, match="step 'requirements': after 3 replies"):
        asyncio.run(generate_lesson(LessonBrief(topic="x", limits=COMPACT), llm))
    assert [round(c.temperature or 0, 2) for c in llm.calls] == [0.3, 0.6, 0.9]
    assert all(c.max_tokens == COMPACT.max_tokens for c in llm.calls)
    _, hosted = generate(replies())
    assert {c.temperature for c in hosted.calls} == {None}  # a hosted model: its own temperature


def test_a_short_outline_is_retried_with_the_count_it_needs() -> None:
    short = json.dumps({"scenes": OUTLINE["scenes"][:2]})
    _, llm = generate(replies((1, [short, json.dumps(OUTLINE)])))
    assert "the outline has 2 scenes; it needs exactly 3" in llm.calls[2].messages[-1]["content"]


def test_a_step_that_stays_unusable_fails_with_one_line_and_no_file(tmp_path: Path) -> None:
    result, out = new(tmp_path, replies((1, ["not json", "still not", '{"scenes": []}'])))
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("maic: error:")]
    assert errors == [result.stderr.splitlines()[-1]]
    assert errors[0].startswith("maic: error: lesson generation failed at step 'outline': after 3 replies, still "
                                "unusable: scenes: List should have at least 1 item")
    assert result.stderr.count("reply unusable") == 2  # the two retries were shown
    assert not out.parent.exists()  # nothing was written, not even the folder
    with pytest.raises(GenerationError, match="step 'outline'"):
        generate(replies((1, ["x", "y", "z"])))


def test_a_provider_error_is_one_line_naming_the_step(tmp_path: Path) -> None:
    result, out = new(tmp_path, [{"error": "auth"}])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith("maic: error: lesson generation failed at step "
                                                     "'requirements': scripted:")
    assert "authentication failed" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()


# -- through litellm, to a loopback server -------------------------------------------------------------

def test_generation_through_litellm_and_a_loopback_server(tmp_path: Path,
                                                          loopback_server: LoopbackOpenAIServer) -> None:
    loopback_server.enqueue(*replies())
    out = tmp_path / "lesson.yaml"
    result = CliRunner().invoke(app, ["lesson", "new", "photosynthesis", "--scenes", "3", "--model", "openai/x",
                                      "--api-base", loopback_server.base_url, "--structured", "json_schema",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    assert [s.type for s in load_lesson(out).scenes] == ["slide", "discussion", "quiz"]
    bodies = loopback_server.requests
    assert len(bodies) == 6 and all(b["stream"] for b in bodies)
    outline_format = bodies[1]["response_format"]
    assert outline_format["type"] == "json_schema"
    assert outline_format["json_schema"]["schema"]["properties"]["scenes"]["minItems"] == 3


def test_numbers_in_a_table_are_text_and_overlong_text_is_cut_to_whole_sentences() -> None:
    from maic_cli.authoring.fixes import MAX_CONTENT, MAX_SAY, Fixes, slide_elements, slide_script

    fixes = Fixes()
    table = slide_elements([{"type": "table", "id": "t", "rows": [["x", "x²"], [3, 9.0], [None]]}], 5, fixes)[0]
    assert table.rows == [["x", "x²"], ["3", "9.0"], ["", ""]] and fixes == {"table rows padded": 1}
    [step] = slide_script([{"say": "A short sentence here. " * 100}], [table], fixes)
    assert step.say is not None and len(step.say) <= MAX_SAY and step.say.endswith("here.")
    [long] = slide_elements([{"type": "text", "id": "x", "content": "x" * 50_000}], 5, fixes)
    assert len(long.content) == MAX_CONTENT
    assert fixes["overlong lecture steps cut"] == 1 and fixes["overlong slide text cut"] == 1


def test_a_deeply_nested_reply_is_a_problem_told_to_the_model_not_a_crash() -> None:
    deep = '{"elements": [{"type": "text", "id": "a", "content": "x", "z": ' + "[" * 500 + "]" * 500 + "}]}"
    result, llm = generate(replies((2, [deep, json.dumps(ELEMENTS)])))
    assert isinstance(result.lesson.scenes[0], SlideScene) and len(llm.calls) == 7  # asked again once


def test_an_endless_reply_is_stopped_at_its_limit() -> None:
    from maic_cli.authoring.generation import MAX_REPLY_CHARS

    read = 0

    class Endless:
        model = "endless"

        async def stream(self, request: LLMRequest) -> Any:
            nonlocal read
            yield StreamPiece(text='{"title": "')
            while True:  # a server that ignores max_tokens
                read += 1000
                yield StreamPiece(text="x" * 1000)

    with pytest.raises(GenerationError):
        asyncio.run(generate_lesson(LessonBrief(topic="p", scenes=3), Endless()))
    assert read <= 3 * (MAX_REPLY_CHARS + 1000)  # each attempt stops just past the limit


def test_several_answer_letters_in_one_string_are_read_as_letters() -> None:
    quiz = {"questions": [{"type": "multiple", "question": "What does photosynthesis make?",
                           "options": ["Oxygen", "Glucose", "Soil"], "answer": "A, B",
                           "explanation": "Both are made."}]}
    result, llm = generate(replies((5, json.dumps(quiz))))
    [question] = next(s for s in result.lesson.scenes if isinstance(s, QuizScene)).questions
    assert question.answer == ["A", "B"] and len(llm.calls) == 6  # no retry


def test_an_option_copied_from_the_instructions_is_asked_again() -> None:
    copied = {"questions": [{"type": "single", "question": "What do plants need?",
                             "options": ["Light", "the right answer", "Sand"], "answer": "A",
                             "explanation": "Light powers it."}]}
    result, llm = generate(replies((5, [json.dumps(copied), json.dumps(QUIZ)])))
    assert "a word from the instructions" in "\n".join(m["content"] for m in llm.calls[6].messages)
    assert next(s for s in result.lesson.scenes if isinstance(s, QuizScene)).questions[0].options[1] == "The air"
