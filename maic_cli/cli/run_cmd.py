"""``maic run SCENARIO…``: batch classes with expectations, metrics and reports.

Scenarios run with every ``--model`` and every ``--prompts`` set (compared side by side
in the report), each ``--repeat`` times.  ``--judge MODEL`` scores every run's turns
after its class (cli/judging.py).

``maic run --help`` must stay as quick as a bare Typer app's: the scenario and report
stores, the engine, the LLM clients and Rich's live display are imported inside the
functions that use them, not here.
"""

from __future__ import annotations

import gc
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from .. import __version__
from ..errors import InputError, MaicError
from ..untrusted import clean
from .errors import EXIT_INTERRUPTED, check_choice, friendly
from .help_option import MAX_TURNS_HELP, MODEL_DEFAULT, MODEL_KINDS, TEMPERATURE_HELP
from .xapi_cmd import LRS_HELP, batch_records, check_lrs

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from ..engine.policies import DirectorPolicy
    from ..llm.pool import ClientPool
    from ..llm.port import LLMClient
    from ..llm.spec import ModelSpec
    from ..store.reports import RunResult
    from .batch import RunContext, RunSpec


def parse_shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        index, total = (int(part) for part in value.split("/"))
    except ValueError:
        raise InputError(f"--shard {value}: use I/N, e.g. 2/4") from None
    if not 1 <= index <= total:
        raise InputError(f"--shard {value}: I must be between 1 and N")
    return index, total


def expand(paths: list[Path], models: list[str], repeat: int, max_turns: int | None,
           agents_dirs: list[Path], *, client: str = "auto", router: bool = False,
           prompts: list[Path] | None = None, directors: list[str] | None = None,
           api_base: str | None = None, learner_model: str | None = None, turns: int | None = None) -> list[RunSpec]:
    """scenario × model × prompt set × director policy × repeat; the run id names the prompt set (or
    the policy) only when several are compared (so a batch with one keeps its ids, and ``--resume``
    works across versions).  A ``.jsonl`` file holds tutoring tasks, one scenario each
    (cli/batch_learner.py)."""
    from ..engine.policies import policy_from_flag
    from ..llm.spec import ModelSpec
    from ..store.config import load_settings
    from ..store.personas import load_registry
    from ..store.scenarios import (
        prompts_folder,
        resolve_class,
        scenario_files,
        scenario_lesson,
        turn_config,
    )
    from .batch import RunSpec
    from .batch_learner import learner_setup, load_sources
    from .chat_cmd import resolve_model
    from .prompt_sets import DefaultPromptSets, compared_prompt_sets
    from .scenario_notice import say_scenario_model

    compared = compared_prompt_sets(prompts or [])
    defaults = DefaultPromptSets()
    registry = load_registry(agents_dirs)
    settings = load_settings()
    policies: list[DirectorPolicy | None] = [policy_from_flag(d) for d in dict.fromkeys(directors or [])]
    policies = policies or [None]  # --director: only a typed flag names a policy (a hook is imported here)
    specs: list[RunSpec] = []
    for path, (scenario, task) in ((p, source) for p in scenario_files(paths) for source in load_sources(p)):
        agents = resolve_class(scenario, registry, path)
        config = turn_config(scenario, agents, max_turns)
        lesson = scenario_lesson(scenario, path)
        sets = compared or [defaults.for_scenario(prompts_folder(scenario, path))]
        if not models and scenario.model:
            say_scenario_model(path, scenario.model, api_base or settings.api_base)
        for model in models or [scenario.model or resolve_model(settings, None)]:
            model_spec = ModelSpec.parse(model, client=client, router=router, api_base=api_base)
            learner = learner_setup(scenario, path, task, model_spec, learner_model, turns, client=client,
                                    router=router, api_base=api_base)
            for label, prompt_set in sets:
                for k in range(1, repeat + 1):
                    specs.extend(RunSpec(scenario, path, agents, config.model_copy(deep=True), model_spec, k,
                                         prompts=prompt_set, prompts_label=label, label_in_id=len(compared) > 1,
                                         director=policy, director_in_id=len(policies) > 1, lesson=lesson,
                                         learner=learner)
                                 for policy in policies)
    from ..store.run_results import plain_run_id

    unsaved = next((s for s in specs if not plain_run_id(s.run_id)), None)
    if unsaved is not None:  # refused before any model call: a run that cannot be saved is never played
        raise InputError(f"{unsaved.path}: run id {clean(unsaved.run_id)[:120]!r} cannot name a file (letters, "
                         "digits, _ . -, at most 255); give the scenario a shorter id:")
    duplicates = {run_id for run_id, n in Counter(s.run_id for s in specs).items() if n > 1}
    if duplicates:
        raise InputError(f"two scenarios share the id(s) {', '.join(sorted(duplicates))}; give them distinct ids")
    return sorted(specs, key=lambda s: (s.scenario.id or "", s.model.raw, s.prompts_label, s.policy.name,
                                        s.repeat))  # r2 before r10


