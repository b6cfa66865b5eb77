"""The offline voice on long and strange text in bounded memory (issue 35: finding 4b).

Each attack runs in a fresh interpreter (``maic_cli.testing.import_attacks.measure``: its own peak RSS):
unpunctuated words to ``maic voices say --voice local``, and a lesson with one line of mathematical letters
(𝕳𝖊𝖑𝖑𝖔…) exported to captions, which voices every sentence to time them.  What one run of Piper's model
gets is bounded in phonemes (speech/piper_engine.py), and the letters are read as the letters they are.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from maic_cli.speech import piper_engine
from maic_cli.speech.normalize import for_speech
from maic_cli.speech.say import MAX_WORDS, pieces
from maic_cli.testing.import_attacks import measure

needs_piper = pytest.mark.skipif(not piper_engine.available(), reason="no offline voice (voices extra)")
PEAK_MB = 700
FRAKTUR = "𝕳𝖊𝖑𝖑𝖔 𝖈𝖑𝖆𝖘𝖘 𝖜𝖊 𝖑𝖊𝖆𝖗𝖓 𝖆𝖇𝖔𝖚𝖙 𝖑𝖊𝖛𝖊𝖗𝖘 𝖙𝖔𝖉𝖆𝖞 "


def test_mathematical_and_full_width_letters_are_read_as_letters() -> None:
    assert for_speech("𝕳𝖊𝖑𝖑𝖔 Ｆｕｌｌ ﬁne") == "Hello Full fine"


def test_a_clause_without_punctuation_is_cut_every_max_words() -> None:
    said = pieces(" ".join(["word"] * 300))
    assert sum(len(p.split()) for p in said) == 300
    assert max(len(p.split()) for p in said) <= MAX_WORDS


def test_phonemes_are_cut_at_word_ends_and_bounded_per_call() -> None:
    words = [list("ab ") * 10 + list("c")]
    parts = piper_engine.bounded_phonemes([list(("x" * 9 + " ") * 100)])
    assert all(len(p) <= piper_engine.MAX_PHONEMES for p in parts)
    assert all(p[-1] == " " for p in parts[:-1])  # each part ends at a word's end
    assert sum(map(len, parts)) == 1000
    assert piper_engine.bounded_phonemes(words) == words
    many = piper_engine.bounded_phonemes([list("y" * 10_000)])
    assert sum(map(len, many)) == piper_engine.MAX_CALL_PHONEMES


@needs_piper
def test_unpunctuated_words_to_the_offline_voice_stay_well_under_a_gigabyte(tmp_path: Path) -> None:
    text = " ".join(["the quick brown fox jumps over a lazy dog"] * 12)  # 108 words, no punctuation
    result = measure(["voices", "say", "teacher", text, "--voice", "local", "--out", str(tmp_path / "x.wav")],
                     tmp_path, timeout=300)
    assert result.code == 0, result.stderr
    assert result.peak_mb < PEAK_MB, result.peak_mb


@needs_piper
def test_a_line_of_mathematical_letters_exported_to_captions_stays_well_under_a_gigabyte(tmp_path: Path) -> None:
    lesson = tmp_path / "fraktur.yaml"
    lesson.write_text("title: Fraktur\nagents: [teacher]\nscenes:\n  - type: slide\n    id: s\n    title: S\n"
                      "    elements: []\n    script:\n"
                      f"      - say: \"{(FRAKTUR * 8).strip()}\"\n", encoding="utf-8")
    result = measure(["lesson", "export", str(lesson), "--out", str(tmp_path / "f.vtt"), "--voice", "local"],
                     tmp_path, timeout=300)
    assert result.code == 0, result.stderr
    assert result.peak_mb < PEAK_MB, result.peak_mb
    assert (tmp_path / "f.vtt").read_text(encoding="utf-8").startswith("WEBVTT")


# Each probe reports its own peak (VmHWM): ru_maxrss may carry the parent's from before the exec (pytest holding
# the offline model measured 609 MB there).
SLOW_HIGH = """
import resource
from maic_cli.speech.piper_engine import PiperEngine
from maic_cli.speech.port import Voice
text = " ".join(["the quick brown fox jumps over a lazy dog"] * 12)
audio = PiperEngine().synthesize(text, Voice("local", "", speed=0.5, pitch=12.0))
print(round(audio.seconds), [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')][0] // 1024)
"""


@needs_piper
def test_a_slow_high_voice_gets_fewer_phonemes_a_run() -> None:
    """A persona's slowest, highest voice (speed 0.5, pitch +12) makes four times the audio a phoneme: 920 MB
    for 108 words before the bound followed the audio."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", SLOW_HIGH], capture_output=True, text=True, timeout=300, check=True)
    seconds, peak_mb = map(int, done.stdout.split())
    assert seconds > 30 and peak_mb < PEAK_MB, (seconds, peak_mb)
