"""``maic run SCENARIO…``: batch classes with expectations, metrics and reports.

Scenarios run with every ``--model`` and every ``--prompts`` set (compared side by side
in the report), each ``--repeat`` times.  ``--judge MODEL`` scores every run's turns
after its class (evaluation/judging.py).

``maic run --help`` must stay as quick as a bare Typer app's: the scenario and report
stores, the engine, the LLM clients and Rich's live display are imported inside the
functions that use them, not here.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from .. import __version__
from ..errors import InputError
from ..untrusted import clean
from .errors import EXIT_INTERRUPTED, check_choice, friendly
from .help_option import MAX_TURNS_HELP, MODEL_DEFAULT, MODEL_KINDS, TEMPERATURE_HELP
from .xapi_send import LRS_HELP, batch_records, check_lrs

if TYPE_CHECKING:
    from rich.console import Console

    from ..evaluation.batch import RunContext, RunSpec
    from ..evaluation.batch_voice import BatchVoice
    from ..evaluation.run_results import RunResult
    from ..report.batch_report import MetaValue


async def _run_with_progress(specs: list[RunSpec], context: RunContext, concurrency: int,
                             console: Console | None) -> tuple[list[RunResult], bool]:
    from rich.console import Group
    from rich.live import Live
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from ..evaluation.batch import run_all

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


def _batch_voice(voice: str, api_base: str | None) -> BatchVoice:
    """--voice: the engine each run is voiced with (refused before the batch if it cannot speak here)."""
    from ..evaluation.batch_voice import BatchVoice
    from ..speech.factory import make_engine
    from ..store.paths import speech_cache_dir
    from .media_export import export_spec, speakable

    if voice.strip().lower() in ("off", "none"):
        raise InputError(f"--voice {clean(voice)[:40]}: voicing a batch needs an engine (local, espeak or a "
                         "provider's)")
    spec = export_spec(voice, api_base)
    engine = make_engine(spec)
    assert engine is not None  # off is refused above
    return BatchVoice(engine=engine, name=spec.name, speakable=speakable(), cache=speech_cache_dir())


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
    voice: str = typer.Option(None, "--voice", help="Also voice each run: OUT/audio/RUN.wav and "
                              "OUT/captions/RUN.vtt, in this engine (local, espeak, openai-compatible or a "
                              "provider's speech model such as openai/tts-1); synthesis is counted and priced "
                              "apart."),
    voice_api_base: str = typer.Option(None, "--voice-api-base", help="Base URL of an OpenAI-compatible speech "
                                       "server (with --voice openai-compatible)."),
    server: str = typer.Option(None, "--server", help="Play the classes' turns on a maic serve instance (or a load "
                               "balancer in front of several) at this URL, with MAIC_SERVER_TOKEN; its model "
                               "answers (--model still names the runs)."),
) -> None:
    """Run scenarios in batch; exit 1 if an expectation fails, 2 on invalid input."""
    import asyncio  # not at the top: ~30 ms that --help does not need

    from rich.console import Console

    from ..evaluation.batch import RunContext
    from ..evaluation.batch_folder import check_resumable, claim
    from ..evaluation.run_results import load_runs
    from ..llm.openai_compat import STRUCTURED_MODES
    from ..report.batch_summary import batch_exit_code, merge_batches, print_summary, save_reports
    from .batch_plan import client_pool, expand, take_shard
    from .extras import say_if_no_charts

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
        say_if_no_charts(out)
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

    for model_spec in dict.fromkeys(spec.model for spec in specs if router is None and server is None):
        check_key(model_spec, api_base=base_url)  # before the folder is claimed (a server holds its own keys)
    from ..serve.client import turns_from_flag

    remote = turns_from_flag(server)
    done = {r.run_id: r for r in load_runs(folder)} if resume and (folder / "runs").is_dir() else {}
    from ..evaluation.prompt_sets import check_same_prompt_sets

    check_same_prompt_sets(specs, done, folder)
    todo = [spec for spec in specs if spec.run_id not in done or done[spec.run_id].status == "cancelled"]
    judging = None
    if judge:
        from ..evaluation.judging import batch_rubric, make_judge

        judging = make_judge(judge, batch_rubric((spec.prompts for spec in specs), rubric), api_base=judge_api_base,
                             structured=structured, rubric=rubric)
    elif rubric != "default":
        raise InputError("--rubric goes with --judge MODEL")
    context = RunContext(out=folder, clients=client_pool(api_base=base_url, router_file=router, seed=seed,
                                                         structured=structured, temperature=temperature),
                         judge=judging, voice=_batch_voice(voice, voice_api_base) if voice else None, turns=remote)
    claim(folder, "--resume" if resume else "--out", {"maic": __version__, "scenarios": ", ".join(map(str, paths))})
    no_charts = say_if_no_charts(folder)  # before the runs, which write every file, report.html without charts
    gc.freeze()  # the heap so far (litellm's is large) need not be rescanned by every collection
    if done:
        typer.echo(f"Resuming {folder}: {len(specs) - len(todo)} runs already done, {len(todo)} to go", err=True)
    from ..report.chart_worker import prepare

    prepare(len(todo))  # the report's charts get ready (another process, or a thread) while the runs play
    results, interrupted = asyncio.run(_run_with_progress(todo, context, concurrency, console))
    wanted = {spec.run_id for spec in specs}
    kept = {r.run_id: r for r in done.values() if r.run_id in wanted}
    if judging is not None and kept and not interrupted:  # --resume --judge: the runs done before, too
        from ..evaluation.judging import judge_folder

        asyncio.run(judge_folder(judging, folder, judging.to_judge(list(kept.values())), concurrency=concurrency))
    kept.update({r.run_id: r for r in results})
    if judging is not None:
        from ..evaluation.judging import say_error_runs_not_judged

        say_error_runs_not_judged(list(kept.values()))
    meta: dict[str, MetaValue] = {
        "maic": __version__, "scenarios": ", ".join(map(str, paths)), "runs planned": len(specs),
        **({"turns": turns} if turns else {}), **({"learner model": learner_model} if learner_model else {}),
        "concurrency": concurrency, "shard": shard or "all", "interrupted": interrupted,
        **({"judge": judge} if judge else {})}
    report = save_reports(folder, list(kept.values()), meta)
    say_if_no_charts(folder, said=no_charts)
    print_summary(report, stdout)
    if report.speech is not None:
        from ..report.report_voice import markdown as voice_lines

        typer.echo(voice_lines(report)[2], err=True)
    batch_records(folder, kept, write=xapi, lrs=lrs)  # --xapi, --lrs
    typer.echo(f"Report: {folder / 'report.html'}, {folder / 'report.md'} and {folder / 'report.json'}", err=True)
    if interrupted:
        typer.echo(f"Interrupted: partial report written; continue with --resume {folder}", err=True)
        raise typer.Exit(EXIT_INTERRUPTED)
    raise typer.Exit(batch_exit_code(list(kept.values())))