def take_shard(specs: list[RunSpec], shard: str | None) -> list[RunSpec]:
    """Part I of N of the batch; a part with no runs is refused (an empty report would look like success)."""
    shard_spec = parse_shard(shard)
    if shard_spec is None:
        return specs
    index, total = shard_spec
    part = [spec for i, spec in enumerate(specs) if i % total == index - 1]
    if not part:
        raise InputError(f"--shard {shard}: the batch has {len(specs)} runs, so part {index} has none; "
                         f"use at most {len(specs)} parts")
    return part


def merge_results(folders: list[Path], out: Path) -> list[RunResult]:
    """The runs of ``folders``, each folder and each run counted once, for a report in ``out``."""
    from ..store.reports import load_runs

    seen: dict[Path, Path] = {}
    for folder in folders:
        real = folder.resolve()
        if real in seen:
            raise InputError(f"--merge {folder}: the same folder as --merge {seen[real]}; name each folder once")
        seen[real] = folder
    if out.resolve() in seen:
        raise InputError(f"--out {out}: one of the --merge folders; the merged report goes to its own folder")
    origin: dict[str, Path] = {}
    results = []
    for folder in folders:
        for result in load_runs(folder):
            if result.run_id in origin:
                raise InputError(f"run {clean(result.run_id)} is in both {origin[result.run_id]} and {folder}; "
                                 "merge each run once")
            origin[result.run_id] = folder
            results.append(result)
    return results


def merge_batches(folders: list[Path], out: Path) -> tuple[dict[str, Any], list[RunResult]]:
    """The one merge path (``maic run --merge`` and ``maic report A B --out``): the runs of ``folders``
    into the reports of ``out``, a folder of its own; exit with :func:`batch_exit_code` of the runs."""
    from ..store.batch_folder import claim

    results = merge_results(folders, out)
    if not results:
        raise InputError(f"{', '.join(map(str, folders))}: no finished runs to report on")
    meta = {"merged": ", ".join(map(str, folders)), "maic": __version__}
    claim(out, "--out", meta)
    return save_reports(out, results, meta), results


def batch_exit_code(results: list[RunResult]) -> int:
    """One rule for a batch and for a merge of batches: 0 when every run passed, else 1."""
    return 0 if all(r.passed for r in results) else 1


def save_reports(folder: Path, results: list[RunResult], meta: dict[str, Any]) -> dict[str, Any]:
    from ..store.paths import write_atomic
    from ..store.reports import write_reports
    from ..ui.report_html import report_html  # imports matplotlib only when it draws

    try:
        report = write_reports(folder, results, meta)
        write_atomic(folder / "report.html", report_html(report, results))
        return report
    except OSError as exc:
        raise MaicError(f"{folder}: cannot write the report: {exc.strerror or exc}") from None


def client_pool(*, api_base: str | None, router_file: Path | None, seed: int | None,
                structured: str, temperature: float | None) -> ClientPool:
    """The batch's clients: a fresh one per run for stateful fakes, one shared per provider model; a
    provider model is served as its spec says (direct or litellm: ``expand`` chose)."""
    from ..llm.factory import make_llm
    from ..llm.pool import ClientPool

    router: Any = None
    names: set[str] = set()
    if router_file is not None:
        from ..llm.router import load_router

        router, names = load_router(router_file)
    extra = {"seed": seed} if seed is not None else None

    def build(spec: ModelSpec) -> LLMClient:
        if spec.kind == "router":
            from ..llm.router import RouterClient

            return RouterClient(router, names, spec.raw, extra=extra, structured=structured, temperature=temperature)
        if not spec.is_real:
            return make_llm(spec.raw)
        served_by = "direct" if spec.kind == "direct" else "litellm"
        return make_llm(spec.raw, api_base=api_base, extra=extra, structured=structured, temperature=temperature,
                        client=served_by, rate_limit_retries=10)  # rate limits slow a batch down, not fail it

    return ClientPool(build)


