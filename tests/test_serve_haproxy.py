"""Past one machine, on real parts: Debian's HAProxy round-robins two real ``maic serve`` processes.  A
class's turns land on both (stateless: any instance answers any turn); one instance SIGKILLed in the
middle of a batch, and the batch finishes with no run in error (its cut turns are asked again)."""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from maic_cli.testing.openai_server import LoopbackOpenAIServer, ServedReply
from maic_cli.testing.serve_process import HAProxy, ServeProcess
from tests.helpers import reply

pytestmark = pytest.mark.skipif(HAProxy.binary() is None, reason="haproxy is not installed (.ci/run installs "
                                "Debian's package)")


def turns_served(server: ServeProcess) -> int:
    with urllib.request.urlopen(server.url + "/metrics", timeout=5) as answer:
        text = answer.read().decode()
    return sum(int(n) for n in re.findall(r'maic_turns_total\{outcome="(?:ok|error|cancelled)"\} (\d+)', text))


@pytest.fixture
def fleet() -> Iterator[tuple[LoopbackOpenAIServer, ServeProcess, ServeProcess, HAProxy]]:
    with LoopbackOpenAIServer(default=ServedReply(text=reply("Light scatters off the air, mostly blue."),
                                                  chunk_size=4, delay=0.01)) as model, \
            ServeProcess("--model", "openai/loopback", "--api-base", model.base_url, "--director", "rules") as one, \
            ServeProcess("--model", "openai/loopback", "--api-base", model.base_url, "--director", "rules") as two, \
            HAProxy([one.url, two.url]) as proxy:
        yield model, one, two, proxy


def scenarios(folder: Path, count: int, messages: int) -> Path:
    folder.mkdir()
    asked = json.dumps([f"Question {i}: why is the sky blue?" for i in range(messages)])
    for i in range(count):
        (folder / f"sky{i}.yaml").write_text(f"id: sky{i}\nclass: {{agents: [teacher, curious_student]}}\n"
                                             f"messages: {asked}\n", encoding="utf-8")
    return folder


def run_batch(tmp_path: Path, folder: Path, url: str, *flags: str) -> tuple[int, list[dict[str, object]]]:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(folder), "--out", str(out), "--plain", "--model", "openai/loopback",
                                      "--server", url, *flags])
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((out / "runs").glob("*.json"))]
    return result.exit_code, runs


def test_a_class_s_turns_land_on_both_instances(
        tmp_path: Path, fleet: tuple[LoopbackOpenAIServer, ServeProcess, ServeProcess, HAProxy]) -> None:
    _, one, two, proxy = fleet
    code, runs = run_batch(tmp_path, scenarios(tmp_path / "one", 1, 4), proxy.url)
    assert code == 0 and len(runs) == 1 and runs[0]["status"] == "complete"
    assert turns_served(one) >= 2 and turns_served(two) >= 2  # one class, answered by both
    assert one.log().count('"POST /v1/turn HTTP/1.1" 200') == turns_served(one)


def test_one_instance_killed_mid_batch_and_no_run_ends_in_error(
        tmp_path: Path, fleet: tuple[LoopbackOpenAIServer, ServeProcess, ServeProcess, HAProxy]) -> None:
    _, one, two, proxy = fleet
    killed_after: list[int] = []

    def kill_when_busy() -> None:
        deadline = time.monotonic() + 60
        while turns_served(one) < 6 and time.monotonic() < deadline:
            time.sleep(0.02)
        killed_after.append(turns_served(one))
        one.kill()  # SIGKILL, turns in flight

    killer = threading.Thread(target=kill_when_busy)
    killer.start()
    code, runs = run_batch(tmp_path, scenarios(tmp_path / "many", 12, 3), proxy.url, "-j", "6")
    killer.join()
    assert one.process is not None and one.process.returncode == -9 and killed_after
    assert len(runs) == 12
    assert [r["run_id"] for r in runs if r["status"] != "complete" or r["error"]] == []
    assert code == 0
    assert turns_served(two) > 0
    retried = sum(json.loads(line)["event"].get("retried", 0)
                  for transcript in (tmp_path / "out" / "transcripts").glob("*.jsonl")
                  for line in transcript.read_text(encoding="utf-8").splitlines() if '"type":"done"' in line)
    assert retried >= 1  # turns were in flight on the killed instance: asked again, none lost
