"""``--voice espeak``: the espeak-ng program (``apt-get install espeak-ng``), when it is on PATH.

Formant synthesis: robotic, tiny, instant, and in a hundred languages.  Each sentence is one
``espeak-ng --stdin --stdout`` run with a time limit; the text goes in on standard input (never on the
command line, so no text is ever read as an option), the WAV comes back on standard output, at most
:data:`~maic_cli.speech.audio.MAX_AUDIO_BYTES` of it.  Speed is words a minute (175 × speed), pitch is
espeak's 0-99 scale (50 is the voice's own; :data:`PITCH_STEPS` a semitone).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache

from .audio import MAX_AUDIO_BYTES, read_wav
from .port import Audio, SpeechError, Voice

TIMEOUT_SECONDS = 20.0
DEFAULT_VOICE = "en-us"
WORDS_A_MINUTE = 175
PITCH_STEPS = 6.5  # espeak pitch units a semitone (measured: 40 units moved the median F0 by 42 %)
_VOICE_ID = re.compile(r"^[a-z]{2,3}(?:-[a-z0-9]{1,8})*$")


def executable() -> str | None:
    return shutil.which("espeak-ng") or shutil.which("espeak")


@lru_cache(maxsize=1)
def _installed_voices(program: str) -> tuple[str, ...]:
    """The language codes ``espeak-ng --voices`` lists (its second column), English first."""
    try:
        done = subprocess.run([program, "--voices"], capture_output=True, timeout=TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return (DEFAULT_VOICE,)
    codes: list[str] = []
    for line in done.stdout.decode("utf-8", "replace").splitlines()[1:2000]:
        parts = line.split()
        if len(parts) >= 2 and _VOICE_ID.match(parts[1].lower()) and parts[1].lower() not in codes:
            codes.append(parts[1].lower())
    codes.sort(key=lambda code: (code != DEFAULT_VOICE, not code.startswith("en"), code))
    return tuple(codes) or (DEFAULT_VOICE,)


class EspeakEngine:
    name = "espeak"
    shifts_pitch = True  # one voice (en-us) for the class, agents told apart by pitch and speed

    def __init__(self) -> None:
        program = executable()
        if program is None:
            raise SpeechError("espeak", "espeak-ng is not installed", "apt-get install espeak-ng, or --voice local")
        self.program = program

    def voices(self) -> list[str]:
        return list(_installed_voices(self.program))

    def synthesize(self, text: str, voice: Voice) -> Audio:
        voice_id = (voice.id or DEFAULT_VOICE).lower()
        if voice_id not in _installed_voices(self.program):
            raise SpeechError("espeak", f"unknown voice {voice_id!r}; espeak-ng has: "
                              + ", ".join(_installed_voices(self.program)[:30]))
        speed = max(80, min(450, round(WORDS_A_MINUTE * voice.speed)))
        pitch = max(0, min(99, round(50 + PITCH_STEPS * voice.pitch)))
        command = [self.program, "--stdin", "--stdout", "-v", voice_id, "-s", str(speed), "-p", str(pitch)]
        try:
            done = subprocess.run(command, input=text.encode("utf-8"), capture_output=True,
                                  timeout=TIMEOUT_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            raise SpeechError("espeak", f"espeak-ng took longer than {TIMEOUT_SECONDS:.0f} s") from None
        except OSError as exc:
            raise SpeechError("espeak", f"espeak-ng could not run ({exc.strerror or exc})") from None
        if done.returncode != 0 or not done.stdout:
            detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
            raise SpeechError("espeak", f"espeak-ng failed: {detail[0]}")
        return read_wav(done.stdout[:MAX_AUDIO_BYTES], "espeak")
