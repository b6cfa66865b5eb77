"""The class aloud: sentences said in order, each agent in its voice, synthesis ahead of playback, stopped at once.

The engine is a tone generator (tests/speech_doubles.py: not a voice, it makes tones as long as the text); the
player is either an in-process recorder that sleeps for the audio's length, or a real subprocess (a stand-in
player program) to check that a stop kills it.
"""

from __future__ import annotations

import asyncio
import time
import wave
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from typing import ClassVar

import pytest

from maic_cli.chat.speaking import ClassVoice, then_spoken
from maic_cli.engine.events import AgentEndEvent, AgentStartEvent, Event, TextDeltaEvent
from maic_cli.engine.models import AgentConfig
from maic_cli.engine.round import RoundResult
from maic_cli.speech.playback import CommandPlayer, SoundDevicePlayer, find_player, wav_bytes
from maic_cli.speech.port import Audio, SpeechError, Voice
from tests.helpers import agent
from tests.speech_doubles import ToneEngine, alive, install_fake_player, read_player_log

AGENTS = {"teacher": agent("teacher", "teacher"), "ann": agent("ann")}


def voice_for(config: AgentConfig) -> Voice:
    return Voice("tone", config.id, pitch=0.0 if config.role == "teacher" else 5.0)


class RecordingPlayer:
    """Plays by sleeping for the audio's length (times ``scale``); records what and when."""

    name = "recorder"

    def __init__(self, scale: float = 1.0, fail_at: int | None = None) -> None:
        self.scale, self.fail_at = scale, fail_at
        self.played: list[dict[str, object]] = []

    async def play(self, audio: Audio, comment: str = "", on_start: Callable[[], None] | None = None) -> None:
        if on_start is not None:
            on_start()
        entry: dict[str, object] = {"comment": comment, "seconds": audio.seconds, "start": time.monotonic(),
                                    "end": None}
        self.played.append(entry)
        if self.fail_at is not None and len(self.played) == self.fail_at:
            raise SpeechError("recorder", "the device went away")
        await asyncio.sleep(audio.seconds * self.scale)
        entry["end"] = time.monotonic()

    def close(self) -> None:
        pass


