"""``maic --help`` and ``maic COMMAND --help`` start like a bare Typer app: no heavy imports.

A structural guard, not a timing (timed tests are flaky; tests/benchmarks/startup_bench.py
measures the time against a bare two-command Typer app).  Each help runs in a fresh
interpreter; what it imported is compared with what it must not import: the engine,
the stores, the LLM clients, the views, pydantic, prompt-toolkit, litellm, aiohttp,
yaml and asyncio — and with what a bare Typer app imports for its ``--help``.  (For a
subcommand's help a bare Typer app imports pydantic: its groups' help option has no
default; maic's groups declare their own, see cli/help_option.py.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maic_cli.cli.app import app
from tests.helpers import modules_imported_by, modules_imported_by_code

HELPS = [["--help"], ["chat", "--help"], ["replay", "--help"], ["run", "--help"], ["agents", "--help"],
         ["agents", "list", "--help"], ["report", "--help"], ["lesson", "--help"], ["lesson", "new", "--help"],
         ["lesson", "check", "--help"], ["voices", "--help"], ["voices", "say", "--help"], ["--version"]]

FORBIDDEN = ("maic_cli.engine", "maic_cli.store", "maic_cli.llm", "maic_cli.ui", "maic_cli.chat.run",
             "maic_cli.chat.loop", "maic_cli.evaluation.batch", "maic_cli.chat.replay",
             "maic_cli.evaluation.replay_check", "pydantic", "prompt_toolkit", "litellm", "aiohttp", "asyncio", "yaml",
             "numpy", "jinja2", "matplotlib", "json_repair", "piper", "onnxruntime", "maic_cli.speech")

BARE_TYPER_APP = '''
import typer

app = typer.Typer(add_completion=False)


@app.command()
def hello(name: str = typer.Option("world", help="Who to greet.")) -> None:
    """Say hello."""


@app.command()
def bye() -> None:
    """Say goodbye."""


app()
'''


def forbidden_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN))


def third_party(modules: set[str]) -> set[str]:
    """The top-level packages that are neither the standard library nor maic."""
    tops = {m.split(".")[0] for m in modules}
    return {t for t in tops if t not in sys.stdlib_module_names and not t.startswith("_") and t != "maic_cli"}


@pytest.fixture(scope="module")
def bare_help_modules() -> set[str]:
    """What a bare two-command Typer app imports for ``--help``."""
    return modules_imported_by_code(BARE_TYPER_APP, ["--help"])


@pytest.mark.parametrize("argv", HELPS, ids=" ".join)
def test_help_imports_nothing_heavy(argv: list[str]) -> None:
    modules = modules_imported_by(argv)
    assert {"maic_cli.cli.app", "maic_cli.cli.chat_cmd", "maic_cli.cli.run_cmd"} <= modules  # the check sees maic
    assert forbidden_in(modules) == []


@pytest.mark.parametrize("argv", HELPS, ids=" ".join)
def test_help_imports_no_library_a_bare_typer_app_does_not(argv: list[str], bare_help_modules: set[str]) -> None:
    assert "typer" in bare_help_modules and "rich" in bare_help_modules  # the bare app really ran its help
    assert third_party(modules_imported_by(argv)) - third_party(bare_help_modules) == set()


def test_a_bare_typer_app_imports_pydantic_for_a_subcommand_help() -> None:
    """Why maic declares its groups' help option: Typer's own would import pydantic."""
    assert "pydantic" in modules_imported_by_code(BARE_TYPER_APP, ["hello", "--help"])


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["agents", "--help"], ["agents", "-h"]], ids=" ".join)
def test_the_groups_help_option_prints_the_help(argv: list[str]) -> None:
    result = CliRunner().invoke(app, argv, prog_name="maic")
    assert result.exit_code == 0
    assert f"Usage: maic {'agents ' if argv[0] == 'agents' else ''}[OPTIONS] COMMAND [ARGS]..." in result.stdout
    assert "--help" in result.stdout and "-h" in result.stdout and "Show this message and exit." in result.stdout
    assert ("validate" if argv[0] == "agents" else "replay") in result.stdout  # the commands are listed


def test_the_guard_sees_a_heavy_import() -> None:
    """The same checks flag a command module that imports the engine at its top."""
    heavy = "import maic_cli.engine.models\nfrom maic_cli.cli.main import main\nmain()"
    modules = modules_imported_by_code(heavy, ["--help"])
    assert "maic_cli.engine.models" in forbidden_in(modules)
    assert "pydantic" in modules


# -- light commands: what they load of maic -------------------------------------------------------------
PACKAGE_ROOT = Path(__file__).resolve().parent.parent
LESSON = str(Path(__file__).resolve().parent.parent / "lessons" / "photosynthesis.yaml")
LIGHT = [["agents", "list"], ["agents", "show", "teacher"], ["agents", "validate"], ["lesson", "check", LESSON]]
# A persona is an engine.models.AgentConfig (its actions checked by action_params, its text by
# replies.sanitize; `agents show` lists what it may do: engine.actions); a lesson is lessons.lesson.
# Nothing else of the class rooms: no turn, round, player, prompt set or template engine.
LIGHT_CLASS = {"maic_cli.engine.models", "maic_cli.engine.action_params", "maic_cli.replies.sanitize",
               "maic_cli.lessons.lesson", "maic_cli.engine.actions"}
CLASS_ROOMS = ("maic_cli.engine.", "maic_cli.replies.", "maic_cli.lessons.", "maic_cli.authoring.", "maic_cli.llm.",
               "maic_cli.evaluation.", "maic_cli.chat.")
LIGHT_BUDGET = 35  # maic modules (package __init__s, docstrings only, not counted); the command modules
#                    (Typer reads their signatures) are 20 of them (with serve_cmd); `agents show` also casts
#                    the agent's voice (speech.port, spec, cast, piper_engine, no engine loaded; store.config
#                    for the voice setting)


@pytest.mark.parametrize("argv", LIGHT, ids=lambda argv: " ".join(argv[:2]))
def test_light_commands_load_only_the_engine_modules_their_files_need(argv: list[str]) -> None:
    modules = modules_imported_by(argv)
    maic = {m for m in modules if m == "maic_cli" or m.startswith("maic_cli.")}
    assert "maic_cli.cli.agents_cmd" in maic and ("maic_cli.store.lessons" in maic or argv[0] == "agents")
    assert {m for m in maic if m.startswith(CLASS_ROOMS)} <= LIGHT_CLASS
    assert {"jinja2", "litellm", "numpy", "matplotlib", "prompt_toolkit"}.isdisjoint(modules)
    files = {m for m in maic if not (PACKAGE_ROOT / m.replace(".", "/") / "__init__.py").is_file()}
    assert len(files) <= LIGHT_BUDGET, sorted(files)


TRANSCRIPT = str(PACKAGE_ROOT / "transcripts" / "lesson_photosynthesis.jsonl")
HEAVY = ("jinja2", "litellm", "numpy", "matplotlib")
# Every light command (tests/benchmarks/light_commands.py times them), and the module that shows it really ran.
LIGHTEST = [(["agents", "list"], "maic_cli.store.personas"), (["lesson", "check", LESSON], "maic_cli.store.lessons"),
            (["learner", "list"], "maic_cli.store.learner_profile"),
            (["replay", TRANSCRIPT, "--plain"], "maic_cli.chat.replay")]


@pytest.mark.parametrize(("argv", "ran"), LIGHTEST, ids=["agents list", "lesson check", "learner list",
                                                          "replay --plain"])
def test_light_commands_import_no_heavy_library(argv: list[str], ran: str, maic_home: Path) -> None:
    """``maic replay --plain`` plays a whole lesson (a replay needs a round's result, not the turn that makes
    one, nor its templates); ``learner list`` lists a learner maic remembers."""
    from maic_cli.store.learner_profile import LearnerProfile, save_profile

    save_profile(LearnerProfile(name="Ana", sessions=2), maic_home)
    modules = modules_imported_by(argv)
    assert ran in modules
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []


def test_every_package_init_is_a_docstring_only() -> None:
    """No package imports its modules on the way in: importing one module loads only what it needs."""
    import ast

    package = Path(__file__).resolve().parent.parent / "maic_cli"
    inits = sorted(package.rglob("__init__.py"))
    assert len(inits) >= 7  # maic_cli and its packages: the check sees them
    for init in inits:
        body = ast.parse(init.read_text(encoding="utf-8")).body
        assert body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant), init
        rest = body[1:]
        allowed = init.parent == package and all(  # the top package also holds __version__
            isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__version__"]
            for node in rest)
        assert rest == [] or allowed, f"{init.relative_to(package.parent)} does more than document its package"


def test_importing_one_engine_module_loads_no_other_room() -> None:
    code = "import maic_cli.engine.outcomes\nprint('@@'); import sys; print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    modules = set(out.stdout.rpartition("@@")[2].split())
    assert "maic_cli.engine.outcomes" in modules
    assert {m for m in modules if m.startswith("maic_cli")} == {"maic_cli", "maic_cli.engine",
                                                               "maic_cli.engine.outcomes"}
    assert "jinja2" not in modules
