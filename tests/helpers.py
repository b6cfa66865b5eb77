"""Small builders shared by the tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from maic_cli.engine.models import AgentConfig
from maic_cli.lessons.lesson import DiscussionScene, Lesson, SlideScene
from maic_cli.replies.parser import StructuredStreamParser
from maic_cli.replies.parser_items import ActionItem, TextItem


def parse_in_chunks(reply: str, sizes: list[int] | None = None) -> tuple[str, list[tuple[str, dict]]]:
    """Feed ``reply`` in chunks of the given sizes (the rest in one) and collect the result."""
    parser = StructuredStreamParser()
    items = []
    pos = 0
    for size in sizes or []:
        items += parser.feed(reply[pos:pos + size])
        pos += size
    items += parser.feed(reply[pos:])
    items += parser.finish()
    text = "".join(i.content for i in items if isinstance(i, TextItem))
    actions = [(i.name, i.params) for i in items if isinstance(i, ActionItem)]
    return text, actions


def agent(agent_id: str, role: str = "student", name: str | None = None, **extra: Any) -> AgentConfig:
    return AgentConfig(id=agent_id, name=name or agent_id.title(), role=role,  # type: ignore[arg-type]
                       persona=f"{agent_id} persona", **extra)


def reply(*items: dict[str, Any] | str) -> str:
    """An agent reply: strings become text items, dicts are used as they are."""
    return json.dumps([{"type": "text", "content": i} if isinstance(i, str) else i for i in items])


def action(name: str, **params: Any) -> dict[str, Any]:
    return {"type": "action", "name": name, "params": params}


def decision(agent_id: str) -> str:
    return json.dumps({"next_agent": agent_id})


MODULES_MARK = "--- modules ---"


def modules_imported_by(argv: list[str]) -> set[str]:
    """Run ``maic ARGV`` in a fresh interpreter; return the modules it imported."""
    return modules_imported_by_code("from maic_cli.cli.main import main\nmain()", argv)


def modules_imported_by_code(code: str, argv: list[str]) -> set[str]:
    """Run ``code`` with ``sys.argv[1:] = argv`` in a fresh interpreter; return the modules it imported."""
    script = (f"import sys; sys.argv = {['maic', *argv]!r}\n"
              f"try:\n    exec({code!r})\nexcept SystemExit:\n    pass\n"
              f"print({MODULES_MARK!r}); print('\\n'.join(sys.modules))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.rpartition(MODULES_MARK)[2].split())


def without_faq(path: Path) -> Lesson:
    """A built-in lesson with none of its expected questions (``faq:``): what the class composes when no
    expected question matches."""
    from maic_cli.store.lessons import load_lesson

    lesson = load_lesson(path)
    for scene in lesson.scenes:
        if isinstance(scene, (SlideScene, DiscussionScene)):
            scene.faq = []
    return lesson


def without_faq_file(path: Path, into: Path) -> Path:
    """``path`` (a lesson file) written to ``into`` without its ``faq:`` entries."""
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for scene in data["scenes"]:
        scene.pop("faq", None)
    into.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return into
