"""Fuzz: hostile model replies, end to end.

Hypothesis generates replies — random JSON of any shape and depth, random
unicode with lone surrogates and control characters, random action names and
params, valid-looking action arrays with hostile params, replies cut anywhere —
and sends them through the parser (chunked at random), a whole round
(director and agents, scripted), the whiteboard, the plain view, the live
view's screen, the ``/whiteboard`` panel, the session file (save, reload,
re-render), the transcript (write, read back) and both exports.  Nothing may
raise, and the session must always reload.  Bounded for CI (60 examples per
test); ``MAIC_FUZZ_EXAMPLES=2000`` runs a longer hunt.
"""

from __future__ import annotations

import asyncio
import io
import json
import math
import os
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from maic_cli.engine.action_params import PARAM_MODELS, coerce_params
from maic_cli.engine.actions import CATALOGUE
from maic_cli.engine.classroom import Classroom
from maic_cli.engine.models import Slide, SlideElement, StoreState, TurnConfig
from maic_cli.engine.round import run_round
from maic_cli.engine.whiteboard import apply_action, whiteboard_summary
from maic_cli.errors import InputError
from maic_cli.llm.scripted import ScriptedLLM, ScriptedReply
from maic_cli.replies.parser import StructuredStreamParser
from maic_cli.replies.parser_items import ActionItem, TextItem
from maic_cli.store.lessons import load_lesson
from maic_cli.store.session import Session, load_session, save_session
from maic_cli.store.transcript import TranscriptHeader, TranscriptWriter, read_transcript
from maic_cli.ui.export import classroom_to_markdown
from maic_cli.ui.export_html import classroom_to_html
from maic_cli.ui.lesson_notes import LessonNotes
from maic_cli.ui.plain import PlainView
from maic_cli.ui.views import ScreenState, render_screen
from maic_cli.ui.whiteboard_view import render_slide, render_whiteboard
from tests.helpers import agent
from tests.lesson_transcript import lesson_events

FUZZ = settings(max_examples=int(os.environ.get("MAIC_FUZZ_EXAMPLES", "60")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
CLASS = {a.id: a for a in (agent("teacher", "teacher", "Ms. T"), agent("mia", "student", "Mia"))}

# Any code point, surrogates and control characters included.
ANY_CHAR = st.characters(exclude_categories=())
TEXT = st.text(ANY_CHAR, max_size=30) | st.sampled_from(["\ud83d", "\udc00", "\x1b]0;t\x07", "\x1b[2J", "]", "}",
                                                         '"', "\\", "`" * 4, "[x](javascript:alert(1))"])
SCALAR = (st.none() | st.booleans() | st.integers() | st.integers(-10 ** 500, 10 ** 500)
          | st.floats(allow_nan=True, allow_infinity=True) | TEXT)
JSON = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                    max_leaves=25)
NAMES = st.sampled_from(sorted(CATALOGUE)) | TEXT


def deep(levels: int, open_: str = "[", close: str = "]") -> Any:
    return open_ * levels + "1" + close * levels


@st.composite
def params_for(draw: st.DrawFn, name: str) -> Any:
    """Params that look like the action's own, with hostile values mixed in."""
    model = PARAM_MODELS.get(name)
    keys = list(model.model_fields) if model else []
    params = {key: draw(JSON) for key in draw(st.lists(st.sampled_from(keys), max_size=len(keys)))} if keys else {}
    params.update(draw(st.dictionaries(TEXT, JSON, max_size=2)))
    return draw(st.sampled_from([params, params, draw(JSON)]))


@st.composite
def items(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["text", "action", "action", "junk", "deep"]))
    if kind == "text":
        return {"type": "text", "content": draw(TEXT)}
    if kind == "action":
        name = draw(NAMES)
        return {"type": "action", "name": name, "params": draw(params_for(name))}
    if kind == "deep":
        return {"type": "action", "name": "wb_draw_table", "params": {"data": json.loads(deep(draw(
            st.integers(15, 60))))}}
    return draw(JSON)


