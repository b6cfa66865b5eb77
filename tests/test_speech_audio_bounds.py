"""Provider audio decoded in bounded memory (issue 35: finding 3): 8-bit and stereo WAVs of many MB, and a
small compressed file holding hours of audio, each measured in a fresh interpreter (peak RSS); the 8-bit
conversion checked sample by sample on a small one."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import wave
from pathlib import Path

import pytest

from maic_cli.speech.audio import ffmpeg_exe, read_wav


def _wav(frames: bytes, width: int, channels: int, rate: int = 22050) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as handle:
        handle.setnchannels(channels)
        handle.setsampwidth(width)
        handle.setframerate(rate)
        handle.writeframes(frames)
    return out.getvalue()


def test_8_bit_samples_become_16_bit_around_zero() -> None:
    audio = read_wav(_wav(bytes([0, 64, 128, 192, 255]), 1, 1))
    assert struct.unpack("<5h", audio.pcm) == (-32768, -16384, 0, 16384, 32512)
    stereo = read_wav(_wav(struct.pack("<4h", 1000, 3000, -200, -400), 2, 2))
    assert struct.unpack("<2h", stereo.pcm) == (2000, -300)


# Each probe reports its own peak (VmHWM): ru_maxrss may carry the parent's from before the exec (pytest holding
# the offline model measured 609 MB there).
PROBE = """
import io, resource, sys, time, wave
from maic_cli.speech.audio import decode
width, channels = int(sys.argv[1]), int(sys.argv[2])
out = io.BytesIO()
with wave.open(out, "wb") as handle:
    handle.setnchannels(channels); handle.setsampwidth(width); handle.setframerate(22050)
    handle.writeframes(bytes(range(256)) * (8 * 2**20 // 256))
data = out.getvalue()
started = time.monotonic()
audio = decode(data, "test")
took = time.monotonic() - started
print(len(audio.pcm), took, [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')][0] // 1024)
"""


def test_an_8_mb_wav_of_8_bit_or_stereo_samples_decodes_in_seconds_and_little_memory() -> None:
    for width, channels, samples in ((1, 1, 8 * 2**20), (1, 2, 4 * 2**20), (2, 2, 2 * 2**20)):
        done = subprocess.run([sys.executable, "-c", PROBE, str(width), str(channels)], capture_output=True,
                              text=True, timeout=120, check=True)
        pcm_bytes, took, peak_mb = done.stdout.split()
        assert int(pcm_bytes) == 2 * samples
        assert float(took) < 5.0, (width, channels, took)
        assert int(peak_mb) < 250, (width, channels, peak_mb)


BOMB = """
import resource, sys
from pathlib import Path
from maic_cli.speech.audio import MAX_AUDIO_BYTES, decode
audio = decode(Path(sys.argv[1]).read_bytes(), "test")
assert len(audio.pcm) <= MAX_AUDIO_BYTES
print(len(audio.pcm), [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')][0] // 1024)
"""


def test_a_small_file_of_hours_of_audio_is_decoded_to_at_most_the_cap(tmp_path: Path) -> None:
    exe = ffmpeg_exe()
    if exe is None:
        pytest.skip("no ffmpeg (the voices extra brings imageio-ffmpeg)")
    bomb = tmp_path / "bomb.flac"  # four hours of silence in 1.5 MB: 690 MB of PCM at 24 kHz
    subprocess.run([exe, "-v", "error", "-y", "-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono", "-t", "14400",
                    "-c:a", "flac", "-f", "flac", str(bomb)], check=True, timeout=120)
    assert bomb.stat().st_size < 4 * 2**20
    done = subprocess.run([sys.executable, "-c", BOMB, str(bomb)], capture_output=True, text=True, timeout=120,
                          check=True)
    pcm_bytes, peak_mb = map(int, done.stdout.split())
    assert pcm_bytes > 30 * 2**20 and peak_mb < 200, (pcm_bytes, peak_mb)
