"""The export timeline, its captions and script, and the items made from untrusted events (no synthesis here)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.engine.events import ActionEvent, AgentEndEvent, AgentStartEvent, Event, LessonEvent, TextDeltaEvent
from maic_cli.engine.models import Slide, SlideElement, StoreState
from maic_cli.media.captions import LINE_CHARS, LINES, cues, narration, subrip, webvtt
from maic_cli.media.script import (
    LEARNER,
    MAX_SENTENCE_CHARS,
    LearnerSaid,
    Said,
    Shown,
    from_class,
)
from maic_cli.media.timeline import SENTENCE_GAP, TURN_GAP, lay_out

SLIDE = Slide(id="s1", title="Forces", elements=[SlideElement(id="law", content="F = m a"),
                                                 SlideElement(id="pic", type="image", content="a cart")])


def turn(message: str, agent: str, name: str, *pieces: str | tuple[str, str]) -> list[Event]:
    """An agent's message: text pieces, and (action, element) pairs between them."""
    events: list[Event] = [AgentStartEvent(message_id=message, agent_id=agent, agent_name=name, avatar="", color="")]
    for number, piece in enumerate(pieces):
        if isinstance(piece, tuple):
            events.append(ActionEvent(action_id=f"a{number}", action_name=piece[0],
                                      params={"elementId": piece[1]}, agent_id=agent, message_id=message))
        else:
            events.append(TextDeltaEvent(message_id=message, content=piece))
    events.append(AgentEndEvent(message_id=message, agent_id=agent))
    return events


def class_items() -> list[Said | Shown]:
    steps: list[Event | LearnerSaid] = [
        LessonEvent(title="Newton", slides=[SLIDE], scenes=1),
        *turn("m1", "teacher", "Ms. Rivera", "Today: forces. Look at ", "this law.", ("spotlight", "law"),
              " Force is mass times acceleration.", ("laser", "nowhere")),
        LearnerSaid("Why is it m times a?"),
        *turn("m2", "sam", "Sam", "I think it is because heavier things are harder to push!"),
    ]
    return from_class(StoreState(), steps, learner="Alex", title="Newton")


def test_a_class_becomes_sentences_and_board_changes_in_the_order_they_happened() -> None:
    items = class_items()
    said = [(i.speaker, i.text) for i in items if isinstance(i, Said)]
    assert said == [("teacher", "Today: forces."), ("teacher", "Look at this law."),
                    ("teacher", "Force is mass times acceleration."), (LEARNER, "Why is it m times a?"),
                    ("sam", "I think it is because heavier things are harder to push!")]
    kinds = ["said" if isinstance(i, Said) else f"shown:{i.board.spotlight}" for i in items]
    # the lesson's slide, then the spotlight after the sentence it follows; the laser at an
    # element that does not exist changes nothing and shows nothing
    # (the empty board the class began with is dropped: the lesson replaced it before anything was said)
    assert kinds == ["shown:None", "said", "said", "shown:law", "said", "said", "said"]
    assert isinstance(items[0], Shown) and items[0].board.slide is not None
    assert len({i.turn for i in items if isinstance(i, Said)}) == 3


def test_the_timeline_puts_a_board_at_the_end_of_the_sentence_it_follows() -> None:
    items = class_items()
    seconds = [1.0, 2.0, 1.5, 1.0, 2.5]
    timeline = lay_out(items, seconds)
    starts = [u.start for u in timeline.utterances]
    ends = [u.end for u in timeline.utterances]
    assert [round(e - s, 3) for s, e in zip(starts, ends, strict=True)] == seconds
    assert round(starts[1] - ends[0], 3) == SENTENCE_GAP  # the same speaker
    assert round(starts[3] - ends[2], 3) == TURN_GAP  # the learner answers
    spotlit = [s for s in timeline.scenes if s.board.spotlight == "law"]
    assert len(spotlit) == 1 and spotlit[0].start == ends[1]  # after "Look at this law."
    assert spotlit[0].end == timeline.duration
    # the scenes tile the whole timeline
    assert timeline.scenes[0].start == 0.0
    assert all(a.end == b.start for a, b in zip(timeline.scenes, timeline.scenes[1:], strict=False))


def test_webvtt_names_the_speaker_and_follows_the_timeline() -> None:
    timeline = lay_out(class_items(), [1.0, 2.0, 1.5, 1.0, 2.5])
    text = webvtt(timeline)
    assert text.startswith("WEBVTT\n")
    blocks = [b for b in text.split("\n\n")[1:] if b.strip()]
    first = blocks[0].splitlines()
    assert first[1] == "00:00:00.400 --> 00:00:01.400" and first[2] == "<v Ms. Rivera>Today: forces."
    assert "<v Alex>Why is it m times a?" in text
    srt = subrip(timeline)
    assert "00:00:00,400 --> 00:00:01,400\nMs. Rivera: Today: forces." in srt


