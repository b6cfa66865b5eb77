"""``maic`` on awkward standard streams: narrow encodings, closed descriptors, readers that go away."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from maic_cli.cli.main import EXIT_BROKEN_PIPE
from tests.helpers import reply

ROOT = Path(__file__).resolve().parent.parent


def maic_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **extra}
    env.pop("PYTHONIOENCODING", None)
    env.update(extra)
    return env


def scripted(tmp_path: Path, text: str) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"reply": reply(text), "chunk_size": 4096}]), encoding="utf-8")
    return f"scripted:{path}"


def chat_command(tmp_path: Path, model: str) -> list[str]:
    return [sys.executable, "-m", "maic_cli", "chat", "--model", model, "--agents", "teacher", "--plain",
            "--session", str(tmp_path / "class.json")]


def test_an_ascii_or_latin1_output_shows_what_it_can_instead_of_crashing(tmp_path: Path) -> None:
    model = scripted(tmp_path, "Caf\u00e9 \U0001f600 \u2192 done")
    for encoding, expected in (("ascii", "Caf? ? ? done"), ("latin-1", "Caf\u00e9 ? ? done")):
        result = subprocess.run(chat_command(tmp_path, model), input=b"hello \xff\xfe there\n", capture_output=True,
                                env=maic_env(PYTHONIOENCODING=encoding, LANG="C", LC_ALL="C"), timeout=60)
        assert result.returncode == 0, result.stderr.decode(errors="replace")
        assert expected in result.stdout.decode(encoding), result.stdout
        assert b"Traceback" not in result.stderr
        (tmp_path / "class.json").unlink()


def test_a_closed_stdout_or_stdin_is_not_a_crash(tmp_path: Path) -> None:
    model = scripted(tmp_path, "Hello.")
    command = " ".join(f"'{part}'" for part in chat_command(tmp_path, model))
    result = subprocess.run(["sh", "-c", f"exec {command} >&- <&-"], capture_output=True, env=maic_env(),
                            timeout=60)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert b"Traceback" not in result.stderr and b"Exception ignored" not in result.stderr


def test_a_reader_that_goes_away_ends_maic_quietly(tmp_path: Path) -> None:
    model = scripted(tmp_path, "Many words to say. " * 20_000)  # far more than a pipe holds
    proc = subprocess.Popen(chat_command(tmp_path, model), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=maic_env())
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(b"talk a lot\n")
    proc.stdin.close()
    first = os.read(proc.stdout.fileno(), 10)  # like `| head -c 10`
    proc.stdout.close()
    with proc.stderr:
        err = proc.stderr.read()
    assert proc.wait(timeout=60) == EXIT_BROKEN_PIPE
    assert first.startswith(b"Ms.")
    assert b"Traceback" not in err and b"Exception ignored" not in err, err
    assert err == b"", err
