"""Transcripts: chat → transcript → replay round trip, exports, --check, damaged files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.chat.replay import rebuild
from maic_cli.cli.app import app
from maic_cli.store.session import load_session
from maic_cli.store.transcript import read_transcript
from tests.helpers import action, decision, modules_imported_by, reply

runner = CliRunner()


def record_class(tmp_path: Path, *replies: object, stdin: str = "Why is the sky blue?\n",
                 args: tuple[str, ...] = ()) -> tuple[Path, Path]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(list(replies)), encoding="utf-8")
    transcript = tmp_path / "class.jsonl"
    session = tmp_path / "class.json"
    result = runner.invoke(app, ["chat", "--model", f"scripted:{script}", "--session", str(session),
                                 "--transcript", str(transcript), *args], input=stdin)
    assert result.exit_code == 0, result.output
    return transcript, session


QA = (decision("teacher"),
      reply("Sunlight scatters.", action("wb_draw_table", data=[["colour", "scatter"], ["blue", "more"]]),
            "Questions?"),
      decision("curious_student"), reply("Why not violet? <b>bold</b>"), decision("USER"))


def test_transcript_has_header_lines_and_calls(tmp_path: Path) -> None:
    transcript_file, _ = record_class(tmp_path, *QA)
    lines = [json.loads(line) for line in transcript_file.read_text().splitlines()]
    header = lines[0]
    assert header["kind"] == "header" and header["format"] == "maic-transcript"
    assert header["model"].startswith("scripted:") and "not a language model" in header["produced_by"]
    assert {a["id"] for a in header["agents"]} >= {"teacher", "curious_student"}
    assert all("persona" in a for a in header["agents"])
    kinds = [line["kind"] for line in lines[1:]]
    assert kinds[:2] == ["learner", "round"] and kinds[-1] == "round_end"
    calls = [line for line in lines if line["kind"] == "llm_call"]
    assert [c["purpose"] for c in calls] == ["director", "agent", "director", "agent", "director"]
    assert calls[1]["reply"] == QA[1] and calls[1]["messages"][0]["role"] == "system"
    assert calls[1]["ttft"] is not None and calls[1]["duration"] >= 0 and calls[1]["usage"]["completion_tokens"]
    offsets = [line["t"] for line in lines[1:]]
    assert offsets == sorted(offsets)
    assert "api_key" not in transcript_file.read_text()


def test_round_trip_replay_rebuilds_the_same_class(tmp_path: Path) -> None:
    transcript_file, session_file = record_class(tmp_path, *QA)
    rebuilt = rebuild(read_transcript(transcript_file))
    saved = load_session(session_file).classroom
    assert [(m.role, m.agent_id, m.text) for m in rebuilt.messages] == [
        (m.role, m.agent_id, m.text) for m in saved.messages]
    assert rebuilt.store.whiteboard == saved.store.whiteboard


def test_replay_in_a_pipe_prints_the_class_as_plain_lines(tmp_path: Path) -> None:
    transcript_file, _ = record_class(tmp_path, *QA)
    result = runner.invoke(app, ["replay", str(transcript_file)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "Learner (learner): Why is the sky blue?",
        "Ms. Rivera: Sunlight scatters. [drew a table] Questions?",
        "Mia: Why not violet? <b>bold</b>",
    ]


def test_replay_with_model_replay_gives_the_same_events(tmp_path: Path) -> None:
    transcript_file, _ = record_class(tmp_path, *QA)
    again = tmp_path / "again.jsonl"
    result = runner.invoke(app, ["chat", "--model", f"replay:{transcript_file}", "--session",
                                 str(tmp_path / "again.json"), "--transcript", str(again)],
                           input="Why is the sky blue?\n")
    assert result.exit_code == 0, result.output
    from maic_cli.evaluation.replay_check import normalize

    first = normalize([e for _, e in read_transcript(transcript_file).events()])
    second = normalize([e for _, e in read_transcript(again).events()])
    assert first == second and len(first) > 10


def test_check_passes_on_an_unchanged_class(tmp_path: Path) -> None:
    transcript_file, _ = record_class(tmp_path, *QA)
    result = runner.invoke(app, ["replay", str(transcript_file), "--check"])
    assert result.exit_code == 0, result.output
    assert "the same" in result.stdout


def test_check_finds_a_planted_difference(tmp_path: Path) -> None:
    transcript_file, _ = record_class(tmp_path, *QA)
    lines = transcript_file.read_text().splitlines()
    for index, line in enumerate(lines):  # the director now picks someone else at its second call
        entry = json.loads(line)
        if entry["kind"] == "llm_call" and entry["reply"] == decision("curious_student"):
            entry["reply"] = decision("deep_thinker")
            lines[index] = json.dumps(entry)
            break
    transcript_file.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["replay", str(transcript_file), "--check"])
    assert result.exit_code == 1
    assert "differs" in result.stdout and "curious_student" in result.stdout and "deep_thinker" in result.stdout


def test_check_replays_an_interrupted_round(tmp_path: Path) -> None:
    transcript_file, _ = record_class(tmp_path, *QA)
    lines = [json.loads(line) for line in transcript_file.read_text().splitlines()]
    # Make it look as if the learner had interrupted the student: a cancelled call, then round end.
    call = next(i for i, e in enumerate(lines) if e["kind"] == "llm_call" and e["reply"] == QA[3])
    lines[call].update(error_kind="cancelled", reply=QA[3][:30])
    assert read_transcript(transcript_file).header  # still a transcript
    transcript_file.write_text("\n".join(json.dumps(e) for e in lines) + "\n")
    result = runner.invoke(app, ["replay", str(transcript_file), "--check"])
    assert result.exit_code == 1  # the recorded events are complete, the replayed round stops early
    assert "differs" in result.stdout


def test_markdown_and_html_exports(tmp_path: Path) -> None:
    transcript_file, _ = record_class(tmp_path, *QA)
    md, page = tmp_path / "out.md", tmp_path / "out.html"
    assert runner.invoke(app, ["replay", str(transcript_file), "--export", str(md)]).exit_code == 0
    assert runner.invoke(app, ["replay", str(transcript_file), "--export", str(page)]).exit_code == 0
    text = md.read_text()
    assert "**👩‍🏫 Ms. Rivera**" in text and "*[drew a table]*" in text and "## Final whiteboard" in text
    assert "| colour | scatter |\n| --- | --- |\n| blue | more |" in text and "&lt;b&gt;bold&lt;/b&gt;" in text
    assert "[wb_1]" not in text  # the board as drawn, no element id
    html = page.read_text()
    assert html.startswith("<!doctype html>") and "<b>bold</b>" not in html and "&lt;b&gt;bold" in html
    assert "#4f9dde" in html  # the teacher's colour
    assert "<td>blue</td>" in html
    assert "http://" not in html and "https://" not in html and "<script" not in html and "<link" not in html
    bad = runner.invoke(app, ["replay", str(transcript_file), "--export", str(tmp_path / "out.pdf")])
    assert bad.exit_code == 2
    unwritable = runner.invoke(app, ["replay", str(transcript_file), "--export", str(tmp_path / "no" / "x.md")])
    assert unwritable.exit_code == 1 and "cannot write" in unwritable.stderr


def test_cut_off_transcript_replays_with_a_warning(tmp_path: Path) -> None:
    transcript_file, _ = record_class(tmp_path, *QA)
    data = transcript_file.read_text()
    transcript_file.write_text(data[: len(data) - 40])  # the crash cut the last line
    result = runner.invoke(app, ["replay", str(transcript_file)])
    assert result.exit_code == 0
    assert "the last line was cut off" in result.stderr
    assert "Ms. Rivera: Sunlight scatters." in result.stdout


def test_unknown_event_type_is_skipped_with_a_warning(tmp_path: Path) -> None:
    transcript_file, _ = record_class(tmp_path, *QA)
    with transcript_file.open("a") as handle:
        handle.write(json.dumps({"t": 99, "kind": "event", "event": {"type": "hologram", "x": 1}}) + "\n")
    result = runner.invoke(app, ["replay", str(transcript_file)])
    assert result.exit_code == 0
    assert "unknown event type 'hologram'" in result.stderr


@pytest.mark.parametrize("content", ["", "hello world\n", '{"kind": "header"}\n', "\x00\x01binary"])
def test_a_file_that_is_not_a_transcript_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(content)
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith("maic: error:") and len(result.stderr.strip().splitlines()) == 1


def test_replay_does_not_import_litellm(tmp_path: Path) -> None:
    transcript_file, _ = record_class(tmp_path, *QA)
    modules = modules_imported_by(["replay", str(transcript_file), "--check"])
    assert "maic_cli.evaluation.replay_check" in modules
    assert "litellm" not in modules
def test_bundled_samples_replay_and_check(tmp_path: Path) -> None:
    samples = sorted((Path(__file__).parent.parent / "transcripts").glob("*.jsonl"))
    assert len(samples) >= 3
    for sample in samples:
        transcript = read_transcript(sample)
        assert transcript.warnings == []
        assert transcript.header.produced_by
        result = runner.invoke(app, ["replay", str(sample), "--check"])
        assert result.exit_code == 0, (sample, result.output)
