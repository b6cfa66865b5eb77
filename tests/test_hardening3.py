"""Hardening 3 (issue 18): each class of bug a hostile user found, with a test that failed before its fix."""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.engine.models import TurnConfig
from maic_cli.engine.policies import load_hook
from maic_cli.evaluation import batch
from maic_cli.evaluation.judge import CRITERIA
from maic_cli.evaluation.reports import write_reports
from maic_cli.evaluation.run_results import RunResult, load_runs, save_run
from maic_cli.replies.json_reply import first_json_object
from maic_cli.store.paths import open_private, write_atomic
from maic_cli.store.session import Session
from maic_cli.untrusted import clean, one_line
from tests.test_run import GOOD_ROUND, QA_SCENARIO, script, write

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent


def verdict_with_reason(reason: str, turns: int = 2) -> str:
    body: dict[str, Any] = {"turns": [{"turn": n, "reason": reason, **{c: True for c in CRITERIA}}
                                      for n in range(1, turns + 1)],
                            "answered_reason": reason, "answered": True}
    return json.dumps(body)  # a lone surrogate is written as the JSON escape "\ud800", as a model emits it


# -- 1. a string from a model is encodable where it enters; a judge failure never touches the class's result --

def test_a_judge_reason_with_a_lone_surrogate_keeps_the_run_and_its_verdict(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                                 "--judge", script(tmp_path, verdict_with_reason("bad \ud800 half"), name="j.json"),
                                 "--plain"])
    assert result.exit_code == 0, result.output
    saved = json.loads(next((out / "runs").glob("*.json")).read_text(encoding="utf-8"))
    assert saved["status"] == "complete" and len(saved["rounds"]) == 1
    assert saved["judge"]["rounds"][0]["turns"][0]["reason"] == "bad \ufffd half"


def test_report_judge_with_a_lone_surrogate_saves_the_verdict(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    assert runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                               "--plain"]).exit_code == 0
    result = runner.invoke(app, ["report", str(out), "--judge",
                                 script(tmp_path, verdict_with_reason("\udfff"), name="j.json")])
    assert result.exit_code == 0, result.output
    saved = json.loads(next((out / "runs").glob("*.json")).read_text(encoding="utf-8"))
    assert saved["judge"]["rounds"][0]["answered_reason"] == "\ufffd" and len(saved["rounds"]) == 1


def test_a_judge_that_fails_outright_leaves_the_saved_class_result(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken_judge(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the judge")

    monkeypatch.setattr("maic_cli.evaluation.judging.judge_run", broken_judge)
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                                 "--judge", script(tmp_path, verdict_with_reason("ok"), name="j.json"), "--plain"])
    assert "Traceback" not in result.output
    saved = json.loads(next((out / "runs").glob("*.json")).read_text(encoding="utf-8"))
    assert saved["status"] == "complete" and len(saved["rounds"]) == 1 and saved["error"] is None
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["overall"]["complete"] == 1 and report["overall"]["rounds"] == 1


def test_a_result_holding_a_lone_surrogate_is_still_saved(tmp_path: Path) -> None:
    result = RunResult(run_id="r1", scenario="s\ud800", scenario_path="x", model="m", repeat=1, status="complete",
                       failures=["round 1: \udfff"])
    save_run(tmp_path, result)
    loaded = load_runs(tmp_path)[0]
    assert loaded.scenario == "s\ufffd" and loaded.failures == ["round 1: \ufffd"]


def test_every_reply_object_a_model_sends_is_encodable() -> None:
    value, _ = first_json_object('{"comment": "half \\ud83d", "deep": {"k\\udc00": ["\\ud800"]}}',
                                 max_depth=6, max_repair=1000)
    assert value is not None and json.dumps(value, ensure_ascii=False).encode("utf-8")
    assert value == {"comment": "half \ufffd", "deep": {"k\ufffd": ["\ufffd"]}}
    repaired, was_repaired = first_json_object('{"comment": "cut \\ud83d', max_depth=6, max_repair=1000)
    assert was_repaired and repaired is not None and "\ud83d" not in repaired["comment"]
    assert clean("a\ud800b") == "a\ufffdb" and one_line("\udfff") == "\ufffd"


# -- 2. nothing maic writes follows a link it did not make ------------------------------------------------------

