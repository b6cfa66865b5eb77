"""The direct client splits a server's event stream into lines itself (llm/direct.py ``LineSplitter``):
the same lines however the bytes arrive, and a line past the limit refused as aiohttp's reader refuses it."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.llm.direct import MAX_LINE_BYTES, LineSplitter


def lines_of(pieces: list[bytes]) -> list[bytes]:
    """The lines of a response body arriving in ``pieces`` (what aiohttp's ``iter_any`` yields)."""
    splitter = LineSplitter()
    return [line for piece in pieces for line in splitter.feed(piece)] + splitter.finish()


def cut(body: bytes, at: list[int]) -> list[bytes]:
    points = sorted({0, len(body), *(min(i, len(body)) for i in at)})
    return [body[a:b] for a, b in itertools.pairwise(points)]


def test_events_split_across_reads_and_several_in_one_read() -> None:
    body = b'data: {"a": 1}\n\ndata: {"b": 2}\r\n\r\n: keep-alive\n\ndata: [DONE]'  # no newline at the end
    expected = [b'data: {"a": 1}', b"", b'data: {"b": 2}', b"", b": keep-alive", b"", b"data: [DONE]"]
    assert lines_of([body]) == expected
    assert lines_of([bytes([c]) for c in body]) == expected
    assert lines_of([body[:9], body[9:30], body[30:]]) == expected
    assert lines_of([]) == [] and lines_of([b"\n"]) == [b""]


@settings(deadline=None, max_examples=200)
@given(st.lists(st.binary(max_size=40), max_size=8), st.lists(st.integers(0, 400), max_size=12))
def test_lines_do_not_depend_on_how_the_bytes_arrive(events: list[bytes], at: list[int]) -> None:
    body = b"\n".join(events)
    whole = [line.strip() for line in body.split(b"\n")]
    if whole and not whole[-1]:
        whole.pop()  # a body ending in a newline has no last line
    assert lines_of(cut(body, at)) == whole


@pytest.mark.parametrize("pieces", [
    [b"data: " + b"x" * MAX_LINE_BYTES + b"\n"],  # one long line in one read
    [b"data: ", b"x" * (MAX_LINE_BYTES // 2), b"x" * (MAX_LINE_BYTES // 2), b"x" * 10],  # never a newline
])
def test_a_line_past_the_limit_is_refused(pieces: list[bytes]) -> None:
    with pytest.raises(ValueError, match="longer than"):
        lines_of(pieces)
    assert lines_of([b"data: " + b"x" * (MAX_LINE_BYTES - 6) + b"\n"])[0].endswith(b"x")


JSONISH = st.lists(st.sampled_from([b"{", b"}", b"[", b"]", b'"', b":", b",", b" ", b"1", b"-", b"e9", b".5", b"a",
                                    b"\\", b"u", b"d800", b"ude00", b"n", b"NaN", b"Infinity", b"true", b"null",
                                    b'"delta"', b'{"content":"x"}', b"\xff", "é".encode(), b"\x00"]),
                   max_size=30).map(b"".join)


VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                  max_size=3), max_leaves=10)


def dumped(value: object, ascii_only: bool) -> bytes:
    import json

    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", errors="surrogatepass")


@settings(deadline=None, max_examples=400)
@given(st.one_of(JSONISH, st.binary(max_size=40), st.builds(dumped, VALUES, st.booleans())))
def test_a_stream_line_reads_as_json_reads_it(data: bytes) -> None:
    import json

    from maic_cli.llm.direct import _loads

    try:
        expected: object = json.loads(data)
    except ValueError:
        with pytest.raises(ValueError):
            _loads(data)
        return
    got = _loads(data)
    assert repr(got) == repr(expected)  # repr: NaN equals itself, and 1 and 1.0 or True differ
