"""Prompt sets from the command line: ``maic run --prompts`` (compared like ``--model``), a
scenario's ``prompts:`` folder, ``maic chat --prompts``, and a broken template before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from tests.helpers import decision, reply

runner = CliRunner()

SCENARIO = """id: sky
class:
  agents: [teacher, curious_student]
learner: {nickname: Ana}
messages:
  - Why is the sky blue?
"""

ROUND = (decision("teacher"), reply("Scattering."), decision("USER"))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def script(tmp_path: Path, *replies: object) -> str:
    return f"scripted:{write(tmp_path / 'script.json', json.dumps(list(replies)))}"


def teacher_role(folder: Path, wording: str) -> Path:
    """A prompt set that changes the teacher's part of the agent system prompt."""
    write(folder / "roles" / "teacher.md", f"{wording} Answer {{{{ learner.name }}}} briefly.\n")
    return folder


def agent_systems(transcript: Path) -> list[str]:
    """The system prompts the transcript's recorded agent calls sent."""
    lines = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]
    return [entry["messages"][0]["content"] for entry in lines
            if entry.get("kind") == "llm_call" and entry.get("purpose") == "agent"]


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["run", *args, "--plain"])


def test_run_compares_two_prompt_sets_side_by_side(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", SCENARIO)
    terse = teacher_role(tmp_path / "sets" / "terse", "TERSE-WORDING: one sentence only.")
    warm = teacher_role(tmp_path / "sets" / "warm", "WARM-WORDING: encourage the learner.")
    out = tmp_path / "out"
    result = run(str(scenario), "--model", script(tmp_path, *ROUND), "--prompts", str(terse),
                 "--prompts", str(warm), "--repeat", "2", "--out", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert set(report["by_prompts"]) == {"terse", "warm"}
    assert report["by_prompts"]["terse"]["runs"] == 2 and report["by_prompts"]["warm"]["runs"] == 2
    ids = [r["run_id"] for r in report["runs"]]
    assert ids == ["sky__scripted-script__terse__r1", "sky__scripted-script__terse__r2",
                   "sky__scripted-script__warm__r1", "sky__scripted-script__warm__r2"]
    for entry in report["runs"]:
        systems = agent_systems(Path(entry["transcript"]))
        assert len(systems) == 1
        mine, other = ("TERSE-WORDING", "WARM-WORDING") if entry["prompts"] == "terse" else \
            ("WARM-WORDING", "TERSE-WORDING")
        assert mine in systems[0] and other not in systems[0]
        assert "Answer Ana briefly." in systems[0]
        saved = json.loads((out / "runs" / f"{entry['run_id']}.json").read_text())
        assert saved["prompts"] == entry["prompts"]
    markdown = (out / "report.md").read_text()
    section = markdown.split("## By prompt set", 1)[1].split("##", 1)[0]
    assert "| terse | 2 |" in section and "| warm | 2 |" in section
    assert "maic run by prompt set" in result.stdout  # the terminal summary compares them too
    rows = [line.split() for line in result.stdout.splitlines() if line.split()[:1] in (["terse"], ["warm"])]
    # runs, passed, errors, rounds, agent turns, then cue-user rate, ttft, turn latency, cost
    assert [row[:7] for row in rows] == [[name, "2", "2", "0", "2", "2", "100%"] for name in ("terse", "warm")]
    assert all(len(row) == 10 for row in rows)


def test_one_prompt_set_keeps_the_usual_run_ids(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", SCENARIO)
    terse = teacher_role(tmp_path / "terse", "TERSE-WORDING.")
    out = tmp_path / "out"
    result = run(str(scenario), "--model", script(tmp_path, *ROUND), "--prompts", str(terse), "--out", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert [r["run_id"] for r in report["runs"]] == ["sky__scripted-script__r1"]
    assert list(report["by_prompts"]) == ["terse"]
    assert "TERSE-WORDING" in agent_systems(Path(report["runs"][0]["transcript"]))[0]
    assert "by prompt set" not in result.stdout  # one set: nothing to compare


def test_builtin_is_compared_with_a_folder(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", SCENARIO)
    terse = teacher_role(tmp_path / "terse", "TERSE-WORDING.")
    out = tmp_path / "out"
    result = run(str(scenario), "--model", script(tmp_path, *ROUND), "--prompts", "builtin",
                 "--prompts", str(terse), "--out", str(out))
    assert result.exit_code == 0, result.output
    runs = {r["prompts"]: r for r in json.loads((out / "report.json").read_text())["runs"]}
    assert set(runs) == {"builtin", "terse"}
    assert "TERSE-WORDING" not in agent_systems(Path(runs["builtin"]["transcript"]))[0]
    assert "You are the lead teacher" in agent_systems(Path(runs["builtin"]["transcript"]))[0]


def test_two_prompt_folders_with_one_name_are_refused(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", SCENARIO)
    a = teacher_role(tmp_path / "a" / "set", "A.")
    b = teacher_role(tmp_path / "b" / "set", "B.")
    result = run(str(scenario), "--model", "demo", "--prompts", str(a), "--prompts", str(b),
                 "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "the same name (set)" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_broken_template_stops_the_run_before_anything_runs(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", SCENARIO)
    broken = write(tmp_path / "broken" / "roles" / "teacher.md", "Fine line.\n{% if learner.name %}\nno end\n")
    out = tmp_path / "out"
    result = run(str(scenario), "--model", "demo", "--prompts", str(tmp_path / "broken"), "--out", str(out))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"maic: error: {broken}:")
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()  # nothing ran, nothing was written


def test_a_scenario_names_its_prompt_set_beside_it(tmp_path: Path) -> None:
    teacher_role(tmp_path / "prompts" / "terse", "SCENARIO-WORDING.")
    scenario = write(tmp_path / "sky.yaml", SCENARIO + "prompts: prompts/terse\n")
    out = tmp_path / "out"
    result = run(str(scenario), "--model", script(tmp_path, *ROUND), "--out", str(out))
    assert result.exit_code == 0, result.output
    entry = json.loads((out / "report.json").read_text())["runs"][0]
    assert entry["prompts"] == "terse" and entry["run_id"] == "sky__scripted-script__r1"
    assert "SCENARIO-WORDING" in agent_systems(Path(entry["transcript"]))[0]
    # --prompts given on the command line wins over the scenario's
    typed = teacher_role(tmp_path / "typed", "TYPED-WORDING.")
    out2 = tmp_path / "out2"
    result = run(str(scenario), "--model", script(tmp_path, *ROUND), "--prompts", str(typed), "--out", str(out2))
    assert result.exit_code == 0, result.output
    entry = json.loads((out2 / "report.json").read_text())["runs"][0]
    systems = agent_systems(Path(entry["transcript"]))
    assert "TYPED-WORDING" in systems[0] and "SCENARIO-WORDING" not in systems[0]


def test_a_scenario_prompt_set_with_a_broken_template_stops_the_run(tmp_path: Path) -> None:
    broken = write(tmp_path / "terse" / "agent" / "system.j2", "{{ agent.name }\n")
    scenario = write(tmp_path / "sky.yaml", SCENARIO + "prompts: terse\n")
    out = tmp_path / "out"
    result = run(str(scenario), "--model", "demo", "--out", str(out))
    assert result.exit_code == 2 and result.stderr.startswith(f"maic: error: {broken}:1: ")
    assert not out.exists()


def test_maic_home_prompts_are_the_default(tmp_path: Path, maic_home: Path) -> None:
    teacher_role(maic_home / "prompts", "HOME-WORDING.")
    scenario = write(tmp_path / "sky.yaml", SCENARIO)
    out = tmp_path / "out"
    result = run(str(scenario), "--model", script(tmp_path, *ROUND), "--out", str(out))
    assert result.exit_code == 0, result.output
    entry = json.loads((out / "report.json").read_text())["runs"][0]
    assert entry["prompts"] == "prompts" and "HOME-WORDING" in agent_systems(Path(entry["transcript"]))[0]


@pytest.mark.parametrize(("value", "line", "problem"), [
    ("/etc", 7, "prompts: a prompt-set folder relative to the scenario file"),
    ("../elsewhere", 7, "prompts: a prompt-set folder relative to the scenario file"),
])
def test_a_scenario_prompt_folder_stays_beside_the_file(tmp_path: Path, value: str, line: int,
                                                         problem: str) -> None:
    scenario = write(tmp_path / "s" / "sky.yaml", SCENARIO + f"prompts: {value}\n")
    result = run(str(scenario), "--model", "demo", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert f"{scenario}:{line}: {problem}" in result.stderr, result.stderr


def test_a_scenario_prompt_folder_may_not_escape_by_symlink_or_be_missing(tmp_path: Path) -> None:
    teacher_role(tmp_path / "outside", "OUTSIDE.")
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "link").symlink_to(tmp_path / "outside")
    scenario = write(tmp_path / "s" / "sky.yaml", SCENARIO + "prompts: link\n")
    result = run(str(scenario), "--model", "demo", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2 and "prompts: link leads outside the scenario's folder" in result.stderr
    missing = write(tmp_path / "s" / "other.yaml", SCENARIO + "prompts: nowhere\n")
    result = run(str(missing), "--model", "demo", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2 and "prompts: nowhere: no such folder" in result.stderr


def test_no_scenario_field_names_a_python_function(tmp_path: Path) -> None:
    """A shared scenario may name a prompt set, never code: an unknown field is refused by line."""
    scenario = write(tmp_path / "sky.yaml", SCENARIO + "director_function: evil.module:pick\n")
    result = run(str(scenario), "--model", "demo", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert f"{scenario}:7: director_function: unknown field" in result.stderr, result.stderr
    from maic_cli.evaluation.scenarios import Scenario

    assert not {"director", "director_function", "function", "module", "hook"} & set(Scenario.model_fields)


def test_chat_uses_the_prompts_folder(tmp_path: Path) -> None:
    terse = teacher_role(tmp_path / "terse", "CHAT-WORDING.")
    transcript = tmp_path / "t.jsonl"
    result = runner.invoke(app, ["chat", "--model", script(tmp_path, *ROUND), "--session", str(tmp_path / "s.json"),
                                 "--agents", "teacher,curious_student", "--name", "Ana", "--prompts", str(terse),
                                 "--transcript", str(transcript)], input="Why is the sky blue?\n")
    assert result.exit_code == 0, result.output
    systems = agent_systems(transcript)
    assert len(systems) == 1 and "CHAT-WORDING. Answer Ana briefly." in systems[0]


def test_chat_uses_maic_home_prompts_by_default(tmp_path: Path, maic_home: Path) -> None:
    teacher_role(maic_home / "prompts", "HOME-CHAT-WORDING.")
    transcript = tmp_path / "t.jsonl"
    result = runner.invoke(app, ["chat", "--model", script(tmp_path, *ROUND), "--session", str(tmp_path / "s.json"),
                                 "--agents", "teacher", "--transcript", str(transcript)], input="Why?\n")
    assert result.exit_code == 0, result.output
    assert "HOME-CHAT-WORDING." in agent_systems(transcript)[0]


def test_chat_with_a_broken_template_exits_2_before_anything_runs(tmp_path: Path) -> None:
    broken = write(tmp_path / "broken" / "snippets" / "speech.md", "ok\n{{ learner.name\n")
    session = tmp_path / "s.json"
    result = runner.invoke(app, ["chat", "--model", "demo", "--session", str(session),
                                 "--prompts", str(tmp_path / "broken")], input="hi\n")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"maic: error: {broken}:2: ") and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert not session.exists()  # no session, no transcript: nothing ran


def test_resume_with_another_prompt_set_is_refused(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", SCENARIO)
    terse = teacher_role(tmp_path / "terse", "TERSE.")
    warm = teacher_role(tmp_path / "warm", "WARM.")
    out = tmp_path / "out"
    first = run(str(scenario), "--model", script(tmp_path, *ROUND), "--prompts", str(terse), "--repeat", "2",
                "--out", str(out))
    assert first.exit_code == 0, first.output
    (out / "runs" / "sky__scripted-script__r2.json").unlink()
    before = (out / "report.json").read_bytes()
    other = run(str(scenario), "--model", script(tmp_path, *ROUND), "--prompts", str(warm), "--repeat", "2",
                "--resume", str(out))
    assert other.exit_code == 2
    assert "run sky__scripted-script__r1 used the prompt set terse, this batch uses warm" in other.stderr
    assert (out / "report.json").read_bytes() == before  # nothing ran, nothing was rewritten
    same = run(str(scenario), "--model", script(tmp_path, *ROUND), "--prompts", str(terse), "--repeat", "2",
               "--resume", str(out))
    assert same.exit_code == 0, same.output
    assert "1 runs already done, 1 to go" in same.stderr


def test_resume_with_another_director_is_refused(tmp_path: Path) -> None:
    scenario = write(tmp_path / "sky.yaml", SCENARIO)
    out = tmp_path / "out"
    first = run(str(scenario), "--model", script(tmp_path, *ROUND), "--director", "llm", "--repeat", "2",
                "--out", str(out))
    assert first.exit_code == 0, first.output
    (out / "runs" / "sky__scripted-script__r2.json").unlink()
    other = run(str(scenario), "--model", script(tmp_path, *ROUND), "--director", "rules", "--repeat", "2",
                "--resume", str(out))
    assert other.exit_code == 2
    assert "run sky__scripted-script__r1 used the director llm, this batch uses rules" in other.stderr
