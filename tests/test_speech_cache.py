"""The sentence cache (speech/cache.py): a hit costs nothing, LRU eviction past the cap, a bad entry is never played."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from maic_cli.speech.cache import MAGIC, CachedEngine, SpeechCache, cache_key
from maic_cli.speech.port import Audio, Voice

VOICE = Voice("fake", "v1", 1.0, 0.0)


class CountingEngine:
    """A real engine's shape: each call makes distinct audio from its text and voice, and is counted."""

    name = "fake"

    def __init__(self) -> None:
        self.calls: list[tuple[str, Voice]] = []

    def voices(self) -> list[str]:
        return ["v1", "v2"]

    def synthesize(self, text: str, voice: Voice) -> Audio:
        self.calls.append((text, voice))
        seed = sum(map(ord, text + voice.id)) + int(voice.pitch * 10) + int(voice.speed * 100)
        return Audio(b"".join(struct.pack("<h", (seed * i) % 20000 - 10000) for i in range(2000 + len(text))), 22050)


def test_a_repeated_sentence_is_synthesised_once(tmp_path: Path) -> None:
    engine = CountingEngine()
    cached = CachedEngine(engine, SpeechCache(tmp_path / "c"))
    first = cached.synthesize("Hello class.", VOICE)
    again = cached.synthesize("Hello class.", VOICE)
    assert again == first and len(engine.calls) == 1
    assert cached.cache.hits == 1
    assert oct((tmp_path / "c").stat().st_mode & 0o777) == "0o700"


@pytest.mark.parametrize("other", [("Hello class!", VOICE), ("Hello class.", Voice("fake", "v2")),
                                   ("Hello class.", Voice("fake", "v1", speed=1.1)),
                                   ("Hello class.", Voice("fake", "v1", pitch=2.0))])
def test_text_voice_speed_and_pitch_each_make_a_new_entry(tmp_path: Path, other: tuple[str, Voice]) -> None:
    engine = CountingEngine()
    cached = CachedEngine(engine, SpeechCache(tmp_path))
    cached.synthesize("Hello class.", VOICE)
    cached.synthesize(*other)
    assert len(engine.calls) == 2
    assert cache_key("fake", VOICE, "x") != cache_key("other", VOICE, "x")


def test_least_recently_used_entries_go_first_past_the_cap(tmp_path: Path) -> None:
    engine = CountingEngine()
    entry = len(engine.synthesize("sentence 0", VOICE).pcm) + 24
    cache = SpeechCache(tmp_path, max_bytes=3 * entry + 10)
    cached = CachedEngine(CountingEngine(), cache)
    for n in range(3):
        cached.synthesize(f"sentence {n}", VOICE)
        path = tmp_path / f"{cache_key('fake', VOICE, f'sentence {n}')}.pcm"
        os.utime(path, (1000 + n, 1000 + n))  # a clear order of use
    cached.synthesize("sentence 0", VOICE)  # a hit: now the most recent
    cached.synthesize("sentence 3", VOICE)  # over the cap: the least recently used (1) goes
    assert cache.size() <= cache.max_bytes
    kept = {p.name for p in tmp_path.iterdir()}
    assert f"{cache_key('fake', VOICE, 'sentence 1')}.pcm" not in kept
    assert {f"{cache_key('fake', VOICE, f'sentence {n}')}.pcm" for n in (0, 2, 3)} <= kept


@pytest.mark.parametrize("damage", ["truncate", "flip", "magic", "empty", "longer"])
def test_a_damaged_entry_is_synthesised_again_never_played(tmp_path: Path, damage: str) -> None:
    engine = CountingEngine()
    cached = CachedEngine(engine, SpeechCache(tmp_path))
    good = cached.synthesize("Hello class.", VOICE)
    path = tmp_path / f"{cache_key('fake', VOICE, 'Hello class.')}.pcm"
    data = path.read_bytes()
    assert data.startswith(MAGIC)
    broken = {"truncate": data[: len(data) // 2], "flip": data[:-5] + bytes([data[-5] ^ 0xFF]) + data[-4:],
              "magic": b"NOTMAGIC" + data[8:], "empty": b"", "longer": data + b"\x00\x00"}[damage]
    path.write_bytes(broken)
    again = cached.synthesize("Hello class.", VOICE)
    assert again == good and len(engine.calls) == 2  # said again, not the damaged bytes
    assert path.read_bytes() == data  # and the entry is whole again


def test_a_link_in_the_cache_is_not_followed(tmp_path: Path) -> None:
    engine = CountingEngine()
    cached = CachedEngine(engine, SpeechCache(tmp_path))
    target = tmp_path / "elsewhere"
    cached.synthesize("Hello class.", VOICE)
    path = tmp_path / f"{cache_key('fake', VOICE, 'Hello class.')}.pcm"
    target.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(target)
    cached.synthesize("Hello class.", VOICE)
    assert len(engine.calls) == 2 and not path.is_symlink()


def test_a_cache_that_cannot_be_written_does_not_stop_the_voice(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    cached = CachedEngine(CountingEngine(), SpeechCache(blocked / "cache"))
    audio = cached.synthesize("Hello class.", VOICE)
    assert audio.pcm and cached.cache.problem is not None and "cannot be written" in cached.cache.problem


def test_a_fifo_planted_under_a_sentences_key_is_dropped_not_waited_on(tmp_path: Path) -> None:
    """Issue 35 (4): opening a FIFO for reading waits for a writer; the class must not."""
    import threading

    engine = CountingEngine()
    cached = CachedEngine(engine, SpeechCache(tmp_path))
    path = tmp_path / f"{cache_key('fake', VOICE, 'Hello class.')}.pcm"
    os.mkfifo(path)
    said: list[Audio] = []
    worker = threading.Thread(target=lambda: said.append(cached.synthesize("Hello class.", VOICE)), daemon=True)
    worker.start()
    worker.join(5)
    if worker.is_alive():  # free the stuck reader, then fail
        with open(path, "wb"):
            pass
        pytest.fail("the cache waited on a FIFO")
    assert len(said) == 1 and said[0].pcm and len(engine.calls) == 1
    assert path.is_file() and not path.is_symlink()  # the FIFO is gone; the sentence is cached in its place
