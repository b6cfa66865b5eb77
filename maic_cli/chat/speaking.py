"""The class aloud (``maic chat --voice``): each agent's speech said in its own voice, a sentence at a time.

:class:`ClassVoice` sits on the runner's hooks beside the view.  It splits each message's ``text_delta`` pieces
into sentences as they complete (``speech/sentence_stream.py``), hands each to the engine in a worker thread the
moment it is complete (so sentence n+1 is synthesized while sentence n plays), and plays them in the order they
were said through one player (``speech/playback.py``), awaited on the event loop.  Nothing here blocks the loop.

* When nothing is being said, a long sentence's first clause (to a comma, at least 24 characters in) goes at
  once, so the first audio does not wait for the whole sentence; the rest follows as its own piece.
* Every sentence is made speakable first (``normalise``: no markup, element ids, inert addresses or code read
  out character by character; formulas as words); one with nothing left to say is skipped.
* :meth:`ClassVoice.wait_spoken` is what a scripted lecture awaits before a spotlight or laser step and at its
  end (``LessonPlayer.wait_spoken``): the sentence before the step has been heard when the step is shown.  The
  chat awaits it after a round too (:func:`then_spoken`), so the prompt comes back when the class has finished
  speaking.
* :meth:`ClassVoice.stop` (a round or lecture cancelled by Ctrl-C or a key) empties the queue and kills the
  player at once.
* A speech error is one line (``report``) and the class goes on in text: the voice falls silent.

The timings of every sentence (complete in the text, synthesized, first audio, done) are kept in
:attr:`ClassVoice.said` for ``tests/benchmarks/speech_in_step.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from ..engine.events import Event
from ..engine.models import AgentConfig
from ..engine.round import RoundResult
from ..engine.runner import RunnerHooks
from ..speech.playback import Player
from ..speech.port import Audio, SpeechEngine, SpeechError, Voice
from ..speech.sentence_stream import SentenceStream

T = TypeVar("T")


@dataclass
class Said:
    """One sentence and when each thing happened to it (``time.monotonic()`` seconds)."""

    text: str
    agent_id: str
    voice: Voice
    complete: float  # its end arrived in the text stream
    synthesized: float | None = None
    started: float | None = None  # its first audio: the player (its process, the stream) was started with it
    finished: float | None = None
    cut: bool = False  # stopped before its end

    def heard(self) -> None:
        self.started = time.monotonic()

    @property
    def latency(self) -> float | None:
        """From the sentence's end in the text to its first audio."""
        return None if self.started is None else self.started - self.complete


@dataclass
class _Queued:
    said: Said
    audio: asyncio.Future[Audio]


