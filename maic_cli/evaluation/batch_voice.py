"""``maic run --voice ENGINE``: each run's class voiced into the batch folder, its synthesis counted apart.

When a run's class has ended, its transcript is voiced like ``maic replay --audio --captions``: one track
(``OUT/audio/<run_id>.wav``) and captions that follow it (``OUT/captions/<run_id>.vtt``).  What was synthesized
(sentences, characters, seconds) is the run's :class:`~.run_results.SpeechStat`, priced by the engine's price per
million characters where it is known (``tts-1`` $15, ``tts-1-hd`` $30; an offline engine costs nothing), else
unknown; the report sums them in ``speech``, apart from the model's calls.  A voice that fails is the run's
``speech.error``: the class's own result stands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..engine.events import Event
from ..errors import MaicError
from ..media.export import Targets, export_media, speakers
from ..media.script import LearnerSaid, from_class
from ..media.speakers import voices_for
from ..speech.port import SpeechEngine
from ..store.paths import private_dir
from ..store.transcript import EventLine, LearnerLine, read_transcript
from ..untrusted import one_line
from .run_results import SpeechStat

# US dollars per million characters sent, by the model's name (its last part: openai/tts-1 → tts-1).
PRICE_PER_MILLION = {"tts-1": 15.0, "tts-1-hd": 30.0}
OFFLINE = ("local", "espeak")


def price_per_million(engine: str) -> float | None:
    if engine in OFFLINE:
        return 0.0
    return PRICE_PER_MILLION.get(engine.rsplit("/", 1)[-1].lower())


@dataclass
class BatchVoice:
    """The engine a batch speaks with, and how a shown sentence is spoken."""

    engine: SpeechEngine
    name: str  # the engine as the report names it (local, espeak, openai/tts-1 …)
    speakable: Callable[[str], str]


def voice_run(voice: BatchVoice, out: Path, run_id: str, transcript_path: Path) -> SpeechStat:
    """Voice one finished run's transcript into ``out``; blocking (a batch runs it in a thread)."""
    stat = SpeechStat(engine=voice.name)
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
        made = export_media(items, targets, engine=voice.engine,
                            voice_for=voices_for(header.agents, voice.engine, speakers(items)),
                            speakable=voice.speakable, title=header.scenario or run_id)
    except (MaicError, OSError) as exc:
        stat.error = one_line(str(exc))[:300]
        return stat
    stat.sentences, stat.characters = made.usage.sentences, made.usage.characters
    stat.seconds = round(made.usage.seconds, 3)
    price = price_per_million(voice.name)
    stat.cost = None if price is None else round(made.usage.characters * price / 1_000_000, 6)
    stat.audio, stat.captions = str(targets.audio), str(targets.captions)
    return stat
