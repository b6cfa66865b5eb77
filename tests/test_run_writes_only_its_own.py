"""``maic run`` never writes over what is not its own, and its file errors are one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from maic_cli.cli.app import app
from tests.test_run import GOOD_ROUND, QA_SCENARIO, script, write

runner = CliRunner()


def run(*args: str) -> Result:
    return runner.invoke(app, ["run", *args, "--plain"])


def one_line_error(result, code: int = 2) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("maic: error:"), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>" for p in folder.rglob("*")}


def a_batch(tmp_path: Path, name: str = "out", *extra: str, scenario_id: str = "sky") -> Path:
    scenario = write(tmp_path / f"{scenario_id}.yaml", QA_SCENARIO.replace("id: sky", f"id: {scenario_id}"))
    out = tmp_path / name
    result = run(str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out), *extra)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def users_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder / "report.md", "my own report\n")
    return folder


def test_resume_of_a_folder_without_a_batch_refuses_and_touches_nothing(tmp_path: Path, users_folder: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    before = snapshot(users_folder)
    result = run(str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--resume", str(users_folder))
    assert "no maic batch there" in one_line_error(result)
    assert snapshot(users_folder) == before
    missing = run(str(scenario), "--model", "demo", "--resume", str(tmp_path / "nowhere"))
    assert "no maic batch there" in one_line_error(missing)
    assert not (tmp_path / "nowhere").exists()


def test_out_folder_with_other_files_is_refused_and_a_new_or_own_folder_is_not(tmp_path: Path,
                                                                                users_folder: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    before = snapshot(users_folder)
    result = run(str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(users_folder))
    assert "holds other files and no maic batch" in one_line_error(result)
    assert snapshot(users_folder) == before
    out = a_batch(tmp_path)  # a new folder
    assert (out / "maic-batch.json").is_file()
    again = run(str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(out))
    assert again.exit_code == 0, again.output  # its own batch folder: written again
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(str(scenario), "--model", script(tmp_path, *GOOD_ROUND), "--out", str(empty)).exit_code == 0


def test_resume_of_a_batch_from_before_the_marker_still_works(tmp_path: Path) -> None:
    out = a_batch(tmp_path, "out", "--repeat", "2")
    (out / "maic-batch.json").unlink()  # an older maic wrote only runs/
    (out / "runs" / "sky__scripted-script__r2.json").unlink()
    again = run(str(tmp_path / "sky.yaml"), "--model", script(tmp_path, *GOOD_ROUND), "--repeat", "2",
                "--resume", str(out))
    assert again.exit_code == 0, again.output
    assert "1 runs already done, 1 to go" in again.stderr


def test_merging_a_folder_twice_is_refused_however_it_is_spelled(tmp_path: Path) -> None:
    first = a_batch(tmp_path, "a")
    link = tmp_path / "link"
    link.symlink_to(first)
    for spelling in (first, tmp_path / "a" / ".." / "a", link):
        result = runner.invoke(app, ["run", "--merge", str(first), "--merge", str(spelling),
                                     "--out", str(tmp_path / "merged")])
        assert "the same folder as --merge" in one_line_error(result)
    assert not (tmp_path / "merged").exists()


def test_the_same_run_in_two_folders_is_not_counted_twice(tmp_path: Path) -> None:
    first = a_batch(tmp_path, "a")
    shutil.copytree(first, tmp_path / "copy")
    result = runner.invoke(app, ["run", "--merge", str(first), "--merge", str(tmp_path / "copy"),
                                 "--out", str(tmp_path / "merged")])
    assert "run sky__scripted-script__r1 is in both" in one_line_error(result)


def test_merge_needs_its_own_out_folder(tmp_path: Path) -> None:
    first, second = a_batch(tmp_path, "a"), a_batch(tmp_path, "b", scenario_id="other")
    before = snapshot(first)
    no_out = runner.invoke(app, ["run", "--merge", str(first), "--merge", str(second)])
    assert "--merge needs --out" in one_line_error(no_out)
    into_a_source = runner.invoke(app, ["run", "--merge", str(first), "--merge", str(second), "--out", str(first)])
    assert "one of the --merge folders" in one_line_error(into_a_source)
    assert snapshot(first) == before
    merged = runner.invoke(app, ["run", "--merge", str(first), "--merge", str(second),
                                 "--out", str(tmp_path / "merged")])
    assert merged.exit_code == 0, merged.output
    assert json.loads((tmp_path / "merged" / "report.json").read_text())["overall"]["runs"] == 2


def test_out_that_is_a_file_or_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    a_file = write(tmp_path / "results.txt", "keep me\n")
    result = run(str(scenario), "--model", "demo", "--out", str(a_file))
    assert "not a folder" in one_line_error(result)
    assert a_file.read_text() == "keep me\n"
    under_a_file = run(str(scenario), "--model", "demo", "--out", str(a_file / "sub"))
    assert "cannot write there" in one_line_error(under_a_file, 1)


def test_a_folder_named_like_a_run_result_is_named_in_one_line(tmp_path: Path) -> None:
    first = a_batch(tmp_path, "a")
    (first / "runs" / "x.json").mkdir()
    result = runner.invoke(app, ["run", "--merge", str(first), "--out", str(tmp_path / "merged")])
    assert f"{first / 'runs' / 'x.json'}: not a regular file" in one_line_error(result)


def test_a_shard_with_no_runs_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    result = run(str(scenario), "--model", "demo", "--repeat", "3", "--shard", "9999/9999", "--out", str(out))
    assert "the batch has 3 runs, so part 9999 has none" in one_line_error(result)
    assert not out.exists()


def test_plain_progress_lines_clean_provider_error_text(tmp_path: Path) -> None:
    header = {"kind": "header", "format": "maic-transcript"}
    call = {"kind": "llm_call", "reply": "", "error_kind": "server_error",
            "error": "boom \x1b]0;pwned\x07\x1b[2J\nsecond line"}
    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text("\n".join(json.dumps(line) for line in (header, call)) + "\n")
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    result = run(str(scenario), "--model", f"replay:{recorded}", "--out", str(tmp_path / "out"))
    assert result.exit_code == 1
    progress = [line for line in result.stderr.splitlines() if line.startswith("[1/1]")]
    assert len(progress) == 1 and "boom" in progress[0] and "second line" in progress[0], result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr


def test_a_replay_model_with_wrong_typed_replies_fails_the_run_in_one_line(tmp_path: Path) -> None:
    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text(json.dumps({"kind": "header", "format": "maic-transcript"}) + "\n"
                        + json.dumps({"kind": "llm_call", "reply": {"text": 5}}) + "\n")
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    out = tmp_path / "out"
    result = run(str(scenario), "--model", f"replay:{recorded}", "--out", str(out))
    assert result.exit_code == 1 and "Traceback" not in result.output
    error = json.loads((out / "report.json").read_text())["runs"][0]["error"]
    assert f"{recorded}:2: llm_call: reply: Input should be a valid string" in error


@pytest.mark.parametrize(("text", "message"), [
    ("model_list: {a: 1}\n", "router.yaml:1: model_list: Input should be a valid list"),
    ("model_list:\n  - just a string\n", "router.yaml:2: model_list.0: Input should be a valid dictionary"),
    ("model_list:\n  - model_name: g\n", "router.yaml:2: model_list.0.litellm_params: Field required"),
    ("model_list:\n  - model_name: g\n    litellm_params: {api_base: x}\n",
     "router.yaml:3: model_list.0.litellm_params.model: Field required"),
    ("model_list: []\n", "router.yaml:1: model_list: List should have at least 1 item"),
    ("model_list:\n  - {model_name: g, litellm_params: {model: m}}\nrouter_settings: [1]\n",
     "router.yaml:3: router_settings: Input should be a valid dictionary"),
    ("- a list\n", "router.yaml:1: (top level): Input should be a valid dictionary"),
])
def test_router_file_with_wrong_types_names_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    router = write(tmp_path / "router.yaml", text)
    scenario = write(tmp_path / "sky.yaml", QA_SCENARIO)
    result = run(str(scenario), "--router", str(router), "--model", "g", "--out", str(tmp_path / "out"))
    assert message in one_line_error(result)
    assert not (tmp_path / "out").exists()

