"""``maic replay T --audio/--captions/--script/--video``: a recorded class voiced, captioned and filmed.

The transcript's learner lines and events become the media room's items (:func:`class_items`); the class's
agents are cast in the engine's voices; :func:`maic_cli.media.export.export_media` does the rest.
"""

from __future__ import annotations

from collections.abc import Callable

from ..engine.events import Event
from ..media.export import Made, Targets, export_media, speakers
from ..media.script import Item, LearnerSaid, from_class
from ..media.speakers import voices_for
from ..speech.port import SpeechEngine
from ..store.transcript import EventLine, LearnerLine, Transcript

Progress = Callable[[str, int, int], None]


def title_of(transcript: Transcript) -> str:
    header = transcript.header
    lesson = next((e.event.title for e in transcript.entries
                   if isinstance(e, EventLine) and e.event.type == "lesson"), None)
    return f"maic class: {header.scenario or lesson or transcript.path.stem}"


def class_items(transcript: Transcript) -> list[Item]:
    steps: list[Event | LearnerSaid] = []
    for entry in transcript.entries:
        if isinstance(entry, LearnerLine):
            steps.append(LearnerSaid(entry.text))
        elif isinstance(entry, EventLine):
            steps.append(entry.event)
    return from_class(transcript.header.store, steps, learner=transcript.header.profile.nickname,
                      title=title_of(transcript))


def export_class_media(transcript: Transcript, targets: Targets, engine: SpeechEngine,
                       speakable: Callable[[str], str], progress: Progress | None = None) -> Made:
    items = class_items(transcript)
    voice = voices_for(transcript.header.agents, engine, speakers(items))
    return export_media(items, targets, engine=engine, voice_for=voice, speakable=speakable,
                        title=title_of(transcript), progress=progress)
