"""The architecture, checked: no import cycles, dependency arrows one way, litellm in two modules (llm, speech)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "maic_cli"
# The rooms, bottom to top, and which rooms each may import (arrows point down only).  Modules at
# the top of the package (errors, files, untrusted, yamlfile, signals) are shared by every room and
# import no room.
ROOMS = ("replies", "prompts", "llm", "speech", "engine", "lessons", "authoring", "store", "ui", "media", "formats",
         "evaluation", "report", "chat", "serve", "cli")
_BELOW_CLASS = {"replies", "prompts", "llm"}
MAY_IMPORT = {
    "replies": {"replies"},
    "prompts": {"prompts"},
    "llm": {"llm"},
    "speech": {"speech"},  # the speech port and its engines, beside llm: the class never imports it
    "engine": {"engine"} | _BELOW_CLASS,
    "lessons": {"lessons", "engine"} | _BELOW_CLASS,
    "authoring": {"authoring", "lessons", "engine"} | _BELOW_CLASS,
    "store": {"store", "authoring", "lessons", "engine"} | _BELOW_CLASS,
    "ui": {"ui", "lessons", "engine"} | _BELOW_CLASS,
    # audio, captions and video of a class or a lesson: what the replay, lesson export and batch share
    "media": {"media", "speech", "ui", "lessons", "engine"} | _BELOW_CLASS,
    # a lesson read from and written to other formats (decks, notes, PDFs, OpenMAIC classrooms): the lesson
    # commands import it; store never does (a lesson file is store's, the formats around it are not)
    "formats": {"formats", "media", "speech", "store", "ui", "authoring", "lessons", "engine"} | _BELOW_CLASS,
    "evaluation": {"evaluation", "media", "speech", "store", "ui", "lessons", "engine"} | _BELOW_CLASS,
    # the batch report: built from the runs' results (evaluation), which never import it
    "report": {"report", "evaluation", "store", "lessons", "engine"} | _BELOW_CLASS,
    "chat": {"chat", "media", "speech", "store", "ui", "lessons", "engine"} | _BELOW_CLASS,
    # maic serve: the stateless turn over HTTP and its thin client, beside chat (neither imports the other)
    "serve": {"serve", "formats", "store", "lessons", "engine"} | _BELOW_CLASS,
    "cli": set(ROOMS),
    "testing": set(ROOMS) | {"testing"},  # helpers for the tests (not in the wheel); no room imports them
}
# Rooms that never touch the terminal's rendering library: the class and everything a class is made of.
NO_RICH = ("replies", "prompts", "llm", "speech", "engine", "lessons", "authoring", "store", "formats")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, set[str]]:
    """Each module's imports of other maic_cli modules (and of any outside module, by top name)."""
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                found.add(target)
                found.update(f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in paths)
        graph[name] = {t for t in found if t != name}
    return graph


def test_no_import_cycles() -> None:
    graph = {m: {t for t in deps if t.startswith("maic_cli")} for m, deps in imports().items()}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == goal or (nxt not in seen and (seen.add(nxt) or reaches(nxt, goal, seen))):
                return True
        return False

    cycles = sorted(m for m in graph if reaches(m, m, set()))
    assert cycles == []


def test_dependency_arrows_point_one_way() -> None:
    wrong = []
    for module, deps in imports().items():
        if module in ("maic_cli", "maic_cli.__main__", "maic_cli.testing"):
            continue
        if module.count(".") == 1 and module.split(".")[1] not in ROOMS:  # a shared top-level module
            if any(dep.split(".")[1] in MAY_IMPORT for dep in deps if dep.startswith("maic_cli.") and dep.count(".")):
                wrong.append(f"{module} (shared) imports a room")
            continue
        room = module.split(".")[1]
        if room not in MAY_IMPORT:
            wrong.append(f"{module} is in no known room")
            continue
        for dep in deps:
            parts = dep.split(".")
            target = parts[1] if parts[0] == "maic_cli" and len(parts) > 1 else ""
            if target in MAY_IMPORT and target not in MAY_IMPORT[room]:
                wrong.append(f"{module} imports {dep}")
    assert wrong == []


def test_command_modules_never_import_each_other() -> None:
    """A ``*_cmd`` module is one command's flags; what two commands share lives in a room (or in a
    cli helper module), so a command can change without another one noticing."""
    commands = {m for m in imports() if m.startswith("maic_cli.cli.") and m.endswith("_cmd")}
    graph = imports()
    assert sorted(f"{m} imports {d}" for m in commands for d in graph[m] if d in commands) == []


def test_every_package_is_a_known_room() -> None:
    packages = {p.parent.name for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE}
    assert packages - set(ROOMS) <= {"testing"}
    assert set(ROOMS) - packages == set()


def test_the_class_rooms_never_import_rich_and_litellm_is_imported_by_two_modules() -> None:
    graph = imports()
    engine_rich = [m for m, deps in graph.items() if m.split(".")[1:2] and m.split(".")[1] in NO_RICH and
                   any(d == "rich" or d.startswith("rich.") for d in deps)]
    litellm_users = sorted(m for m, deps in graph.items() if any(d == "litellm" or d.startswith("litellm.")
                                                                 for d in deps))
    assert engine_rich == []
    # The speech room sits beside llm and may not import it: its provider voices call litellm's speech() from
    # their own module (speech/litellm_speech.py), imported inside the engine's first sentence.
    assert litellm_users == ["maic_cli.llm.litellm_client", "maic_cli.speech.litellm_speech"]


ROOT = PACKAGE.parent


def test_architecture_md_names_every_package_and_the_sections_code_cites() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    packages = sorted(p.parent.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("__init__.py")
                      if p.parent != PACKAGE)
    assert len(packages) >= 6
    assert [p for p in packages if f"`{p}/`" not in text] == []
    for section in ("The rooms and their arrows", "One turn", "One round", "The event stream",
                    "Files and formats", "The lesson timeline", "The batch harness", "Where each concern lives"):
        assert f"\n## {section}\n" in text
    cited = {m for p in [*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py")]
             for m in re.findall(r'ARCHITECTURE\.md, "([^"]+)"', p.read_text(encoding="utf-8"))}
    assert cited and [c for c in cited if f"\n## {c}\n" not in text] == []


def test_no_source_or_test_cites_a_document_outside_the_repository() -> None:
    marker, shared = "DESIGN" + " §", "shared/" + "DESIGN"  # spelled apart so that this test does not find itself
    files = [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.j2"), *PACKAGE.rglob("*.md"), *(ROOT / "tests").rglob("*.py")]
    assert [str(p.relative_to(ROOT)) for p in files if marker in p.read_text(encoding="utf-8")] == []
    assert [str(p.relative_to(ROOT)) for p in files if shared in p.read_text(encoding="utf-8")] == []