class ClassVoice(RunnerHooks):
    def __init__(self, engine: SpeechEngine, player: Player, *, voice_for: Callable[[AgentConfig], Voice],
                 agents: dict[str, AgentConfig], normalise: Callable[[str], str] = str.strip,
                 report: Callable[[str], None] = lambda line: None) -> None:
        self.engine, self.player = engine, player
        self.voice_for, self.agents, self.normalise, self.report = voice_for, agents, normalise, report
        self.said: list[Said] = []
        self.silent = False  # a speech error said once: the rest of the class is text
        self._streams: dict[str, tuple[str, SentenceStream]] = {}  # message id -> (agent id, its sentences)
        self._voices: dict[str, Voice] = {}
        self._queue: asyncio.Queue[_Queued] = asyncio.Queue()
        self._idle = asyncio.Event()
        self._idle.set()
        self._pending = 0  # queued or playing
        self._synth = ThreadPoolExecutor(max_workers=1, thread_name_prefix="maic-speech")
        self._worker: asyncio.Task[None] | None = None
        self._current: _Queued | None = None  # taken from the queue: being synthesized or played

    # -- the runner's hooks --------------------------------------------------------------------------
    def event(self, event: Event) -> None:
        if self.silent:
            return
        if event.type == "agent_start":
            self._streams[event.message_id] = (event.agent_id, SentenceStream())
        elif event.type == "text_delta" and event.message_id in self._streams:
            agent_id, stream = self._streams[event.message_id]
            for sentence in stream.feed(event.content):
                self._say(agent_id, sentence)
            if self._pending == 0 and (clause := stream.clause()) is not None:
                self._say(agent_id, clause)  # silent: a long sentence's first clause is heard while it streams
        elif event.type == "agent_end" and event.message_id in self._streams:
            agent_id, stream = self._streams.pop(event.message_id)
            rest = stream.flush()
            if rest:
                self._say(agent_id, rest)

    def round_finished(self, result: RoundResult) -> None:
        if result.reason == "aborted":
            self.stop()
        self._streams.clear()  # a message left open (an error) says no more

    # -- saying ------------------------------------------------------------------------------------------
    def warm(self) -> None:
        """Let the engine load its voice now, in its thread, so the first sentence is not the slow one."""
        warm = getattr(self.engine, "warm", None)
        if callable(warm):
            self._synth.submit(warm).add_done_callback(lambda done: done.exception())  # a failure shows later

    def voice(self, agent_id: str) -> Voice:
        voice = self._voices.get(agent_id)
        if voice is None:
            agent = self.agents.get(agent_id) or AgentConfig.model_construct(id=agent_id, name=agent_id, role="student")
            voice = self._voices[agent_id] = self.voice_for(agent)
        return voice

    def _say(self, agent_id: str, sentence: str) -> None:
        text = self.normalise(sentence)
        if not text or self.silent:
            return
        voice = self.voice(agent_id)
        said = Said(text=text, agent_id=agent_id, voice=voice, complete=time.monotonic())
        loop = asyncio.get_running_loop()
        audio = loop.run_in_executor(self._synth, self._synthesize, said)  # starts now, beside the playing
        self._pending += 1
        self._idle.clear()
        self._queue.put_nowait(_Queued(said, audio))
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._play_all(), name="maic-speech-player")

    def _synthesize(self, said: Said) -> Audio:  # in the worker thread
        audio = self.engine.synthesize(said.text, said.voice)
        said.synthesized = time.monotonic()
        return audio

    async def _play_all(self) -> None:
        while True:
            item = self._current = await self._queue.get()
            try:
                audio = await item.audio
                self.said.append(item.said)
                await self.player.play(audio, _comment(item.said), on_start=item.said.heard)
                item.said.finished = time.monotonic()
            except asyncio.CancelledError:  # stop(): it has counted this one
                raise
            except SpeechError as exc:
                self._fail(str(exc))
            except Exception as exc:  # noqa: BLE001 - an engine's own failure: one line, the class goes on
                self._fail(f"{getattr(self.engine, 'name', 'speech')}: {type(exc).__name__}: {exc}")
            self._current = None
            self._done()

    def _done(self) -> None:
        self._pending = max(0, self._pending - 1)
        if self._pending == 0:
            self._idle.set()

    def _fail(self, line: str) -> None:
        if not self.silent:
            self.silent = True
            self.report(f"voice: {line}; the class goes on in text")
        self._drop_queue()

    # -- pacing and stopping -----------------------------------------------------------------------------
    async def wait_spoken(self) -> None:
        """Say what is still open (a half sentence before a spotlight) and return once all has been heard."""
        for agent_id, stream in self._streams.values():
            rest = stream.flush()
            if rest:
                self._say(agent_id, rest)
        await self._idle.wait()

    def stop(self) -> None:
        """Silence now: nothing queued is said, the sentence playing is cut (its player killed)."""
        self._drop_queue()
        for _, stream in self._streams.values():
            stream.flush()
        current, self._current = self._current, None
        if current is not None:
            current.said.cut, current.said.finished = True, time.monotonic()
            _discard(current.audio)
            self._done()
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()  # the player's play() kills its process and reaps it
        self._worker = None

    def _drop_queue(self) -> None:
        while not self._queue.empty():
            _discard(self._queue.get_nowait().audio)
            self._done()

    async def aclose(self) -> None:
        """Stop, wait for the player to be reaped, let the engine's thread go, remove temporary files."""
        worker = self._worker
        self.stop()
        if worker is not None:
            await asyncio.gather(worker, return_exceptions=True)
        self._synth.shutdown(wait=False, cancel_futures=True)
        self.player.close()


def _discard(audio: asyncio.Future[Audio]) -> None:
    """A sentence not to be said: never synthesized if it has not started; a failure it already had is not
    reported (asyncio would print it when the future is collected)."""
    if not audio.cancel() and not audio.cancelled():
        audio.exception()


def _comment(said: Said) -> str:
    voice = said.voice
    return (f"agent={said.agent_id} engine={voice.engine} voice={voice.id} speed={voice.speed:g} "
            f"pitch={voice.pitch:g} text={said.text}")


async def then_spoken(work: Awaitable[T], voice: ClassVoice | None) -> T:
    """``work``, then the class's voice until it has said everything; cancelled (Ctrl-C, a key) while speaking,
    the voice stops at once and the work's result stands."""
    try:
        result = await work
    except asyncio.CancelledError:
        if voice is not None:
            voice.stop()
        raise
    if voice is not None:
        try:
            await voice.wait_spoken()
        except asyncio.CancelledError:
            voice.stop()
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
    return result


def open_class_voice(engine: SpeechEngine, voices: dict[str, Voice], *, agents: dict[str, AgentConfig],
                     report: Callable[[str], None], info: Callable[[str], object],
                     normalise: Callable[[str], str] | None = None) -> ClassVoice | None:
    """The class's voice through the first player this system has; none: one line, and the class is silent.
    ``voices``: each agent's (``speech/cast.py``); ``normalise``: default, the speech room's text for speech."""
    from ..speech.playback import NO_PLAYER, find_player

    player = find_player()
    if player is None:
        info(NO_PLAYER)
        return None
    if normalise is None:
        from ..speech.normalize import for_speech

        normalise = for_speech
    fallback = Voice(engine.name, next(iter(voices.values())).id if voices else "")
    voice = ClassVoice(engine, player, voice_for=lambda agent: voices.get(agent.id, fallback), agents=agents,
                       normalise=normalise, report=report)
    voice.warm()
    info(f"The class speaks aloud ({engine.name}, played by {player.name}); a key or Ctrl-C stops it.")
    return voice
