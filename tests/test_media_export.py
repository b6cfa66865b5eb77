"""Exports with real parts: a recorded class voiced by the offline Piper voice into a wav, captions, a script and
an mp4 (read back with ffmpeg), a lesson filmed, and what a bad path or format gets."""

from __future__ import annotations

import io
import itertools
import re
import subprocess
import wave
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.media import ffmpeg
from maic_cli.media.encode import FPS, frames_of
from maic_cli.media.frames import render
from maic_cli.media.script import Shown
from maic_cli.speech import piper_engine
from maic_cli.speech.port import Audio
from maic_cli.store.transcript import read_transcript
from maic_cli.testing.pitch import median_pitch

ROOT = Path(__file__).resolve().parent.parent
NEWTON = ROOT / "transcripts" / "slides_newton.jsonl"
runner = CliRunner()
needs_piper = pytest.mark.skipif(not piper_engine.available(), reason="the voices extra (Piper) is not installed")
pytestmark = [pytest.mark.voices, needs_piper]

_TIME = re.compile(r"(\d\d):(\d\d):(\d\d)\.(\d\d\d) --> (\d\d):(\d\d):(\d\d)\.(\d\d\d)")


def vtt_cues(text: str) -> list[tuple[float, float, str, str]]:
    """(start, end, speaker, text) of each cue of a WebVTT file."""
    out = []
    for block in text.split("\n\n")[1:]:
        lines = block.strip().splitlines()
        if len(lines) < 3:
            continue
        match = _TIME.fullmatch(lines[1])
        assert match, lines
        g = [int(x) for x in match.groups()]
        start = g[0] * 3600 + g[1] * 60 + g[2] + g[3] / 1000
        end = g[4] * 3600 + g[5] * 60 + g[6] + g[7] / 1000
        speaker = re.match(r"<v ([^>]*)>", lines[2])
        assert speaker, lines[2]
        out.append((start, end, speaker.group(1), " ".join(re.sub(r"^<v [^>]*>", "", x) for x in lines[2:])))
    return out


def read_wav(path: Path) -> Audio:
    with wave.open(str(path), "rb") as handle:
        assert handle.getnchannels() == 1 and handle.getsampwidth() == 2
        return Audio(handle.readframes(handle.getnframes()), handle.getframerate())


def segment(audio: Audio, start: float, end: float) -> Audio:
    return Audio(audio.pcm[round(start * audio.rate) * 2:round(end * audio.rate) * 2], audio.rate)


def rms(audio: Audio) -> float:
    import numpy as np

    samples = np.frombuffer(audio.pcm, dtype="<i2").astype(np.float64)
    return float(np.sqrt((samples ** 2).mean())) if len(samples) else 0.0