def test_a_lock_link_in_a_received_folder_creates_nothing_at_its_target(tmp_path: Path) -> None:
    session = tmp_path / "received" / "lesson.json"
    session.parent.mkdir()
    saved_session = Session(config=TurnConfig(agent_ids=["teacher"]), model="demo")
    session.write_text(saved_session.model_dump_json(), encoding="utf-8")
    target = tmp_path / "victim" / "x"
    target.parent.mkdir()
    (session.parent / "lesson.json.lock").symlink_to(target)
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session)], input="")
    assert result.exit_code != 0 and "symbolic link" in result.stderr and "Traceback" not in result.stderr
    assert not target.exists()


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_files_maic_writes_never_go_through_a_link_or_into_a_fifo(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me", encoding="utf-8")
    path = tmp_path / "out.md"
    if kind == "link":
        path.symlink_to(target)
    else:
        os.mkfifo(path)
    for attempt in (lambda: open_private(path, "w").close(), lambda: open_private(path, "a").close(),
                    lambda: write_atomic(path, "new")):
        with pytest.raises(OSError, match="symbolic link" if kind == "link" else "not a regular file"):
            attempt()
    assert target.read_text(encoding="utf-8") == "keep me"
    assert path.is_symlink() if kind == "link" else stat.S_ISFIFO(os.lstat(path).st_mode)


def test_export_to_a_fifo_does_not_block_the_chat_and_save_never_replaces_a_link(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "target.json")
    stdin = f"/export {fifo}\n/save {link}\n/save {tmp_path / 'ok.json'}\n"
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(tmp_path / "s.json")], input=stdin)
    assert result.exit_code == 0 and "Traceback" not in result.stderr
    assert f"{fifo}: cannot write: not a regular file" in result.stderr
    assert f"{link}: cannot save: a symbolic link" in result.stderr
    assert not (tmp_path / "target.json").exists() and (tmp_path / "ok.json").is_file()


# -- 3. a director hook never puts the current folder on sys.path --------------------------------------------------

HOOK = "def pick(agents, state, messages, config):\n    return None\n"


def test_a_hook_in_the_current_folder_is_loaded_by_file_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "myhook.py").write_text(HOOK, encoding="utf-8")
    (tmp_path / "planted_dependency_h18.py").write_text("raise SystemExit('planted code ran')\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    before = list(sys.path)
    policy = load_hook("myhook:pick")
    assert policy.name == "myhook:pick" and policy.decide([], None, [], None) is None  # type: ignore[arg-type]
    assert sys.path == before
    assert importlib.util.find_spec("planted_dependency_h18") is None  # the folder is not importable


def test_a_planted_module_named_like_a_dependency_never_runs(tmp_path: Path) -> None:
    """End to end, as the installed ``maic`` runs (no current folder on sys.path by Python itself): a
    received folder with ``matplotlib.py`` and the user's hook; the report draws its charts."""
    folder = tmp_path / "received"
    folder.mkdir()
    (folder / "myhook.py").write_text(HOOK, encoding="utf-8")
    marker = tmp_path / "PLANTED-RAN"
    (folder / "matplotlib.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    scenario = write(folder / "sky.yaml", QA_SCENARIO)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MAIC_HOME": str(tmp_path / "home")}
    code = "import sys; from maic_cli.cli.main import main; sys.argv = ['maic'] + sys.argv[1:]; main()"
    done = subprocess.run([sys.executable, "-P", "-c", code, "run", str(scenario), "--model",
                           script(tmp_path, *GOOD_ROUND), "--director", "myhook:pick", "--out",
                           str(tmp_path / "out"), "--plain"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "report.html").is_file() and not marker.exists()


# -- 4. report.md is inert Markdown ----------------------------------------------------------------------------

def test_report_md_escapes_everything_from_outside(tmp_path: Path) -> None:
    hostile = "<img src=x onerror=alert(1)><script>alert(2)</script>[x](javascript:alert(3))`code`"
    result = RunResult(run_id="r1", scenario=hostile, scenario_path="x", model="m<b>", repeat=1, status="error",
                       error=f"provider said: {hostile}")
    write_reports(tmp_path, [result], {"scenarios": hostile, "<i>key</i>": "v"})
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "<img" not in markdown and "<script" not in markdown and "<b>" not in markdown and "<i>" not in markdown
    assert "[x](javascript:" not in markdown and "`code`" not in markdown
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in markdown and "\\](javascript:alert(3))" in markdown
    from maic_cli.untrusted import markdown_text

    assert markdown_text("a|b <c> & \\`") == "a|b &lt;c&gt; &amp; \\\\\\`"


# -- 7. runs never vanish -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "expected"), [("my scenario (copy).yaml", "my-scenario-copy"),
                                               ("física.yaml", "fisica"), ("😀.yaml", "scenario")])
def test_a_scenario_file_name_that_is_not_a_plain_id_still_saves_its_run(tmp_path: Path, name: str,
                                                                         expected: str) -> None:
    scenario = write(tmp_path / name, QA_SCENARIO.replace("id: sky\n", ""))
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                                 "--plain"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["overall"]["runs"] == 1 and report["runs"][0]["scenario"] == expected
    assert len(list((out / "runs").glob(f"{expected}__*.json"))) == 1


def test_a_long_scenario_id_is_refused_before_any_model_call(tmp_path: Path) -> None:
    scenario = write(tmp_path / "long.yaml", QA_SCENARIO.replace("id: sky", "id: " + "a" * 240))
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                                 "--plain"])
    assert result.exit_code == 2 and "long.yaml:1: id:" in result.stderr and "at most 80" in result.stderr
    assert not (out / "runs").exists()


def test_a_run_whose_result_cannot_be_saved_fails_the_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(out: Path, result: RunResult) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(batch, "save_run", refuse)
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out),
                                 "--plain"])
    assert result.exit_code == 1 and "could not be saved: No space left on device" in result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["overall"]["runs"] == 1 and report["overall"]["errors"] == 1
    assert report["runs"][0]["metrics"]["rounds"] == 1  # the class it played is reported, not lost
