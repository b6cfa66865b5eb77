"""The reported import/export attacks at full size: seconds and peak memory of each ``maic`` command.

    PYTHONPATH=. python tests/benchmarks/import_bounds.py [--only deck|table|pdf|breaks|drip|flood|…]

* deck: a 4.6 MB deck, one slide of 300,000 tiny shapes (``maic lesson import``);
* table: 1.9 MB of Markdown, one table 1,000 columns wide (``maic lesson import``);
* pdf: a small PDF of 60 pages all drawing one 70 MB content stream (``maic lesson import``);
* breaks: a 4 MB lesson whose one text element holds 2 million line breaks (``maic lesson export --out x.pptx``).

The speech engines and the audio exports (issue 35), each against a loopback speech server this script starts
(``maic voices say`` one sentence, or ``maic lesson export --out x.wav``):

* drip / drip-litellm: a server that sends one byte every 2 s (maic's client; litellm's ``openai/tts-1``);
* silent-litellm: a server that never answers; flood / flood-litellm: a 400 MB answer;
* wav8: an 8 MB WAV of 8-bit samples; words: 300 unpunctuated words to ``--voice local``;
* fraktur: a lesson with one line of 360 mathematical letters exported to ``.vtt`` with ``--voice local``;
* lesson-wav: a 139 KB lesson (1,000 sentences of 10 s each) exported to ``.wav``;
* rates: 90 sentences answered at 4 kHz (two minutes each) and 192 kHz, exported to ``.wav``.

Each command runs in a fresh interpreter (``maic_cli.testing.import_attacks.measure``); a refusal
(exit 2, one line) counts as an answer.  Builds take a while (the deck: about a minute).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from maic_cli.testing.import_attacks import (
    line_break_lesson,
    measure,
    shared_stream_pdf,
    tiny_shapes_deck,
    wide_table_notes,
)
from maic_cli.testing.speech_attacks import long_lesson, wav_answer
from maic_cli.testing.speech_server import LoopbackSpeechServer

ATTACKS: dict[str, tuple[Callable[[Path], Path], list[str]]] = {
    "deck": (lambda d: tiny_shapes_deck(d / "shapes.pptx", 300_000), ["lesson", "import", "shapes.pptx"]),
    "table": (lambda d: wide_table_notes(d / "wide.md", 1_000, int(1.9 * 2**20)), ["lesson", "import", "wide.md"]),
    "pdf": (lambda d: shared_stream_pdf(d / "shared.pdf", 60, 70 * 2**20), ["lesson", "import", "shared.pdf"]),
    "breaks": (lambda d: line_break_lesson(d / "breaks.yaml", 2_000_000),
               ["lesson", "export", "breaks.yaml", "--out", "x.pptx"]),
}


def _eight_bit_wav() -> bytes:
    import io
    import wave

    out = io.BytesIO()
    with wave.open(out, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(1)
        handle.setframerate(22050)
        handle.writeframes(bytes(range(256)) * (8 * 2**20 // 256))
    return out.getvalue()


FRAKTUR = "𝕳𝖊𝖑𝖑𝖔 𝖈𝖑𝖆𝖘𝖘 𝖜𝖊 𝖑𝖊𝖆𝖗𝖓 𝖆𝖇𝖔𝖚𝖙 𝖑𝖊𝖛𝖊𝖗𝖘 𝖙𝖔𝖉𝖆𝖞 "
SAY = ["voices", "say", "teacher", "Hello there, class."]
# name: (the server's behaviour or answer, the voice, what to run: "say", "words", "fraktur" or a lesson size)
SPEECH: dict[str, tuple[str, str, str | int]] = {
    "drip": ("drip", "openai-compatible", "say"),
    "drip-litellm": ("drip", "openai/tts-1", "say"),
    "silent-litellm": ("silent", "openai/tts-1", "say"),
    "flood": ("flood", "openai-compatible", "say"),
    "flood-litellm": ("flood", "openai/tts-1", "say"),
    "wav8": ("wav8", "openai-compatible", "say"),
    "words": ("", "local", "words"),
    "fraktur": ("", "local", "fraktur"),
    "lesson-wav": ("10s", "openai-compatible", 1000),
    "rates": ("rates", "openai-compatible", 90),
}


def _speech_argv(folder: Path, voice: str, what: str | int, base: str) -> list[str]:
    flags = ["--voice", voice] + (["--voice-api-base", base] if voice != "local" else [])
    if what == "say":
        return [*SAY, *flags, "--out", str(folder / "x.wav")]
    if what == "words":
        text = " ".join(["the quick brown fox jumps over a lazy dog"] * 34)[:-4]  # 300 words, no punctuation
        return ["voices", "say", "teacher", text, *flags, "--out", str(folder / "x.wav")]
    lesson = folder / "lesson.yaml"
    if what == "fraktur":
        lesson.write_text("title: F\nagents: [teacher]\nscenes:\n  - type: slide\n    id: s\n    title: S\n"
                          f"    elements: []\n    script:\n      - say: \"{(FRAKTUR * 8).strip()}\"\n", "utf-8")
        return ["lesson", "export", str(lesson), "--out", str(folder / "x.vtt"), *flags]
    assert isinstance(what, int)
    long_lesson(lesson, what)
    return ["lesson", "export", str(lesson), "--out", str(folder / "x.wav"), *flags]


def _speech(name: str, timeout: float) -> None:
    behaviour, voice, what = SPEECH[name]
    with tempfile.TemporaryDirectory() as folder, LoopbackSpeechServer() as server:
        os.environ["MAIC_HOME"] = folder  # a cache of its own: nothing found from an earlier run
        os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark-0000000000000000")
        if behaviour in ("drip", "silent", "flood"):
            server.behaviour = behaviour
        elif behaviour == "wav8":
            server.body = _eight_bit_wav()
        elif behaviour == "10s":
            server.body = wav_answer(10.0)
        elif behaviour == "rates":
            server.bodies = [wav_answer(120.0, 4000), wav_answer(0.2, 192_000), wav_answer(0.2, 192_000)]
        result = measure(_speech_argv(Path(folder), voice, what, server.base_url), Path(folder), timeout)
        answer = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
        print(f"{name:15} {result.seconds:7.1f} s  {result.peak_mb:7.0f} MB peak  exit {result.code}  {answer[:100]}",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=sorted(ATTACKS) + sorted(SPEECH), action="append")
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    for name in args.only or [*ATTACKS, *SPEECH]:
        if name in SPEECH:
            _speech(name, args.timeout)
            continue
        build, argv = ATTACKS[name]
        with tempfile.TemporaryDirectory() as folder:
            made = build(Path(folder))
            result = measure([*argv, "--force"] if argv[1] == "import" else argv, Path(folder), args.timeout)
            answer = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
            print(f"{name:7} {made.stat().st_size / 2**20:6.2f} MB in  {result.seconds:7.1f} s  "
                  f"{result.peak_mb:7.0f} MB peak  exit {result.code}  {answer[:110]}", flush=True)


if __name__ == "__main__":
    main()
