"""Inputs for the speech and audio-export attacks of issue 35, shared by the tests and
``tests/benchmarks/import_bounds.py``: a long lesson (many distinct sentences), WAV answers at given rates
and lengths (built from one repeated block, never sample by sample), unpunctuated text."""

from __future__ import annotations

import io
import math
import struct
import wave
from pathlib import Path

WORDS = ("lever force distance load effort arm pivot balance turn push pull weight handle beam fulcrum "
         "seesaw small long short heavy light").split()


def wav_answer(seconds: float, rate: int = 24000) -> bytes:
    """A mono 16-bit WAV of a 200 Hz tone ``seconds`` long at ``rate`` (one period repeated)."""
    period = max(1, rate // 200)
    cycle = b"".join(struct.pack("<h", int(6000 * math.sin(2 * math.pi * i / period))) for i in range(period))
    count = int(seconds * rate)
    pcm = (cycle * (count // period + 1))[: count * 2]
    out = io.BytesIO()
    with wave.open(out, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes(pcm)
    return out.getvalue()


def sentence(number: int, words: int = 20) -> str:
    """A distinct sentence of ``words`` words (the number spelled by its words, so none repeats)."""
    picked = [WORDS[(number // len(WORDS) ** k + k) % len(WORDS)] for k in range(4)]
    return " ".join(picked + [WORDS[(number + i) % len(WORDS)] for i in range(words - 4)]).capitalize() + "."


def long_lesson(path: Path, sentences: int, per_slide: int = 150) -> Path:
    """A lesson of ``sentences`` distinct lecture sentences over as many slides as they need."""
    lines = ["title: Long", "agents: [teacher]", "scenes:"]
    for slide in range(math.ceil(sentences / per_slide)):
        lines += ["  - type: slide", f"    id: s{slide}", f"    title: Slide {slide}", "    elements: []",
                  "    script:"]
        for number in range(slide * per_slide, min(sentences, (slide + 1) * per_slide)):
            lines.append(f"      - say: \"{sentence(number)}\"")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
