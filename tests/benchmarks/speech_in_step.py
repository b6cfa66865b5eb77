"""Benchmark: from a sentence's end in the text stream to its first audio (``maic chat --voice``), offline.

Run:  python tests/benchmarks/speech_in_step.py [--voice local|espeak] [--trials N]

A teacher's reply streams into :class:`~maic_cli.chat.speaking.ClassVoice` as a model's would (4-9 characters
every 25 ms); its sentences are synthesized by the real offline engine (Piper's voice with the ``voices`` extra,
else espeak-ng) and handed to a player.  Measured for each reply's first sentence, when the player is idle:

* **to first audio**: from the moment the sentence's end arrived in the text (the white space after its full
  stop) to the moment the player process was started with its sound — goal ≤ 0.4 s once warm.  (The stand-in
  player of tests/speech_doubles.py is a Python script that logs its own start too, a Python start-up later than
  a real player would make a sound; that number is printed beside it.)
* **synthesis**: the engine's time for the sentence, and its real-time factor (synthesis / audio length);
* **gap**: from the end of sentence n's audio to the start of sentence n+1's, within a reply (0 when n+1 was
  synthesized while n played, as it should be).

The first reply warms the engine up (loading Piper's model) and is reported apart.  No cache: every sentence is
synthesized (the replies are new text each time).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from maic_cli.chat.speaking import ClassVoice  # noqa: E402
from maic_cli.engine.events import AgentEndEvent, AgentStartEvent, TextDeltaEvent  # noqa: E402
from maic_cli.speech.cast import cast  # noqa: E402
from maic_cli.speech.factory import check_ready, make_engine  # noqa: E402
from maic_cli.speech.normalize import for_speech  # noqa: E402
from maic_cli.speech.playback import CommandPlayer  # noqa: E402
from maic_cli.speech.port import Audio, SpeechEngine, Voice  # noqa: E402
from maic_cli.speech.spec import VoiceSpec  # noqa: E402
from tests.helpers import agent  # noqa: E402
from tests.speech_doubles import install_fake_player, read_player_log  # noqa: E402

REPLIES = [
    "Plants take in carbon dioxide through tiny pores. Water comes up from the roots.",
    "Light gives the plant its energy. The leaf turns that energy into sugar.",
    "Oxygen is what is left over. The plant lets it out into the air.",
    "Most of a tree's mass comes from the air. That surprises almost everyone.",
    "Chlorophyll is the green pigment. It catches red and blue light best.",
    "Without light the plant cannot make food. It slowly uses up what it stored.",
    "A fraction like three quarters is a part of a whole. Here the whole is the day.",
    "Glucose is a small sugar. The plant builds starch and wood out of it.",
]


class CPUTimed:
    """The engine, with the CPU seconds of each synthesis (all of this process's threads: Piper's pool too)."""

    def __init__(self, engine: SpeechEngine) -> None:
        self.engine, self.name, self.cpu = engine, engine.name, []  # type: ignore[var-annotated]

    def voices(self) -> list[str]:
        return self.engine.voices()

    def warm(self) -> None:
        warm = getattr(self.engine, "warm", None)
        if callable(warm):
            warm()

    def synthesize(self, text: str, voice: Voice) -> Audio:
        start = time.process_time()
        try:
            return self.engine.synthesize(text, voice)
        finally:
            self.cpu.append(time.process_time() - start)


async def stream(voice: ClassVoice, number: int, text: str) -> None:
    mid = f"m{number}"
    voice.event(AgentStartEvent(message_id=mid, agent_id="teacher", agent_name="T", avatar="", color=""))
    at = 0
    while at < len(text):
        size = 4 + (at * 7 + number) % 6
        voice.event(TextDeltaEvent(message_id=mid, content=text[at:at + size]))
        at += size
        await asyncio.sleep(0.025)
    voice.event(AgentEndEvent(message_id=mid, agent_id="teacher"))


async def main(voice_name: str, trials: int) -> None:
    spec = VoiceSpec.parse(voice_name)
    check_ready(spec)
    made = make_engine(spec)  # no cache: every sentence synthesized
    assert made is not None
    engine = CPUTimed(made)
    teacher = agent("teacher", "teacher")
    voices = cast([teacher], engine)
    folder = Path(tempfile.mkdtemp(prefix="speech-bench-"))
    log = install_fake_player(folder, "aplay")
    os.environ["FAKE_PLAYER_SCALE"] = "0.25"  # a quarter of each sentence's length: the benchmark is shorter
    player = CommandPlayer("aplay", (str(folder / "aplay"), "-q"))
    voice = ClassVoice(engine, player, voice_for=lambda a: voices[a.id], agents={"teacher": teacher},
                       normalise=for_speech, report=print)
    voice.warm()
    replies = (REPLIES * (trials // len(REPLIES) + 2))[:trials + 1]
    for number, text in enumerate(replies):
        await stream(voice, number, text)
        await voice.wait_spoken()
    await voice.aclose()

    played = read_player_log(log)
    said = voice.said
    assert len(played) == len(said), (len(played), len(said))
    firsts = list(range(0, len(said), 2))  # each reply is two sentences: its first is heard from idle
    wall = time.time() - time.monotonic()  # the stand-in logs wall-clock time; ours is monotonic
    to_audio = [said[i].latency or 0.0 for i in firsts]
    to_stand_in = [played[i].start - wall - said[i].complete for i in firsts]
    synth = [(s.synthesized or 0.0) - s.complete for s in said]
    rtf = [synth[i] / played[i].seconds for i in range(len(said)) if played[i].seconds]
    gaps = [(said[i + 1].started or 0.0) - (said[i].finished or 0.0) for i in firsts if i + 1 < len(said)]
    print(f"engine: {spec.name} ({type(made).__name__}); player: stand-in ({player.argv[0]}); "
          f"{len(replies) - 1} replies after the first, 2 sentences each")
    print(f"first reply (cold): to first audio {to_audio[0]:.3f} s, synthesis {synth[0]:.3f} s")
    warm = to_audio[1:]
    print(f"to first audio (player process started), warm: median {statistics.median(warm):.3f} s, "
          f"max {max(warm):.3f} s; to the stand-in's own first line (a Python start-up later): median "
          f"{statistics.median(to_stand_in[1:]):.3f} s")
    print(f"synthesis per sentence, warm: median {statistics.median(synth[2:]):.3f} s, "
          f"real-time factor median {statistics.median(rtf[2:]):.3f}; CPU seconds median "
          f"{statistics.median(engine.cpu[2:]):.3f} (load average now {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores)")
    print(f"gap between a reply's two sentences: median {statistics.median(gaps[1:]):.3f} s, max {max(gaps[1:]):.3f} s")
    print(f"goal <= 0.4 s to first audio once warm: {'met' if max(warm) <= 0.4 else 'NOT met'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voice", default=None, help="local or espeak (default: local if installed, else espeak)")
    parser.add_argument("--trials", type=int, default=8)
    arguments = parser.parse_args()
    if arguments.voice is None:
        from maic_cli.speech import piper_engine

        arguments.voice = "local" if piper_engine.available() else "espeak"
    asyncio.run(main(arguments.voice, arguments.trials))