def message(agent_id: str, text: str, pieces: int = 3) -> list[Event]:
    mid = f"m_{agent_id}"
    size = max(1, len(text) // pieces)
    deltas = [TextDeltaEvent(message_id=mid, content=text[i:i + size]) for i in range(0, len(text), size)]
    return [AgentStartEvent(message_id=mid, agent_id=agent_id, agent_name=agent_id, avatar="", color=""),
            *deltas, AgentEndEvent(message_id=mid, agent_id=agent_id)]


def make_voice(engine: ToneEngine, player: RecordingPlayer, lines: list[str] | None = None) -> ClassVoice:
    return ClassVoice(engine, player, voice_for=voice_for, agents=AGENTS,
                      normalise=lambda text: text.replace("**", "").strip(),
                      report=(lines if lines is not None else []).append)


def test_sentences_are_said_in_order_each_agent_in_its_own_voice() -> None:
    async def main() -> tuple[ClassVoice, RecordingPlayer]:
        player = RecordingPlayer(scale=0.2)
        voice = make_voice(ToneEngine(), player)
        for event in message("teacher", "Light comes in. **Water** rises.") + message("ann", "Why? I see."):
            voice.event(event)
        await voice.wait_spoken()
        await voice.aclose()
        return voice, player

    voice, player = asyncio.run(main())
    assert [s.text for s in voice.said] == ["Light comes in.", "Water rises.", "Why?", "I see."]
    comments = [str(p["comment"]) for p in player.played]
    assert [c.split()[0] for c in comments] == ["agent=teacher"] * 2 + ["agent=ann"] * 2
    assert "pitch=0" in comments[0] and "pitch=5" in comments[2]
    starts = [float(p["start"]) for p in player.played]  # type: ignore[arg-type]
    ends = [float(p["end"]) for p in player.played]  # type: ignore[arg-type]
    assert all(ends[i] <= starts[i + 1] for i in range(len(starts) - 1))  # one at a time, in order


def test_the_next_sentence_is_synthesized_while_the_current_one_plays() -> None:
    async def main() -> tuple[ToneEngine, RecordingPlayer]:
        engine = ToneEngine(seconds_per_char=0.01, synth_delay=0.05)
        player = RecordingPlayer()
        voice = make_voice(engine, player)
        for event in message("teacher", "First sentence is here. Second one follows. Third ends it.", pieces=9):
            voice.event(event)
        await voice.wait_spoken()
        await voice.aclose()
        return engine, player

    engine, player = asyncio.run(main())
    assert [c["text"] for c in engine.calls] == ["First sentence is here.", "Second one follows.", "Third ends it."]
    assert all(c["thread"] != "MainThread" for c in engine.calls)  # off the event loop
    for n in range(2):  # synthesis of n+1 began before playback of n ended (overlap, not one after the other)
        assert float(engine.calls[n + 1]["start"]) < float(player.played[n]["end"])  # type: ignore[arg-type]


def test_the_event_loop_is_never_blocked_by_synthesis() -> None:
    async def main() -> float:
        voice = make_voice(ToneEngine(synth_delay=0.3), RecordingPlayer(scale=0.0))
        for event in message("teacher", "One. Two. Three."):
            voice.event(event)
        worst, last = 0.0, time.monotonic()
        spoken = asyncio.ensure_future(voice.wait_spoken())
        while not spoken.done():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            worst, last = max(worst, now - last), now
        await voice.aclose()
        return worst

    assert asyncio.run(main()) < 0.15  # three 0.3 s syntheses, the loop ticking throughout


def test_stop_silences_at_once_and_an_aborted_round_stops() -> None:
    async def main() -> tuple[ClassVoice, RecordingPlayer, float]:
        player = RecordingPlayer()
        voice = make_voice(ToneEngine(seconds_per_char=0.05), player)
        for event in message("teacher", "A long first sentence to say. Another. And more."):
            voice.event(event)
        await asyncio.sleep(0.2)
        began = time.monotonic()
        voice.round_finished(RoundResult(reason="aborted"))
        await voice.wait_spoken()
        stopped = time.monotonic() - began
        await asyncio.sleep(0.1)
        await voice.aclose()
        return voice, player, stopped

    voice, player, stopped = asyncio.run(main())
    assert stopped < 0.05
    assert len(player.played) == 1 and player.played[0]["end"] is None  # cut, and nothing after it
    assert voice.said[0].cut


def test_a_speech_error_is_one_line_and_the_voice_falls_silent() -> None:
    async def main() -> tuple[ClassVoice, list[str]]:
        lines: list[str] = []
        voice = make_voice(ToneEngine(fail_on="Two"), RecordingPlayer(scale=0.0), lines)
        for event in message("teacher", "One. Two. Three.") + message("ann", "Four."):
            voice.event(event)
        await voice.wait_spoken()
        await voice.aclose()
        return voice, lines

    voice, lines = asyncio.run(main())
    assert [s.text for s in voice.said] == ["One."]
    assert lines == ["voice: tone: the tone generator was told to fail here; the class goes on in text"]
    assert voice.silent


def test_wait_spoken_says_the_open_half_sentence_first() -> None:
    async def main() -> ClassVoice:
        voice = make_voice(ToneEngine(), RecordingPlayer(scale=0.0))
        for event in message("teacher", "Look at the question")[:-1]:  # no agent_end: a spotlight comes next
            voice.event(event)
        await voice.wait_spoken()
        await voice.aclose()
        return voice

    assert [s.text for s in asyncio.run(main()).said] == ["Look at the question"]


def test_then_spoken_waits_for_the_voice_and_a_cancel_keeps_the_result() -> None:
    async def main() -> tuple[str, float, ClassVoice]:
        voice = make_voice(ToneEngine(seconds_per_char=0.05), RecordingPlayer())

        async def work() -> str:
            for event in message("teacher", "Quite a long sentence to say aloud."):
                voice.event(event)
            return "done"

        task = asyncio.ensure_future(then_spoken(work(), voice))
        await asyncio.sleep(0.2)
        assert not task.done()  # still speaking
        began = time.monotonic()
        task.cancel()
        result = await task
        took = time.monotonic() - began
        await voice.aclose()
        return result, took, voice

    result, took, voice = asyncio.run(main())
    assert result == "done" and took < 0.05 and voice.said[0].cut


def test_wav_bytes_is_a_wav_with_the_voice_comment() -> None:
    audio = Audio(b"\x01\x00\x02\x00\x03\x00", 16000)
    data = wav_bytes(audio, "agent=ann voice=x")
    with wave.open(BytesIO(data)) as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 16000)
        assert wav.readframes(10) == audio.pcm
    assert b"ICMT" in data and b"agent=ann voice=x" in data


