"""Measuring speech for tests and benchmarks: the median pitch (F0) over voiced frames, by autocorrelation.

Frames of 40 ms every 10 ms; a frame is voiced when it is loud enough (RMS above a fifth of the
loudest frames') and its normalised autocorrelation peak in the 60-400 Hz lag range is above 0.5.  F0
is the rate over that peak's lag (refined by a parabola through its neighbours).  numpy is imported
here.  Good enough to tell two voices apart; not a phonetics tool.
"""

from __future__ import annotations

from typing import Any

from ..speech.port import Audio

FRAME_SECONDS = 0.040
HOP_SECONDS = 0.010
LOWEST_HZ, HIGHEST_HZ = 60.0, 400.0
VOICED_CORRELATION = 0.5


def frame_pitches(audio: Audio) -> list[float]:
    """F0 in Hz of every voiced frame."""
    import numpy as np

    samples = np.frombuffer(audio.pcm, dtype="<i2").astype(np.float64)
    size, hop = int(audio.rate * FRAME_SECONDS), int(audio.rate * HOP_SECONDS)
    if len(samples) < size:
        return []
    starts = range(0, len(samples) - size, hop)
    frames = np.stack([samples[s:s + size] for s in starts])
    loudness = np.sqrt((frames ** 2).mean(axis=1))
    floor = 0.2 * float(np.percentile(loudness, 90))
    low, high = int(audio.rate / HIGHEST_HZ), int(audio.rate / LOWEST_HZ)
    found: list[float] = []
    for frame, level in zip(frames, loudness, strict=True):
        if level < floor or level == 0:
            continue
        pitch = _frame_f0(frame - frame.mean(), low, min(high, size - 2), audio.rate, np)
        if pitch is not None:
            found.append(pitch)
    return found


def _frame_f0(frame: Any, low: int, high: int, rate: int, np: Any) -> float | None:
    spectrum = np.fft.rfft(frame, n=2 * len(frame))
    correlation = np.fft.irfft(spectrum * np.conj(spectrum))[: len(frame)]
    if correlation[0] <= 0:
        return None
    correlation = correlation / correlation[0]
    lag = low + int(np.argmax(correlation[low:high]))
    if correlation[lag] < VOICED_CORRELATION:
        return None
    left, mid, right = correlation[lag - 1], correlation[lag], correlation[lag + 1]
    bend = left - 2 * mid + right
    shift = 0.5 * (left - right) / bend if bend else 0.0
    return float(rate / (lag + shift))


def median_pitch(audio: Audio) -> float:
    """The median F0 in Hz over voiced frames (0.0 when none is voiced)."""
    import statistics

    pitches = frame_pitches(audio)
    return statistics.median(pitches) if pitches else 0.0


def pitch_distance(a: Audio, b: Audio) -> float:
    """How far apart two voices' median pitches are, relative to the lower one (0.1 = 10 %)."""
    first, second = median_pitch(a), median_pitch(b)
    low = min(first, second)
    return abs(first - second) / low if low else 0.0