@pytest.fixture(scope="module")
def newton(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The recorded Newton class exported once, in Piper's voice: class.wav, .vtt, .md and .mp4."""
    folder = tmp_path_factory.mktemp("export")
    result = runner.invoke(app, ["replay", str(NEWTON), "--voice", "local", "--audio", str(folder / "class.wav"),
                                 "--captions", str(folder / "class.vtt"), "--script", str(folder / "class.md"),
                                 "--video", str(folder / "class.mp4")])
    assert result.exit_code == 0, result.output
    assert "4 files" in result.output
    return folder


def test_captions_follow_the_audio_every_cue_is_speech_and_between_cues_is_silence(newton: Path) -> None:
    audio = read_wav(newton / "class.wav")
    cues = vtt_cues((newton / "class.vtt").read_text(encoding="utf-8"))
    assert [c[2] for c in cues][:2] == ["Jo", "Ms. Rivera"]  # the learner's question, then the teacher
    assert len(cues) >= 7
    for start, end, _, _ in cues:
        assert end > start and rms(segment(audio, start, end)) > 300  # speech under every cue
    spans = sorted((s, e) for s, e, _, _ in cues)
    gaps = [(a[1], b[0]) for a, b in itertools.pairwise(spans) if b[0] - a[1] > 0.05]
    gaps += [(0.0, spans[0][0]), (spans[-1][1], audio.seconds)]
    assert len(gaps) >= 6
    for start, end in gaps:  # nothing is heard where no caption is shown
        assert rms(segment(audio, start + 0.002, end - 0.002)) == 0.0
    # each sentence's audio begins within a few milliseconds of its cue (Piper's own lead-in at most)
    import numpy as np

    samples = np.frombuffer(audio.pcm, dtype="<i2")
    for start, end, _, _ in cues:
        at = round(start * audio.rate)
        loud = np.flatnonzero(np.abs(samples[at:round(end * audio.rate)]) > 500)
        assert len(loud) and loud[0] / audio.rate < 0.35


def test_each_speaker_has_a_voice_of_their_own(newton: Path) -> None:
    audio = read_wav(newton / "class.wav")
    cues = vtt_cues((newton / "class.vtt").read_text(encoding="utf-8"))
    by_speaker: dict[str, bytes] = {}
    for start, end, speaker, _ in cues:
        by_speaker[speaker] = by_speaker.get(speaker, b"") + segment(audio, start, end).pcm
    pitches = {speaker: median_pitch(Audio(pcm, audio.rate)) for speaker, pcm in by_speaker.items()}
    assert set(pitches) == {"Jo", "Ms. Rivera", "Mia", "Sam"}
    values = sorted(pitches.values())
    assert all(v > 0 for v in values)
    for low, high in itertools.pairwise(values):  # every two apart by more than a semitone (6 %)
        assert high / low > 1.06, pitches


def test_the_script_lists_each_turn_with_speaker_time_and_text(newton: Path) -> None:
    text = (newton / "class.md").read_text(encoding="utf-8")
    cues = vtt_cues((newton / "class.vtt").read_text(encoding="utf-8"))
    assert text.startswith("# maic class: ")
    first_teacher = next(c for c in cues if c[2] == "Ms. Rivera")
    minutes, seconds = divmod(int(first_teacher[0]), 60)
    assert f"**Ms. Rivera** ({minutes:02d}:{seconds:02d})\n\nIt says force equals mass times acceleration." in text


def test_the_video_has_the_track_and_a_subtitle_stream_and_shows_the_spotlit_slide(newton: Path) -> None:
    from PIL import ImageChops, ImageStat

    log = ffmpeg.probe(newton / "class.mp4")
    duration = ffmpeg.duration_of(log)
    audio = read_wav(newton / "class.wav")
    assert duration is not None and abs(duration - audio.seconds) < 0.25, log
    assert re.search(r"Stream #0:\d.*Video: h264", log) and re.search(r"Stream #0:\d.*Audio: aac", log)
    assert re.search(r"Stream #0:\d.*Subtitle: mov_text", log), log
    assert abs(video_seconds(newton / "class.mp4") - audio.seconds) < 0.25  # pictures all along the track
    # the frame in the middle of the spotlit scene is the picture of that board
    from maic_cli.chat.replay_media import class_items
    from maic_cli.media.timeline import lay_out

    items = class_items(read_transcript(NEWTON))
    cues = vtt_cues((newton / "class.vtt").read_text(encoding="utf-8"))
    sentences = [(c[0], c[1]) for c in cues]
    boards = [item.board for item in items if isinstance(item, Shown)]
    spotlit = next(b for b in boards if b.spotlight and not b.laser)
    # where the export showed it: the end of the sentence before it (re-laid from the captions' own times)
    said_ends = [end for _, end in sentences]
    timeline = lay_out(items, [end - start for start, end in _sentence_spans(sentences)])
    scene = next(s for s in timeline.scenes if s.board == spotlit)
    assert any(abs(scene.start - end) < 0.01 for end in said_ends)
    heading = "maic class: slides_spotlight"
    middle = (scene.start + scene.end) / 2
    frame = frame_at(newton / "class.mp4", middle, newton / "frame.png")
    shot = next(shot for shot in frames_of(timeline) if shot[0] <= middle < shot[1])
    assert shot[2] == spotlit and shot[3] is not None  # the spotlit board, and the sentence said over it
    expected = Image.open(io.BytesIO(render(spotlit, heading=heading, speaking=shot[3]))).convert("RGB")
    other = Image.open(io.BytesIO(render(boards[0], heading=heading, speaking=shot[3]))).convert("RGB")
    assert frame.size == expected.size
    difference = sum(ImageStat.Stat(ImageChops.difference(frame, expected)).mean) / 3
    assert difference < 2.0  # the video's compression only
    # the same measure tells the board without the spotlight apart
    assert sum(ImageStat.Stat(ImageChops.difference(frame, other)).mean) / 3 > difference + 0.5
    # and the last board is on screen to the end of the track
    last = frames_of(timeline)[-1]
    frame = frame_at(newton / "class.mp4", last[1] - 0.3, newton / "last.png")
    expected = Image.open(io.BytesIO(render(last[2], heading=heading, speaking=last[3]))).convert("RGB")
    assert sum(ImageStat.Stat(ImageChops.difference(frame, expected)).mean) / 3 < 2.0


def frame_at(video: Path, seconds: float, path: Path) -> Image.Image:
    subprocess.run([ffmpeg.find_ffmpeg(), "-v", "error", "-y", "-ss", f"{seconds:.2f}", "-i", str(video),
                    "-frames:v", "1", str(path)], check=True, timeout=60)
    return Image.open(path).convert("RGB")


def video_seconds(video: Path) -> float:
    """How long the video stream lasts, by decoding it: its last frame's number over the frame rate."""
    done = subprocess.run([ffmpeg.find_ffmpeg(), "-hide_banner", "-nostdin", "-i", str(video), "-map", "0:v",
                           "-f", "null", "-"], capture_output=True, timeout=120, check=True)
    frames = re.findall(r"frame=\s*(\d+)", done.stderr.decode("utf-8", "replace"))
    return int(frames[-1]) / FPS


def _sentence_spans(cues: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Cues joined back into sentences: parts of one sentence follow each other with no gap."""
    spans: list[tuple[float, float]] = []
    for start, end in cues:
        if spans and abs(start - spans[-1][1]) < 0.0015:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


LESSON = """\
title: Levers
agents: [teacher, curious_student]
scenes:
  - type: slide
    id: lever
    title: What a lever does
    elements:
      - {id: rule, type: text, content: "Effort times its arm equals load times its arm."}
      - {id: seesaw, type: text, content: "A seesaw is a lever."}
    script:
      - say: "A lever trades distance for force."
      - spotlight: rule
      - say: "The longer arm needs the smaller push."
      - say: "So a long handle makes the job easier?"
        by: curious_student
      - laser: seesaw
      - say: "Yes, like a seesaw."
"""


def test_a_lesson_becomes_a_video_of_its_slides_voiced_by_its_class(tmp_path: Path) -> None:
    lesson = tmp_path / "levers.yaml"
    lesson.write_text(LESSON, encoding="utf-8")
    out = tmp_path / "levers.mp4"
    result = runner.invoke(app, ["lesson", "export", str(lesson), "--out", str(out), "--voice", "local",
                                 "--captions", str(tmp_path / "levers.vtt")])
    assert result.exit_code == 0, result.output
    assert "4 sentences synthesized" in result.output and "7 pictures" in result.output
    captions = vtt_cues((tmp_path / "levers.vtt").read_text(encoding="utf-8"))
    assert [c[2] for c in captions] == ["Ms. Rivera", "Ms. Rivera", "Mia", "Ms. Rivera"]
    log = ffmpeg.probe(out)
    assert re.search(r"Subtitle: mov_text", log) and re.search(r"Video: h264", log)
    duration = ffmpeg.duration_of(log)
    assert duration is not None and 4.0 < duration < 40.0
    assert abs(video_seconds(out) - duration) < 0.25
    # the audio track and the subtitle stream, read back from the mp4
    track, subtitles = tmp_path / "track.wav", tmp_path / "subs.srt"
    for args in (["-map", "0:a", "-ac", "1", "-ar", "22050", str(track)], ["-map", "0:s", str(subtitles)]):
        subprocess.run([ffmpeg.find_ffmpeg(), "-v", "error", "-y", "-i", str(out), *args], check=True, timeout=60)
    cues = srt_cues(subtitles.read_text(encoding="utf-8"))
    assert [text for _, _, text in cues][:2] == ["Ms. Rivera: A lever trades distance for force.",
                                                 "Ms. Rivera: The longer arm needs the smaller push."]
    audio = read_wav(track)
    teacher = next(segment(audio, s, e) for s, e, text in cues if text.startswith("Ms. Rivera:"))
    student = next(segment(audio, s, e) for s, e, text in cues if "long handle" in text)
    assert not next(text for _, _, text in cues if "long handle" in text).startswith("Ms. Rivera")
    assert rms(teacher) > 300 and rms(student) > 300
    assert median_pitch(student) / median_pitch(teacher) > 1.1  # the classmate in a voice of their own


_SRT_TIME = re.compile(r"(\d\d):(\d\d):(\d\d),(\d\d\d) --> (\d\d):(\d\d):(\d\d),(\d\d\d)")


def srt_cues(text: str) -> list[tuple[float, float, str]]:
    out = []
    for block in text.replace("\r", "").split("\n\n"):
        lines = block.strip().splitlines()
        if len(lines) >= 3 and (match := _SRT_TIME.fullmatch(lines[1])):
            g = [int(x) for x in match.groups()]
            out.append((g[0] * 3600 + g[1] * 60 + g[2] + g[3] / 1000, g[4] * 3600 + g[5] * 60 + g[6] + g[7] / 1000,
                        " ".join(lines[2:])))
    return out


def test_a_path_that_cannot_be_written_is_one_line_before_anything_is_synthesized(tmp_path: Path) -> None:
    result = runner.invoke(app, ["replay", str(NEWTON), "--voice", "local", "--audio",
                                 str(tmp_path / "missing" / "class.wav")])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "does not exist" in lines[0] and "Traceback" not in result.output
    result = runner.invoke(app, ["replay", str(NEWTON), "--voice", "local", "--captions", str(tmp_path / "c.txt")])
    assert result.exit_code == 2 and ".vtt or .srt" in result.output
    (tmp_path / "link.wav").symlink_to(tmp_path / "elsewhere.wav")
    result = runner.invoke(app, ["replay", str(NEWTON), "--voice", "local", "--audio", str(tmp_path / "link.wav")])
    assert result.exit_code == 2 and "it is a link" in result.output
    assert not (tmp_path / "elsewhere.wav").exists()
    result = runner.invoke(app, ["replay", str(NEWTON), "--voice", "off", "--audio", str(tmp_path / "c.wav")])
    assert result.exit_code == 2 and "needs a voice" in result.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "maic_home") == ["link.wav"]  # no temp file left