def test_a_cancelled_player_process_is_killed_and_reaped(tmp_path: Path) -> None:
    log = install_fake_player(tmp_path, "aplay")
    player = CommandPlayer("aplay", (str(tmp_path / "aplay"), "-q"))

    async def main() -> None:
        task = asyncio.ensure_future(player.play(Audio(b"\0\0" * 8000 * 5, 8000), "agent=teacher"))
        for _ in range(200):
            await asyncio.sleep(0.02)
            if read_player_log(log):
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    played = read_player_log(log)
    assert len(played) == 1 and played[0].seconds == 5.0 and played[0].end is None
    assert played[0].voice["agent"] == "teacher"
    assert not alive(played[0].pid)
    assert player._folder is not None
    assert not any(player._folder.iterdir())  # the sentence's file is removed
    player.close()
    assert not player._folder


def test_a_player_that_fails_is_a_speech_error(tmp_path: Path) -> None:
    program = tmp_path / "paplay"
    program.write_text("#!/bin/sh\necho 'Connection refused' >&2\nexit 1\n")
    program.chmod(0o755)
    player = CommandPlayer("paplay", (str(program),))
    with pytest.raises(SpeechError, match="paplay: the player exited with 1: Connection refused"):
        asyncio.run(player.play(Audio(b"\0\0" * 10, 8000)))
    player.close()


def test_find_player_takes_the_first_the_system_has(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_fake_player(tmp_path, "aplay")
    install_fake_player(tmp_path, "ffplay")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("MAIC_AUDIO_PLAYER", raising=False)
    monkeypatch.setitem(__import__("sys").modules, "sounddevice", None)  # not installed
    found = find_player()
    assert isinstance(found, CommandPlayer) and found.argv == (str(tmp_path / "aplay"), "-q")
    monkeypatch.setenv("MAIC_AUDIO_PLAYER", "ffplay")
    found = find_player()
    assert isinstance(found, CommandPlayer) and found.name == "ffplay" and "-autoexit" in found.argv
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert find_player() is None


class FakeStream:
    """Stands in for sounddevice.RawOutputStream: takes blocks, sleeps a little for each."""

    written: ClassVar[list[bytes]] = []
    aborted = False

    def __init__(self, **options: object) -> None:
        self.options = options

    def __enter__(self) -> FakeStream:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def write(self, block: bytes) -> None:
        FakeStream.written.append(block)
        time.sleep(0.05)

    def abort(self) -> None:
        FakeStream.aborted = True


def test_sounddevice_plays_in_a_thread_and_stops_within_a_block() -> None:
    module = type("sounddevice", (), {"RawOutputStream": FakeStream})
    player = SoundDevicePlayer(module)

    async def main() -> float:
        task = asyncio.ensure_future(player.play(Audio(b"\0\0" * 8000 * 3, 8000)))  # 30 blocks
        await asyncio.sleep(0.2)
        began = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - began

    took = asyncio.run(main())
    assert FakeStream.aborted and 1 <= len(FakeStream.written) < 30 and took < 0.2


def test_a_silent_voice_starts_on_a_long_sentence_s_first_clause() -> None:
    async def main() -> ClassVoice:
        voice = make_voice(ToneEngine(), RecordingPlayer(scale=0.0))
        text = "Carbon dioxide comes in through the pores, water comes up from the roots, and light powers it."
        for event in message("teacher", text, pieces=12):
            voice.event(event)
            await asyncio.sleep(0)
        await voice.wait_spoken()
        await voice.aclose()
        return voice

    said = [s.text for s in asyncio.run(main()).said]
    assert said[0] == "Carbon dioxide comes in through the pores,"  # heard before the sentence ended
    assert " ".join(said) == ("Carbon dioxide comes in through the pores, water comes up from the roots, "
                              "and light powers it.")

