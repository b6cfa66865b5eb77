"""``maic run --voice ENGINE``: each run's class voiced into the batch folder, its synthesis counted apart.

When a run's class has ended, its transcript is voiced like ``maic replay --audio --captions``: one track
(``OUT/audio/<run_id>.wav``) and captions that follow it (``OUT/captions/<run_id>.vtt``).  What was synthesized
(sentences, characters, seconds) is the run's :class:`~.run_results.SpeechStat`, priced by the engine's price per
million characters where it is known (``tts-1`` $15, ``tts-1-hd`` $30; an offline engine costs nothing), else
unknown; the report sums them in ``speech``, apart from the model's calls.  A voice that fails is the run's
``speech.error``: the class's own result stands.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.events import Event
from ..errors import MaicError
from ..media.export import Targets, export_media, speakers
from ..media.script import LearnerSaid, from_class
from ..media.speakers import voices_for
from ..media.voicing import CountingEngine, SpeechUsage
from ..speech.port import SpeechEngine
from ..store.paths import private_dir
from ..store.transcript import EventLine, LearnerLine, read_transcript
from ..untrusted import one_line
from .run_results import SpeechStat

# US dollars per million characters sent, by the model's name (its last part: openai/tts-1 → tts-1).
PRICE_PER_MILLION = {"tts-1": 15.0, "tts-1-hd": 30.0}
OFFLINE = ("local", "espeak")


def price_per_million(engine: str) -> float | None:
    """Dollars per million characters of ``engine`` (a spec's name): 0 offline, a provider's known price, else
    None.  A server of one's own (``openai-compatible/…``) is never priced: its model name says nothing of it."""
    if engine in OFFLINE:
        return 0.0
    if engine.startswith("openai-compatible"):
        return None
    return PRICE_PER_MILLION.get(engine.rsplit("/", 1)[-1].lower())


@dataclass
class BatchVoice:
    """The engine a batch speaks with (one sentence at a time: runs are voiced in threads), how a shown sentence
    is spoken, and the speech cache (None: none)."""

    engine: SpeechEngine
    name: str  # the engine as the report names it (local, espeak, openai/tts-1 …)
    speakable: Callable[[str], str]
    cache: Path | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def for_run(self, usage: SpeechUsage) -> SpeechEngine:
        """The engine of one run: what it synthesizes (not what the cache had) counted into ``usage``."""
        counted = CountingEngine(self.engine, usage, self.lock)
        if self.cache is None:
            return counted
        from ..speech.cache import CachedEngine, SpeechCache

        return CachedEngine(counted, SpeechCache(self.cache))


def voice_run(voice: BatchVoice, out: Path, run_id: str, transcript_path: Path) -> SpeechStat:
    """Voice one finished run's transcript into ``out``; blocking (a batch runs it in a thread)."""
    stat = SpeechStat(engine=voice.name)
    usage = SpeechUsage(engine=voice.name)
    engine = voice.for_run(usage)
    try:
        transcript = read_transcript(transcript_path)
        steps: list[Event | LearnerSaid] = []
        for entry in transcript.entries:
            if isinstance(entry, LearnerLine):
                steps.append(LearnerSaid(entry.text))
            elif isinstance(entry, EventLine):
                steps.append(entry.event)
        header = transcript.header
        items = from_class(header.store, steps, learner=header.profile.nickname, title=header.scenario or run_id)
        for folder in ("audio", "captions"):
            private_dir(out / folder)
        targets = Targets(audio=out / "audio" / f"{run_id}.wav", captions=out / "captions" / f"{run_id}.vtt")
        made = export_media(items, targets, engine=engine, voice_for=voices_for(header.agents, engine, speakers(items)),
                            speakable=voice.speakable, title=header.scenario or run_id)
    except (MaicError, OSError) as exc:
        stat.error = one_line(str(exc))[:300]
        return stat
    stat.sentences, stat.characters, stat.seconds = usage.sentences, usage.characters, round(usage.seconds, 3)
    stat.cached = max(0, made.usage.sentences - usage.sentences)  # said, but found in the cache: not paid for
    price = price_per_million(voice.name)
    stat.cost = None if price is None else round(usage.characters * price / 1_000_000, 6)
    stat.audio, stat.captions = str(targets.audio), str(targets.captions)
    return stat
