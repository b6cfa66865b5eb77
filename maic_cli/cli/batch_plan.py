"""What a ``maic run`` batch plays: scenarios × models × prompt sets × director policies × repeats
expanded into run specs, a shard of them, and the clients that serve them.

Imported by ``maic run`` when it runs (not by ``--help``), and by the tests and benchmarks that
build batches without the command line.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..untrusted import clean

if TYPE_CHECKING:
    from ..engine.policies import DirectorPolicy
    from ..evaluation.batch import RunSpec
    from ..llm.pool import ClientPool
    from ..llm.port import LLMClient
    from ..llm.spec import ModelSpec


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
    (evaluation/batch_learner.py)."""
    from ..chat.setup import chosen_model
    from ..engine.policies import policy_from_flag
    from ..evaluation.batch import RunSpec
    from ..evaluation.batch_learner import learner_setup, load_sources
    from ..evaluation.prompt_sets import DefaultPromptSets, compared_prompt_sets
    from ..evaluation.scenarios import (
        prompts_folder,
        resolve_class,
        scenario_files,
        scenario_lesson,
        turn_config,
    )
    from ..llm.spec import ModelSpec
    from ..store.config import load_settings
    from ..store.personas import load_registry
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
        for model in models or [scenario.model or chosen_model(settings, None)]:
            model_spec = ModelSpec.parse(model, client=client, router=router, api_base=api_base)  # the one parse
            if not models and scenario.model:
                say_scenario_model(path, model_spec, api_base or settings.api_base)
            learner = learner_setup(scenario, path, task, model_spec, learner_model, turns, client=client,
                                    router=router, api_base=api_base)
            for label, prompt_set in sets:
                for k in range(1, repeat + 1):
                    specs.extend(RunSpec(scenario, path, agents, config.model_copy(deep=True), model_spec, k,
                                         prompts=prompt_set, prompts_label=label, label_in_id=len(compared) > 1,
                                         director=policy, director_in_id=len(policies) > 1, lesson=lesson,
                                         learner=learner)
                                 for policy in policies)
    from ..evaluation.run_results import plain_run_id

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
            return make_llm(spec)
        return make_llm(spec, api_base=api_base, extra=extra, structured=structured, temperature=temperature,
                        rate_limit_retries=10)  # rate limits slow a batch down, not fail it

    return ClientPool(build)