def summary_table(report: dict[str, Any], group: str = "by_scenario", name: str = "scenario") -> Table:
    """The batch at a glance, one row per scenario (or per prompt set, model …: ``group``)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="maic run" if group == "by_scenario" else f"maic run by {name}", box=None, pad_edge=False)
    for column in (name, "runs", "passed", "errors", "rounds", "agent turns", "cue-user", "ttft p50",
                   "turn p50", "cost"):
        table.add_column(column, justify="left" if column == name else "right")
    for key, s in report[group].items():  # Text(key): a file's name is not Rich markup
        table.add_row(Text(key), str(s["runs"]), str(s["passed"]), str(s["errors"]), str(s["rounds"]),
                      str(s["agent_turns"]), "–" if s["cue_user_rate"] is None else f"{s['cue_user_rate']:.0%}",
                      "–" if s["ttft_p50"] is None else f"{s['ttft_p50']:.2f}s",
                      "–" if s["turn_latency_p50"] is None else f"{s['turn_latency_p50']:.2f}s",
                      f"${s['total_cost']:.4f}")
    return table


def judge_table(report: dict[str, Any], group: str = "by_model", name: str = "model") -> Table:
    """The judge's scores at a glance (share of judged turns meeting each criterion), one row per model."""
    from rich.table import Table
    from rich.text import Text

    labels = report["judge"]["criteria"]  # the rubric's (store/report_judge.py); its rates, then its score
    names = list(report["overall"]["judge"]["rates"])
    table = Table(title="judged turns", box=None, pad_edge=False)
    for column in (name, "turns", "missing", *(labels.get(c, c) for c in names), "score", "judge cost"):
        table.add_column(column, justify="left" if column == name else "right")
    for key, s in report[group].items():
        judge = s["judge"]
        rates = [judge["rates"][c]["value"] for c in names]
        score = next(iter(judge["means"].values()))["value"]
        table.add_row(Text(key), str(judge["turns_judged"]), str(judge["turns_missing"]),
                      *("–" if rate is None else f"{rate:.0%}" for rate in rates),
                      "–" if score is None else f"{score:.2f}", f"${judge['usage']['cost']:.4f}")
    return table


def print_summary(report: dict[str, Any], console: Console) -> None:
    from rich.text import Text

    console.print(summary_table(report))
    if len(report["by_prompts"]) > 1:  # prompt sets compared: side by side
        console.print(summary_table(report, "by_prompts", "prompt set"))
    if report.get("judge"):
        console.print(judge_table(report))
    if report.get("tutoring"):
        from ..ui.report_tutoring import tutoring_table

        console.print(tutoring_table(report))
    failing = [r for r in report["runs"] if not r["passed"]]
    for run in failing[:20]:
        problems = run["failures"] or [run["error"] or run["status"]]
        console.print(Text.assemble(("✗ ", "red"), clean(f"{run['run_id']}: " + "; ".join(problems))))
    if len(failing) > 20:
        console.print(f"… and {len(failing) - 20} more in report.md")


