"""Audio bytes in and out: WAV (the standard library's ``wave``), raw PCM, mp3 through ffmpeg; all bounded.

Providers answer WAV, raw PCM or (some only) mp3.  :func:`decode` turns any of them into :class:`Audio`
(mono 16-bit PCM): a WAV is read with ``wave`` (its header checked: 8/16-bit, 1-2 channels, a sane
rate; stereo is mixed down), raw PCM is taken at the rate the provider documents, and anything else
goes through ffmpeg (the ``imageio-ffmpeg`` wheel's binary, or one on PATH), as a subprocess with a
time limit, reading at most :data:`MAX_AUDIO_BYTES` and writing at most as much (``-t``: a small file can
hold hours of audio).  :func:`wav_bytes` writes a WAV.

:func:`change_rate` resamples (linear interpolation, numpy imported when called): the offline voice's
pitch (a voice synthesised slower and played faster sounds higher, speech/piper_engine.py).
"""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
import wave
from math import sqrt

from .port import Audio, SpeechError

MAX_AUDIO_BYTES = 32 * 1024 * 1024  # ~12 minutes of 22 kHz 16-bit mono: far more than one sentence
FFMPEG_SECONDS = 30.0
_RATES = range(4000, 192001)


def wav_bytes(audio: Audio) -> bytes:
    """``audio`` as a mono 16-bit WAV file."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(audio.rate)
        wav.writeframes(audio.pcm)
    return out.getvalue()


def read_wav(data: bytes, engine: str = "audio") -> Audio:
    """A WAV file's samples as mono 16-bit :class:`Audio`; :class:`SpeechError` for anything else."""
    if len(data) > MAX_AUDIO_BYTES:
        raise SpeechError(engine, f"the audio is larger than {MAX_AUDIO_BYTES // 2**20} MiB")
    try:
        with wave.open(io.BytesIO(data), "rb") as wav:
            channels, width, rate = wav.getnchannels(), wav.getsampwidth(), wav.getframerate()
            frames = wav.readframes(min(wav.getnframes(), MAX_AUDIO_BYTES // max(1, channels * width)))
    except (wave.Error, EOFError, struct.error) as exc:
        raise SpeechError(engine, f"not a readable WAV file ({exc})") from None
    if channels not in (1, 2) or width not in (1, 2) or rate not in _RATES:
        raise SpeechError(engine, f"unsupported WAV ({channels} channels, {8 * width}-bit, {rate} Hz)")
    pcm = _to_16bit(frames, width)
    if channels == 2:
        pcm = _mix_down(pcm)
    return Audio(pcm[: len(pcm) - len(pcm) % 2], rate)


_SIGNED = bytes((b + 128) % 256 for b in range(256))  # an unsigned 8-bit sample as the high byte of a signed one


def _to_16bit(frames: bytes, width: int) -> bytes:
    """16-bit samples from 8-bit (unsigned around 128) ones: bytes in, bytes out, no object per sample."""
    if width == 2:
        return frames
    out = bytearray(2 * len(frames))
    out[1::2] = frames.translate(_SIGNED)
    return bytes(out)


def _mix_down(pcm: bytes) -> bytes:
    """Stereo 16-bit to mono: the mean of each pair, in numpy (no object per sample)."""
    import numpy as np

    samples = np.frombuffer(pcm[: len(pcm) - len(pcm) % 4], dtype="<i2").reshape(-1, 2).astype(np.int32)
    return bytes(((samples[:, 0] + samples[:, 1]) // 2).astype("<i2").tobytes())


def looks_like_wav(data: bytes) -> bool:
    return data[:4] == b"RIFF" and data[8:12] == b"WAVE"


def decode(data: bytes, engine: str, *, pcm_rate: int | None = None) -> Audio:
    """A provider's answer as :class:`Audio`: WAV, raw 16-bit PCM (when ``pcm_rate`` is given) or, through
    ffmpeg, any other format (mp3, opus, aac, flac)."""
    if not data:
        raise SpeechError(engine, "the provider sent no audio")
    if len(data) > MAX_AUDIO_BYTES:
        raise SpeechError(engine, f"the audio is larger than {MAX_AUDIO_BYTES // 2**20} MiB")
    if looks_like_wav(data):
        return read_wav(data, engine)
    if pcm_rate is not None and not _looks_compressed(data):
        return Audio(data[: len(data) - len(data) % 2], pcm_rate)
    return Audio(through_ffmpeg(data, engine), FFMPEG_RATE)


FFMPEG_RATE = 24000


def _looks_compressed(data: bytes) -> bool:
    """mp3 (an ID3 tag or a frame sync), Ogg, FLAC or an MP4/AAC box: not raw PCM."""
    return (data[:3] == b"ID3" or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0)
            or data[:4] in (b"OggS", b"fLaC") or data[4:8] == b"ftyp")


def ffmpeg_exe() -> str | None:
    """ffmpeg from the imageio-ffmpeg wheel, else one on PATH, else ``None``."""
    try:
        import imageio_ffmpeg

        exe: str = imageio_ffmpeg.get_ffmpeg_exe()
        return exe
    except Exception:  # noqa: BLE001 - not installed, or its binary missing: look on PATH
        return shutil.which("ffmpeg")


def through_ffmpeg(data: bytes, engine: str) -> bytes:
    """Compressed audio to mono 16-bit PCM at :data:`FFMPEG_RATE`, by ffmpeg in a bounded subprocess."""
    exe = ffmpeg_exe()
    if exe is None:
        raise SpeechError(engine, "the provider sent compressed audio and ffmpeg is not installed",
                          "pip install imageio-ffmpeg")
    # at most MAX_AUDIO_BYTES of output: a few MB of FLAC or Opus can hold hours of audio (GB of PCM)
    longest = f"{MAX_AUDIO_BYTES / 2 / FFMPEG_RATE:.3f}"
    command = [exe, "-nostdin", "-hide_banner", "-loglevel", "error", "-i", "pipe:0",
               "-f", "s16le", "-ac", "1", "-ar", str(FFMPEG_RATE), "-t", longest, "pipe:1"]
    try:
        done = subprocess.run(command, input=data, capture_output=True, timeout=FFMPEG_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise SpeechError(engine, f"ffmpeg took longer than {FFMPEG_SECONDS:.0f} s to decode the audio") from None
    except OSError as exc:
        raise SpeechError(engine, f"ffmpeg could not run ({exc.strerror or exc})") from None
    if done.returncode != 0 or not done.stdout:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no audio"]
        raise SpeechError(engine, f"ffmpeg could not decode the audio: {detail[0]}")
    pcm = done.stdout[:MAX_AUDIO_BYTES]
    return pcm[: len(pcm) - len(pcm) % 2]


def rms(audio: Audio) -> float:
    """Root mean square of the samples, 0 (silence) to 32767 (full scale)."""
    import array

    samples = array.array("h")
    samples.frombytes(audio.pcm[: len(audio.pcm) // 2 * 2])
    if not samples:
        return 0.0
    return sqrt(sum(s * s for s in samples) / len(samples))


def change_rate(pcm: bytes, factor: float) -> bytes:
    """Resample 16-bit PCM to ``len / factor`` samples (``factor`` > 1: shorter, and higher when played at
    the same rate).  Linear interpolation; numpy is imported here."""
    if abs(factor - 1.0) < 1e-6 or len(pcm) < 4:
        return pcm
    import numpy as np

    samples = np.frombuffer(pcm[: len(pcm) - len(pcm) % 2], dtype="<i2").astype(np.float32)
    count = max(1, int(len(samples) / factor))
    positions = np.arange(count, dtype=np.float64) * factor
    out = np.interp(positions, np.arange(len(samples), dtype=np.float64), samples)
    return bytes(np.clip(np.rint(out), -32768, 32767).astype("<i2").tobytes())


def float_to_pcm(samples: object) -> bytes:
    """A numpy float array in [-1, 1] as 16-bit PCM bytes."""
    import numpy as np

    array = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    return bytes((array * 32767.0).astype("<i2").tobytes())
