"""Untrusted text (maic_cli.untrusted): terminal control sequences are removed, invisible and
direction-changing characters are shown, secrets are redacted — for every class, not one example."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maic_cli.evaluation.run_results import RunResult
from maic_cli.report.reports import write_reports
from maic_cli.untrusted import (
    PROVIDER_KEY_VARIABLES,
    StreamCleaner,
    clean,
    one_line,
    redact,
    register_secret,
)

ESC = "\x1b"


@pytest.mark.parametrize("sequence", [
    "\x1b[31m", "\x1b[2J", "\x1b[?1049h", "\x1b[38;2;1;2;3m",  # CSI
    "\x1b]0;pwned\x07", "\x1b]0;pwned\x1b\\", "\x1b]52;c;aGVsbG8=\x07",  # OSC (title, clipboard)
    "\x1bPq#0;2;0;0;0\x1b\\", "\x1b_apc\x1b\\", "\x1b^pm\x1b\\", "\x1bXsos\x1b\\",  # DCS APC PM SOS
    "\x9b31m", "\x9d0;pwned\x9c", "\x90dcs\x9c", "\x9fapc\x07",  # 8-bit C1 forms
    "\x1b(B", "\x1b#8", "\x1b7", "\x1bc", "\x1b=",  # charset, DECALN, save cursor, reset, keypad
    "\x85", "\x07", "\x08", "\x0b", "\x0c", "\r", "\x00", "\x7f",  # single controls
])
def test_every_control_sequence_is_removed(sequence: str) -> None:
    assert clean(f"before {sequence}after") == "before after"


@pytest.mark.parametrize("start", ["\x1b", "\x9b", "\x1b[", "\x1b[12;", "\x1b]", "\x1bP", "\x9d", "\x1b("])
def test_an_unfinished_sequence_at_a_line_end_is_removed(start: str) -> None:
    assert clean(f"before {start}\nafter") == "before \nafter"


def test_unterminated_osc_or_dcs_does_not_swallow_the_next_lines() -> None:
    assert clean("title \x1b]0;pwned\nline two\nline three") == "title \nline two\nline three"
    assert clean("x\x1bPunfinished dcs\nnext") == "x\nnext"
    assert clean("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\ ok") == "link ok"


def test_newline_tab_and_ordinary_unicode_are_kept() -> None:
    text = ("Grüße\tnaïve café — 日本語 العربية 👩\u200d🏫 🏳\ufe0f\u200d🌈 👨\u200d👩\u200d👧"
            " 1\ufe0f\u20e3 🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f\nnext")
    assert clean(text) == text
    assert clean("a\r\nb") == "a\nb"


@pytest.mark.parametrize("char", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067",
                                  "\u2068", "\u2069", "\u200e", "\u200f", "\u061c",  # direction
                                  "\u200b", "\u200c", "\u2060", "\ufeff", "\u00ad", "\u2028",  # invisible
                                  "\U000e0041", "\U000e0001"])  # tag characters (hidden text)
def test_invisible_and_direction_characters_are_shown(char: str) -> None:
    assert clean(f"abc{char}def") == f"abc<U+{ord(char):04X}>def"


def test_zero_width_joiner_is_kept_between_emoji_and_shown_elsewhere() -> None:
    assert clean("👩\u200d🏫") == "👩\u200d🏫"  # an emoji ZWJ sequence renders as one picture
    assert clean("🏳\ufe0f\u200d🌈") == "🏳\ufe0f\u200d🌈"
    assert clean("pay\u200dpal") == "pay<U+200D>pal"  # inside a word it only hides a difference
    assert clean("👩\u200dx") == "👩<U+200D>x"
    assert clean("\u200d🏫") == "<U+200D>🏫"


def test_zero_width_joiners_inside_persian_or_hindi_words_are_kept() -> None:
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # "I want": ZWNJ is part of the spelling
    hindi = "\u0915\u094d\u200d\u0937"  # a half form, asked for by ZWJ
    assert clean(persian) == persian and clean(hindi) == hindi
    assert clean("a\u200cb") == "a<U+200C>b" and clean("\u0645\u200c") == "\u0645<U+200C>"


def test_tags_are_kept_only_inside_a_flag_and_variation_selector_runs_are_shown() -> None:
    scotland = "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    assert clean(scotland) == scotland
    assert clean("🏴\U000e0069\U000e0067\U000e006e") == "🏴<U+E0069><U+E0067><U+E006E>"  # hidden "ign…"
    assert clean("❤\ufe0f") == "❤\ufe0f"
    assert clean("a\ufe0f\U000e0100\U000e0101") == "a\ufe0f<U+E0100><U+E0101>"  # data hidden in selectors


def test_one_line_cleans_and_joins_lines() -> None:
    assert one_line("bad\nname\x1b]0;x\x07 here") == "bad name here"


def test_cleaning_is_linear_on_hostile_input() -> None:
    # Shapes that make a backtracking pattern quadratic; each is 200k characters.
    for hostile in ("\x1b[" + "1;" * 100_000, "\x1b]" * 100_000, "\u200d" * 200_000,
                    "👩\u200d" * 100_000, "🏴" + "\U000e0067" * 199_999, "\x1b" * 200_000):
        assert ESC not in clean(hostile)


unicode_soup = st.text(alphabet=st.one_of(
    st.sampled_from(list("\x1b\x07\x9b\x9c\x9d\x90\r\n\t[]];0P\\_^X(#\u200d\u200b\u202e\ufe0f\U000e0067"
                         "\U000e007f🏴👩🏫a\u200c\u0645\u094d")),
    st.characters()), max_size=60)


@settings(max_examples=400, deadline=None)
@given(unicode_soup)
def test_clean_is_idempotent_and_leaves_no_controls(text: str) -> None:
    once = clean(text)
    assert clean(once) == once
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", once)


@settings(max_examples=300, deadline=None)
@given(unicode_soup, st.lists(st.integers(min_value=0, max_value=60), max_size=8))
def test_stream_cleaner_matches_clean_for_any_split(text: str, cuts: list[int]) -> None:
    cleaner = StreamCleaner()
    points = sorted({min(c, len(text)) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    assert "".join(cleaner.feed(p) for p in pieces) + cleaner.flush() == clean(text)


def test_redact_removes_provider_keys_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HOSTED_VLLM_API_KEY", "AZURE_API_KEY"} <= set(
        PROVIDER_KEY_VARIABLES)
    monkeypatch.setenv("GROQ_API_KEY", "gsk_live_0123456789abcdef")
    monkeypatch.setenv("SOMEPROVIDER_API_KEY", "custom-secret-value-42")
    text = "401: bad key gsk_live_0123456789abcdef; also custom-secret-value-42"
    assert redact(text) == "401: bad key [redacted]; also [redacted]"


def test_redact_removes_sk_tokens_and_registered_keys() -> None:
    assert redact("Incorrect API key provided: sk-proj-AbC123xyz456DEF789ghi.") == (
        "Incorrect API key provided: [redacted].")
    assert redact("sk-no-key is a placeholder") == "sk-no-key is a placeholder"  # too short to be a key
    register_secret("router-deployment-key-1")
    assert redact("echo router-deployment-key-1") == "echo [redacted]"
    register_secret("x")  # too short to redact without destroying the message
    assert redact("x marks the spot") == "x marks the spot"


def test_reports_hold_only_clean_text_and_intact_tables(tmp_path: Path) -> None:
    hostile = RunResult(run_id="r1\x1b[2J", scenario="sky\x1b]0;pwned\x07 | extra\ncolumn", scenario_path="s.yaml",
                        model="openai/\u202emodel", repeat=1, status="error",
                        error="server said \x1b]52;c;aGk=\x07 no\nmore")
    write_reports(tmp_path, [hostile], {"scenarios": "a\x1b[31m.yaml\n# not a heading"})
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    as_json = (tmp_path / "report.json").read_text(encoding="utf-8")
    for text, shown in ((markdown, "&lt;U+202E&gt;model"), (as_json, "<U+202E>model")):  # report.md escapes HTML
        assert "\x1b" not in text and "\u202e" not in text and "pwned" not in text and "aGk=" not in text
        assert "\\u001b" not in text and shown in text
    row = next(line for line in markdown.splitlines() if line.startswith("| sky"))
    assert len(re.split(r"(?<!\\)\|", row)) == 19  # 17 cells: the name stayed in its own
    assert "- `r1`: server said  no more" in markdown
    assert "- scenarios: a.yaml # not a heading" in markdown