async def _run_with_progress(specs: list[RunSpec], context: RunContext, concurrency: int,
                             console: Console | None) -> tuple[list[RunResult], bool]:
    from rich.console import Group
    from rich.live import Live
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from .batch import run_all

    total = len(specs)
    finished = 0
    if console is None:
        def on_done(result: RunResult) -> None:
            nonlocal finished
            finished += 1
            mark = "ok  " if result.passed else result.status if result.status != "complete" else "FAIL"
            rounds = f"{len(result.rounds)} round{'' if len(result.rounds) == 1 else 's'}"
            line = (f"[{finished}/{total}] {mark:<9} {result.run_id} — {rounds}"
                    + (f": {result.failures[0]}" if result.failures else "")
                    + (f": {result.error}" if result.error else ""))
            sys.stderr.write(clean(" ".join(line.split())) + "\n")  # provider text: one clean line
            sys.stderr.flush()

        return await run_all(specs, context, concurrency, on_done)

    bar = Progress(TextColumn("runs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console)
    task = bar.add_task("runs", total=total)

    class Screen:  # drawn at each refresh (8 a second), not at each event of 50 classes
        def __rich__(self) -> Group:
            table = Table(box=None, pad_edge=False, show_header=False)
            for item in list(context.progress.values())[:12]:
                table.add_row(item.run_id, f"round {item.round}/{item.rounds}", item.status)
            return Group(bar, table)

    with Live(Screen(), console=console, refresh_per_second=8, transient=True):
        return await run_all(specs, context, concurrency, lambda result: bar.advance(task))


@friendly
def run(
    paths: list[Path] = typer.Argument(None, help="Scenario files or folders."),
    model: list[str] = typer.Option(None, "--model", "-m", help=f"Model(s) to run every scenario with, repeatable: "
                                    f"{MODEL_KINDS}, scripted:FILE or replay:FILE. Default: the scenario's, then "
                                    f"{MODEL_DEFAULT}."),
    repeat: int = typer.Option(1, "--repeat", min=1, help="Runs per scenario and model."),
    concurrency: int = typer.Option(4, "--concurrency", "-j", min=1, max=512, help="Classes at once."),
    out: Path = typer.Option(None, "--out", "-o", help="Output folder (default: runs/<timestamp>): new, empty "
                             "or an earlier maic batch; a folder holding other files is refused."),
    seed: int = typer.Option(None, "--seed", help="Sampling seed passed to the model where supported."),
    max_turns: int = typer.Option(None, "--max-turns", min=1, max=50, help=MAX_TURNS_HELP),
    resume: Path = typer.Option(None, "--resume", help="Continue the batch in this output folder (it must "
                                "hold one), skipping runs that already finished."),
    shard: str = typer.Option(None, "--shard", help="Run only part I of N of the batch (I/N); a part "
                              "with no runs is refused (exit 2)."),
    merge: list[Path] = typer.Option(None, "--merge", help="Combine the reports of these output folders "
                                     "(repeatable, each folder and run once) into --out, a folder of its "
                                     "own (required), instead of running."),
    router: Path = typer.Option(None, "--router", help="A litellm Router config (YAML/JSON) to spread calls "
                                "over several deployments."),
    api_base: str = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server."),
    agents_dir: list[Path] = typer.Option(None, "--agents-dir", help="A folder of persona files. Repeatable."),
    structured: str = typer.Option("auto", "--structured", help="auto, off, json_schema or json_object."),
    client: str = typer.Option("auto", "--client", help="auto (default): direct for an openai/, hosted_vllm/ "
                               "or litellm_proxy/ model with --api-base, else litellm; direct: a thin client "
                               "for the OpenAI-compatible server at --api-base (far less CPU per call); litellm."),
    temperature: float = typer.Option(None, "--temperature", min=0, max=2, help=TEMPERATURE_HELP),
    prompts: list[Path] = typer.Option(None, "--prompts", help="A prompt-set folder (overrides of the built-in "
                                       "templates; `builtin` for none). Repeat to compare sets like --model "
                                       "(default: the scenario's prompts:, then $MAIC_HOME/prompts)."),
    plain: bool = typer.Option(False, "--plain", help="Plain progress lines even on a terminal."),
    director: list[str] = typer.Option(None, "--director", help="Who picks the speakers: llm, rules, hybrid or "
                                       "module:function (repeatable: compared side by side; default: rules for "
                                       "the offline model, else llm)."),
    judge: str = typer.Option(None, "--judge", help="A judge model (any --model string) that scores every agent "
                              "turn and round against the rubric (judge/rubric.j2) after each run; its calls "
                              "are priced apart."),
    judge_api_base: str = typer.Option(None, "--judge-api-base", help="Base URL of an OpenAI-compatible server "
                                       "for the judge."),
    rubric: str = typer.Option("default", "--rubric", help="With --judge: the rubric, default or pedagogy (the "
                               "BEA 2025 tutor dimensions, teacher-side turns)."),
    xapi: bool = typer.Option(False, "--xapi", help="Also write each run's learning records (xAPI statements) "
                              "to OUT/xapi/RUN.xapi.jsonl."),
    lrs: str = typer.Option(None, "--lrs", help=LRS_HELP),
    learner_model: str = typer.Option(None, "--learner-model", help="The model of simulated learners (a "
                                      "scenario's learner.model wins; default: the class's model); its calls "
                                      "are priced apart."),
    style: list[str] = typer.Option(None, "--style", help="A built-in teaching style (direct, socratic, "
                                    "worked_example): a prompt set by name; repeat to compare, like --prompts."),
    turns: int = typer.Option(None, "--turns", min=1, max=50, help="Tutoring tasks (TASKS.jsonl): report "
                              "success@k and telling@k for k = 1…K (default 7; the student speaks K + 1 times); "
                              "scenarios: the most a simulated learner speaks."),
) -> None:
    """Run scenarios in batch; exit 1 if an expectation fails, 2 on invalid input."""
    import asyncio  # not at the top: ~30 ms that --help does not need

    from .extras import require_report

    require_report()  # before any run: the report at the end needs it

    from rich.console import Console

    from ..llm.openai_compat import STRUCTURED_MODES
    from ..store.batch_folder import check_resumable, claim
    from ..store.reports import load_runs
    from .batch import RunContext

    console = Console(stderr=True) if sys.stderr.isatty() and not plain else None
    stdout = Console() if sys.stdout.isatty() else Console(width=160)
    if merge:
        if judge:
            raise InputError("--judge judges runs, --merge only combines reports: judge each folder with "
                             "`maic report DIR --judge MODEL`, then merge")
        if out is None:
            raise InputError("--merge needs --out: the merged report goes to its own folder, "
                             "so each merged folder keeps its own report")
        report, results = merge_batches(merge, out)
        print_summary(report, stdout)
        typer.echo(f"Merged {len(results)} runs into {out / 'report.json'}")
        raise typer.Exit(batch_exit_code(results))
    if not paths:
        raise InputError("name at least one scenario file or folder (or use --merge)")
    check_choice("--client", client, ("auto", "litellm", "direct"))
    check_choice("--structured", structured, STRUCTURED_MODES)
    check_lrs(lrs)  # a bad --lrs URL is refused before the batch runs
    from ..store.config import load_settings

    base_url: str | None = api_base or load_settings().api_base  # as maic chat: --api-base, MAIC_API_BASE, config
    if style:
        from ..store.styles import style_folder

        prompts = [*(prompts or []), *(style_folder(name) for name in dict.fromkeys(style))]
    folder = resume or out or Path("runs") / time.strftime("%Y%m%d-%H%M%S")
    if resume:
        check_resumable(resume)
    specs = take_shard(expand(paths, list(model or []), repeat, max_turns, list(agents_dir or []),
                              client=client, router=router is not None, prompts=list(prompts or []),
                              directors=list(director or []), api_base=base_url, learner_model=learner_model,
                              turns=turns), shard)
    from ..llm.keys import check_key

    for raw in dict.fromkeys(spec.model.raw for spec in specs if router is None):  # before the folder is claimed
        check_key(raw, api_base=base_url, client=client)
    done = {r.run_id: r for r in load_runs(folder)} if resume and (folder / "runs").is_dir() else {}
    from .prompt_sets import check_same_prompt_sets

    check_same_prompt_sets(specs, done, folder)
    todo = [spec for spec in specs if spec.run_id not in done or done[spec.run_id].status == "cancelled"]
    judging = None
    if judge:
        from .judging import batch_rubric, make_judge

        judging = make_judge(judge, batch_rubric((spec.prompts for spec in specs), rubric), api_base=judge_api_base,
                             structured=structured, rubric=rubric)
    elif rubric != "default":
        raise InputError("--rubric goes with --judge MODEL")
    context = RunContext(out=folder, clients=client_pool(api_base=base_url, router_file=router, seed=seed,
                                                         structured=structured, temperature=temperature),
                         judge=judging)
    claim(folder, "--resume" if resume else "--out", {"maic": __version__, "scenarios": ", ".join(map(str, paths))})
    gc.freeze()  # the heap so far (litellm's is large) need not be rescanned by every collection
    if done:
        typer.echo(f"Resuming {folder}: {len(specs) - len(todo)} runs already done, {len(todo)} to go", err=True)
    results, interrupted = asyncio.run(_run_with_progress(todo, context, concurrency, console))
    wanted = {spec.run_id for spec in specs}
    kept = {r.run_id: r for r in done.values() if r.run_id in wanted}
    if judging is not None and kept and not interrupted:  # --resume --judge: the runs done before, too
        from .judging import judge_folder

        asyncio.run(judge_folder(judging, folder, judging.to_judge(list(kept.values())), concurrency=concurrency))
    kept.update({r.run_id: r for r in results})
    if judging is not None:
        from .judging import say_error_runs_not_judged

        say_error_runs_not_judged(list(kept.values()))
    meta = {"maic": __version__, "scenarios": ", ".join(map(str, paths)), "runs planned": len(specs),
            **({"turns": turns} if turns else {}), **({"learner model": learner_model} if learner_model else {}),
            "concurrency": concurrency, "shard": shard or "all", "interrupted": interrupted,
            **({"judge": judge} if judge else {})}
    report = save_reports(folder, list(kept.values()), meta)
    print_summary(report, stdout)
    batch_records(folder, kept, write=xapi, lrs=lrs)  # --xapi, --lrs
    typer.echo(f"Report: {folder / 'report.html'}, {folder / 'report.md'} and {folder / 'report.json'}", err=True)
    if interrupted:
        typer.echo(f"Interrupted: partial report written; continue with --resume {folder}", err=True)
        raise typer.Exit(EXIT_INTERRUPTED)
    raise typer.Exit(batch_exit_code(list(kept.values())))