@st.composite
def replies(draw: st.DrawFn) -> str:
    """One raw agent reply: an item array (ASCII-escaped or raw), prose, or JSON of any shape, maybe cut."""
    form = draw(st.sampled_from(["array", "array", "array", "prose", "json", "deep"]))
    if form == "array":
        body = draw(st.lists(items(), max_size=6))
        text = json.dumps(body, ensure_ascii=draw(st.booleans()))
    elif form == "prose":
        text = draw(TEXT)
    elif form == "json":
        text = json.dumps(draw(JSON), ensure_ascii=draw(st.booleans()))
    else:
        levels = draw(st.integers(100, 3000))
        text = '[{"type":"action","name":"wb_open","params":' + deep(levels, '{"a":', "}") + "}]"
    if draw(st.booleans()):
        text = draw(st.sampled_from(["", "Sure!\n```json\n", "[", "> "])) + text
    if draw(st.integers(0, 4)) == 0:
        text = text[:draw(st.integers(0, len(text)))]
    return text


DECISIONS = (st.sampled_from(['{"next_agent": "teacher"}', '{"next_agent": "mia"}', '{"next_agent": "USER"}',
                              '{"next_agent": "teacher\\ud83d"}', "END"])
             | st.builds(lambda n: '{"next_agent": ' + deep(n, '{"a":', "}") + "}", st.integers(10, 2000))
             | TEXT)


def feed_in_chunks(reply: str, cuts: list[int]) -> tuple[str, list]:
    parser = StructuredStreamParser()
    out = []
    pos = 0
    for cut in sorted(cuts):
        out += parser.feed(reply[pos:cut])
        pos = max(pos, cut)
    out += parser.feed(reply[pos:]) + parser.finish()
    text = "".join(i.content for i in out if isinstance(i, TextItem))
    return text, [(i.name, i.params) for i in out if isinstance(i, ActionItem)]


@FUZZ
@given(reply=replies(), data=st.data())
def test_parser_never_raises_and_any_chunking_gives_the_same_items(reply: str, data: st.DataObject) -> None:
    whole = feed_in_chunks(reply, [])
    cuts = data.draw(st.lists(st.integers(0, len(reply)), max_size=12))
    assert feed_in_chunks(reply, cuts) == whole
    text, actions = whole
    text.encode("utf-8")
    json.dumps(actions, ensure_ascii=False).encode("utf-8")  # no surrogate, no depth problem


@FUZZ
@given(name=NAMES, data=st.data())
def test_coerced_params_are_json_finite_and_stable(name: str, data: st.DataObject) -> None:
    params = data.draw(params_for(name))
    coerced = coerce_params(name, params)
    if coerced is None:
        return
    json.dumps(coerced, allow_nan=False, ensure_ascii=False).encode("utf-8")
    assert coerce_params(name, coerced) == coerced
    state = StoreState(slides=[Slide(id="s", title="t", elements=[SlideElement(id="e")])])
    apply_action(state, name, params, "teacher")
    whiteboard_summary(state)


def render(renderable: object) -> str:
    console = Console(file=io.StringIO(), width=80, height=24, color_system="truecolor")
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def show_everywhere(session: Session) -> None:
    classroom = session.classroom
    state = ScreenState(classroom=classroom, agents=CLASS, model="scripted")
    render(render_screen(state, 24))
    render(render_whiteboard(classroom.store, limit=1000))
    classroom_to_markdown(classroom, CLASS).encode("utf-8")
    classroom_to_html(classroom, CLASS).encode("utf-8")


@FUZZ
@given(agent_replies=st.lists(replies(), min_size=1, max_size=3), decisions=st.lists(DECISIONS, max_size=3),
       chunk=st.integers(1, 40), learner=TEXT)
