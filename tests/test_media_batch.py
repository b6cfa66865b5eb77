"""``maic run --voice``: each run's audio and captions in the batch folder, synthesis counted and priced apart."""

from __future__ import annotations

import json
import shutil
import wave
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.evaluation.batch_voice import price_per_million
from maic_cli.evaluation.run_results import load_runs
from tests.helpers import action, decision, reply

runner = CliRunner()
SCENARIO = """id: sky
class:
  agents: [teacher, curious_student]
learner: {nickname: Ana}
messages:
  - Why is the sky blue?
"""
ROUND = (decision("teacher"), reply("Sunlight scatters. Blue scatters the most.",
                                    action("wb_draw_text", content="Rayleigh")),
         decision("curious_student"), reply("So the sky is blue because of the air?"), decision("USER"))


def test_provider_prices_are_per_million_characters_where_known() -> None:
    assert price_per_million("openai/tts-1") == 15.0 and price_per_million("tts-1-hd") == 30.0
    assert price_per_million("local") == 0.0 and price_per_million("espeak") == 0.0
    assert price_per_million("openai/gpt-4o-mini-tts") is None  # priced by tokens: not known here
    assert price_per_million("openai-compatible/tts-1") is None  # a server of one's own: not known


def test_a_batch_voiced_by_a_speech_server_gives_each_speaker_a_voice_and_an_unknown_price(tmp_path: Path) -> None:
    from maic_cli.testing.speech_server import LoopbackSpeechServer

    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    replies = tmp_path / "script.json"
    replies.write_text(json.dumps(list(ROUND)), encoding="utf-8")
    out = tmp_path / "out"
    with LoopbackSpeechServer() as server:
        result = runner.invoke(app, ["run", str(scenario), "--model", f"scripted:{replies}", "--out", str(out),
                                     "--plain", "--voice", "openai-compatible", "--voice-api-base", server.base_url])
        requests = list(server.requests)
    assert result.exit_code == 0, result.output
    voices = {r["input"]: r["voice"] for r in requests}
    assert len(requests) == 4 and voices["Sunlight scatters."] == voices["Blue scatters the most."]
    # the teacher, the classmate and the learner: three voices
    assert len({voices["Why is the sky blue?"], voices["Sunlight scatters."],
                voices["So the sky is blue because of the air?"]}) == 3
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["speech"]["sentences"] == 4 and report["speech"]["cost"] is None
    assert report["speech"]["engine"] == "openai-compatible/tts-1"
    assert "cost unknown" in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_a_voiced_batch_writes_each_runs_audio_and_captions_and_counts_its_synthesis(tmp_path: Path) -> None:
    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    replies = tmp_path / "script.json"
    replies.write_text(json.dumps(list(ROUND)), encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", f"scripted:{replies}", "--out", str(out),
                                 "--plain", "--voice", "espeak", "--repeat", "2", "-j", "1"])
    assert result.exit_code == 0, result.output
    runs = load_runs(out)
    assert len(runs) == 2
    for run in runs:
        assert run.speech is not None and run.speech.error is None
        audio, captions = out / "audio" / f"{run.run_id}.wav", out / "captions" / f"{run.run_id}.vtt"
        assert run.speech.audio == str(audio) and run.speech.captions == str(captions)
        with wave.open(str(audio), "rb") as handle:
            seconds = handle.getnframes() / handle.getframerate()
        text = captions.read_text(encoding="utf-8")
        assert text.startswith("WEBVTT") and "<v Ms. Rivera>Sunlight scatters." in text
        assert "<v Ana>Why is the sky blue?" in text and "<v Mia>So the sky is blue" in text
        assert seconds > 3.0
    # the two runs said the same sentences: the second found them in the speech cache
    spoken = sorted((r.speech.sentences, r.speech.cached) for r in runs if r.speech)
    assert spoken == [(0, 4), (4, 0)]
    first = next(r.speech for r in runs if r.speech and r.speech.sentences)
    assert first.characters == len("Why is the sky blue?Sunlight scatters.Blue scatters the most."
                                   "So the sky is blue because of the air?")
    assert first.cost == 0.0 and first.seconds > 2.0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    speech = report["speech"]
    assert speech["engine"] == "espeak" and speech["runs"] == 2 and speech["sentences"] == 4
    assert speech["characters"] == first.characters and speech["cost"] == 0.0 and speech["errors"] == 0
    assert "## Voice" in (out / "report.md").read_text(encoding="utf-8")
    assert "2 runs voiced with espeak: 4 sentences" in result.output  # the terminal says it too
    # the model's own calls stay the model's: the voice adds none
    assert report["overall"]["runs"] == 2


def test_voicing_a_batch_with_no_engine_is_refused_before_it_runs(tmp_path: Path) -> None:
    scenario = tmp_path / "sky.yaml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    result = runner.invoke(app, ["run", str(scenario), "--model", "demo", "--out", str(tmp_path / "out"),
                                 "--plain", "--voice", "off"])
    assert result.exit_code == 2 and "needs an engine" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_ogg_and_mp3_tracks_are_encoded_and_as_long_as_the_wav(tmp_path: Path) -> None:
    from maic_cli.media import ffmpeg

    newton = Path(__file__).resolve().parent.parent / "transcripts" / "slides_newton.jsonl"
    result = runner.invoke(app, ["replay", str(newton), "--voice", "espeak", "--audio", str(tmp_path / "c.wav")])
    assert result.exit_code == 0, result.output
    with wave.open(str(tmp_path / "c.wav"), "rb") as handle:
        seconds = handle.getnframes() / handle.getframerate()
    for suffix, codec in ((".ogg", "vorbis"), (".mp3", "mp3")):
        path = tmp_path / f"c{suffix}"
        result = runner.invoke(app, ["replay", str(newton), "--voice", "espeak", "--audio", str(path)])
        assert result.exit_code == 0, result.output
        log = ffmpeg.probe(path)
        assert f"Audio: {codec}" in log
        duration = ffmpeg.duration_of(log)
        assert duration is not None and abs(duration - seconds) < 0.15  # the same timeline (the cache's clips)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "maic_home") == ["c.mp3", "c.ogg", "c.wav"]


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_a_sentence_with_nothing_to_hear_gets_no_caption_over_silence(tmp_path: Path) -> None:
    from maic_cli.engine.events import AgentEndEvent, AgentStartEvent, Event, TextDeltaEvent
    from maic_cli.engine.models import StoreState
    from maic_cli.media.export import Targets, export_media
    from maic_cli.media.script import from_class
    from maic_cli.speech.espeak_engine import EspeakEngine
    from maic_cli.speech.normalize import for_speech
    from maic_cli.speech.port import Voice

    start = AgentStartEvent(message_id="m", agent_id="teacher", agent_name="Ms. Rivera", avatar="", color="")
    events: list[Event] = [start,
                           TextDeltaEvent(message_id="m", content="Good morning. 🙂🙂. Let us begin."),
                           AgentEndEvent(message_id="m", agent_id="teacher")]
    items = from_class(StoreState(), events)
    made = export_media(items, Targets(captions=tmp_path / "c.vtt"), engine=EspeakEngine(),
                        voice_for=lambda _: Voice("espeak", "en-us"), speakable=for_speech, title="t")
    assert [u.text for u in made.timeline.utterances] == ["Good morning.", "Let us begin."]
    assert "🙂" not in (tmp_path / "c.vtt").read_text(encoding="utf-8")