def test_the_narration_script_has_each_turn_with_its_speaker_and_time() -> None:
    timeline = lay_out(class_items(), [1.0, 2.0, 1.5, 1.0, 2.5])
    text = narration(timeline, "Newton <b>")
    assert text.startswith("# Newton &lt;b&gt;\n")
    assert "**Ms. Rivera** (00:00)\n\nToday: forces. Look at this law. Force is mass times acceleration." in text
    assert "**Alex** (00:06)" in text and "**Sam** (00:08)" in text  # 0.4 + 1 + .35 + 2 + .35 + 1.5 + .8


_CUE_TIME = re.compile(r"^(\d\d):(\d\d):(\d\d)\.(\d\d\d) --> (\d\d):(\d\d):(\d\d)\.(\d\d\d)$")


def _seconds(parts: tuple[str, ...]) -> float:
    h, m, s, ms = map(int, parts)
    return h * 3600 + m * 60 + s + ms / 1000


hostile_text = st.lists(st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)
                        | st.sampled_from(["\x1b[31m", "-->", "<v x>", "&", "\n\n", "12", ".", "!", " ", "a" * 600]),
                        max_size=12).map("".join)


@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(st.tuples(st.sampled_from(["teacher", "sam", "learner-line"]), hostile_text), max_size=12),
       durations=st.lists(st.floats(0.0, 20.0), min_size=200, max_size=200))
def test_hostile_text_gives_clean_bounded_cues_that_follow_the_timeline(
        pieces: list[tuple[str, str]], durations: list[float]) -> None:
    steps: list[Event | LearnerSaid] = []
    for number, (who, text) in enumerate(pieces):
        steps += [LearnerSaid(text)] if who == "learner-line" else turn(f"m{number}", who, who, text)
    items = from_class(StoreState(), steps)
    said = [i for i in items if isinstance(i, Said)]
    for item in said:
        assert item.text and not re.search(r"[\x00-\x1f\x7f]", item.text) and len(item.text) <= MAX_SENTENCE_CHARS
    timeline = lay_out(items, durations[:len(said)] + [1.0] * max(0, len(said) - 200))
    previous_end = 0.0
    for utterance in timeline.utterances:
        assert utterance.start >= previous_end and utterance.end >= utterance.start
        previous_end = utterance.end
    assert timeline.duration >= previous_end
    for cue in cues(timeline):
        assert 1 <= len(cue.lines) <= LINES and all(len(line) <= LINE_CHARS for line in cue.lines)
    text = webvtt(timeline)
    blocks = [b.splitlines() for b in text.split("\n\n")[1:] if b.strip()]
    assert len(blocks) == len(cues(timeline))
    spans = [(u.start, u.end) for u in timeline.utterances]
    for block in blocks:
        match = _CUE_TIME.match(block[1])
        assert match, block
        start, end = _seconds(match.groups()[:4]), _seconds(match.groups()[4:])
        assert any(s - 0.002 <= start <= end <= e + 0.002 for s, e in spans)  # inside one sentence's audio
        for line in block[2:]:
            assert line.startswith("<v ") and "-->" not in line and "\x1b" not in line
            body = line[line.index(">") + 1:]
            assert "<" not in body and ">" not in body


element_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=300)


@settings(max_examples=15, deadline=None)
@given(texts=st.lists(element_text, min_size=1, max_size=50), title=element_text,
       kinds=st.lists(st.sampled_from(["text", "bullets", "code", "table", "formula", "image"]), min_size=50,
                      max_size=50),
       pointed=st.integers(0, 60))
def test_any_slide_draws_as_one_picture_of_the_frame_size(texts: list[str], title: str, kinds: list[str],
                                                          pointed: int) -> None:
    import io

    from PIL import Image

    from maic_cli.media.frames import HEIGHT, WIDTH, render
    from maic_cli.media.script import board_of

    elements = [SlideElement(id=f"e{i}", type=kinds[i], content=text, items=[text] * 3,  # type: ignore[arg-type]
                             rows=[[text, text], ["1", "2"]]) for i, text in enumerate(texts)]
    store = StoreState(slides=[Slide(id="s", title=title or "t", elements=elements)], spotlight=f"e{pointed}",
                       laser=f"e{pointed + 1}")
    board = board_of(store, title)
    picture = Image.open(io.BytesIO(render(board)))
    assert picture.size == (WIDTH, HEIGHT) and picture.format == "PNG"