def test_hostile_replies_survive_a_whole_class(tmp_path_factory: Any, agent_replies: list[str],
                                               decisions: list[str], chunk: int, learner: str) -> None:
    folder: Path = tmp_path_factory.mktemp("fuzz")
    script: list[ScriptedReply | str] = ['{"next_agent": "teacher"}']
    for index, reply in enumerate(agent_replies):
        script.append(ScriptedReply(reply=reply, chunk_size=chunk))
        script.append(decisions[index] if index < len(decisions) else '{"next_agent": "mia"}')
    config = TurnConfig(agent_ids=list(CLASS), max_turns=4)
    writer = TranscriptWriter(folder / "t.jsonl", TranscriptHeader(
        model="scripted", produced_by="fuzz", agents=list(CLASS.values()), config=config))
    session = Session(config=config, agents=list(CLASS.values()))
    plain = PlainView(io.StringIO(), io.StringIO(), CLASS)
    session.classroom.add_learner_message(learner)
    writer.learner(session.classroom.messages[-1].text)

    def on_event(event: Any) -> None:
        writer.event(event)
        plain.on_event(event)

    result = asyncio.run(run_round(session.classroom, config, writer.wrap(ScriptedLLM(script)),
                                   registry=CLASS, on_event=on_event))
    plain.round_finished(result)
    writer.round_finished(result.reason)
    writer.close()
    show_everywhere(session)
    path = folder / "session.json"
    save_session(session, path)
    again = load_session(path)
    show_everywhere(again)
    save_session(again, path)
    assert len(read_transcript(folder / "t.jsonl").events()) > 0
    for element in again.classroom.store.whiteboard:  # the stored board is usable as it is
        assert all(not isinstance(v, float) or math.isfinite(v) for v in element.params.values())


# -- lesson files -----------------------------------------------------------------------------
LESSON_KEYS = ["title", "level", "language", "scenes", "type", "id", "elements", "script", "say", "spotlight",
               "laser", "questions", "question", "options", "answer", "rubric", "points", "topic", "prompt",
               "initiator", "content", "items", "rows"]
YAML_SCALAR = (st.none() | st.booleans() | st.integers(-10 ** 30, 10 ** 30) | st.floats() | TEXT
               | st.sampled_from(["slide", "quiz", "discussion", "single", "multiple", "short", "bullets", "table",
                                  "code", "image", "e1", "B", "[A, C]"]))
YAML_TREE = st.recursive(YAML_SCALAR, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(st.sampled_from(LESSON_KEYS) | TEXT, inner, max_size=5), max_leaves=30)
SAMPLE = (Path(__file__).resolve().parent.parent / "lessons" / "photosynthesis.yaml").read_text(encoding="utf-8")


@st.composite
def lesson_texts(draw: st.DrawFn) -> str:
    """YAML-ish text: a random tree dumped as YAML, the sample lesson cut, spliced or with a hostile
    value put in, or raw text."""
    form = draw(st.sampled_from(["tree", "sample", "sample", "text"]))
    if form == "tree":
        tree = draw(YAML_TREE | st.fixed_dictionaries({"title": TEXT, "scenes": st.lists(YAML_TREE, max_size=3)}))
        return yaml.safe_dump(tree, allow_unicode=draw(st.booleans()))
    if form == "text":
        return draw(st.text(ANY_CHAR, max_size=200))
    at = draw(st.integers(0, len(SAMPLE)))
    piece = draw(st.sampled_from(["", ":", "- ", "\n  ", "{", "[", "'", '"', "\t", "&a", "*a", "\x1b]0;pwn\x07",
                                  "!!python/object:os.system", "[bold red]x[/]"]) | TEXT)
    end = draw(st.integers(at, min(len(SAMPLE), at + 40)))
    return SAMPLE[:at] + piece + SAMPLE[end:]


@FUZZ
@given(text=lesson_texts())
def test_any_lesson_file_loads_or_fails_with_one_clean_line(tmp_path_factory: Any, text: str) -> None:
    path: Path = tmp_path_factory.mktemp("lesson") / "lesson.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        lesson = load_lesson(path)
    except InputError as exc:
        message = str(exc)
        assert message.startswith(str(path)) and "\n" not in message and "\x1b" not in message and "\x07" not in message
        return
    classroom = Classroom()
    notes = LessonNotes()
    plain = io.StringIO()
    view = PlainView(plain, io.StringIO(), CLASS)
    for event in lesson_events(lesson):  # a lesson that loads shows everywhere
        classroom.apply(event)
        notes.record(classroom, event)
        view.on_event(event)
        if event.type == "scene" and event.slide is not None:
            assert f"Slide {event.slide + 1}/{len(notes.slides)}" in render(render_slide(classroom.store))
    assert "\x1b]" not in plain.getvalue()
    state = ScreenState(classroom=classroom, agents=CLASS, model="scripted", notes=notes)
    assert "\x1b]" not in render(render_screen(state, 24))
    classroom_to_markdown(classroom, CLASS, notes=notes).encode("utf-8")
    assert "<script" not in classroom_to_html(classroom, CLASS, notes=notes)
