"""``maic prompts show director|agent ID``: the exact messages the next call would send;
``maic prompts list``: the templates of a prompt set, and which a folder overrides.

The messages come from the engine's own builders (``engine/preview.py``), for a
session's current state (``--session FILE``) or a fresh class of the default personas
with an example learner question, rendered with the prompt set a class would use
(``--prompts DIR``, else ``$MAIC_HOME/prompts``, else the built-in one).  Session files,
personas and templates may come from anyone: what is printed is cleaned of terminal
control sequences (``--json`` escapes every non-ASCII character, controls included).

``maic prompts --help`` must stay as quick as a bare Typer app's: the engine, the
stores and the model specs are imported inside the command, not here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import InputError
from .errors import friendly
from .help_option import help_option

if TYPE_CHECKING:
    from ..engine.models import TurnRequest
    from ..llm.spec import ModelSpec
    from ..store.session import Session

EXAMPLE_QUESTION = "Why is the sky blue?"

app = typer.Typer(help="See the prompts a class sends.", no_args_is_help=True)


@app.callback()
def _prompts(show_help: bool = help_option()) -> None:
    """See the prompts a class sends."""


def fresh_class(agents: str | None, agents_dir: list[Path], topic: str | None) -> Session:
    """A new class as ``maic chat`` would make it (default personas unless ``agents`` names some)."""
    from ..chat.setup import new_session
    from ..store.config import load_settings

    settings = load_settings({"agents_dir": agents_dir or None,
                              "agents": [a.strip() for a in agents.split(",") if a.strip()] if agents else None})
    return new_session(settings, topic, None)


def next_request(session: Session, spec: ModelSpec, ask: str | None) -> TurnRequest:
    """The turn request of the class's next call: its state, after ``ask`` if given, for the model ``spec``."""
    from ..engine.models import RoundContext, TurnConfig, TurnRequest
    from ..lessons.context import lesson_context

    classroom = session.classroom.model_copy(deep=True)
    if ask is not None:
        classroom.add_learner_message(ask)
    lesson = lesson_context(session.lesson) if session.lesson is not None else None  # as the lesson player sets it
    config = TurnConfig.for_round(session.config, RoundContext(lesson=lesson,
                                                               compact_prompts=spec.compact_prompts))
    return TurnRequest(messages=classroom.messages, store_state=classroom.store, config=config,
                       director_state=classroom.director_state, user_profile=session.profile)


def as_text(messages: list[dict[str, str]]) -> str:
    """Each message under a role header, cleaned of terminal control sequences."""
    from ..untrusted import clean

    return "\n\n".join(f"=== {clean(m['role'])} ===\n{clean(m['content'])}" for m in messages) + "\n"


@app.command("show")
@friendly
def show(
    who: str = typer.Argument(..., help="director, or agent (then the agent's id)."),
    agent_id: str = typer.Argument(None, help="The agent's id (for `agent`)."),
    session_file: Path = typer.Option(None, "--session", "-s", help="A session file: its class and its "
                                      "current state (default: a fresh class of the default personas)."),
    prompts: Path = typer.Option(None, "--prompts", help="A folder of prompt templates overriding the "
                                 "built-in ones (default: $MAIC_HOME/prompts, if it exists)."),
    ask: str = typer.Option(None, "--ask", help="A learner message added first (default for a fresh Q&A "
                            f"class: {EXAMPLE_QUESTION!r}; a discussion or a session as it is)."),
    model: str = typer.Option(None, "--model", "-m", help="The model the call is for: local, demo or a litellm "
                              "model (the small offline model gets the compact prompts). Default: the session's, "
                              "then as for maic chat."),
    agents: str = typer.Option(None, "--agents", help="A fresh class: comma-separated agent ids."),
    agents_dir: list[Path] = typer.Option(None, "--agents-dir", help="A folder of persona files. Repeatable."),
    topic: str = typer.Option(None, "--topic", help="A fresh class in discussion mode, on this topic."),
    as_json: bool = typer.Option(False, "--json", help="The raw messages list, as JSON."),
    name: str = typer.Option(None, "--name", help="The learner (default: the session's, then config.yaml's): "
                             "their memory is shown as the class would get it."),
    no_memory: bool = typer.Option(False, "--no-memory", help="Without the learner's memory."),
) -> None:
    """Print the exact messages the director's or an agent's next call would send."""
    from ..chat.setup import chosen_model
    from ..engine.preview import agent_call_messages, director_call_messages
    from ..llm.spec import ModelSpec
    from ..store.config import load_settings
    from ..store.prompts import load_prompt_set
    from ..store.session import load_session
    from ..untrusted import clean

    if who not in ("director", "agent"):
        raise InputError(f"{who}: show `director` or `agent ID`")
    if who == "agent" and not agent_id:
        raise InputError("agent: name the agent, e.g. `maic prompts show agent teacher`")
    if who == "director" and agent_id:
        raise InputError(f"director {agent_id}: the director takes no id")
    prompt_set = load_prompt_set(prompts)
    session = load_session(session_file) if session_file is not None else fresh_class(agents, agents_dir, topic)
    if ask is None and session_file is None and not topic:  # a discussion opens without the learner
        ask = EXAMPLE_QUESTION
    settings = load_settings({"name": name})
    model = model or chosen_model(settings, session)
    if name and session_file is None:
        session.profile.nickname = name
    if not no_memory:
        from ..chat.setup import open_memory

        open_memory(session, settings.name)  # the learner's memory, as a chat would load it
    spec = ModelSpec.parse(model)  # once, as a chat does
    request = next_request(session, spec, ask)
    class_agents = {a.id: a for a in session.agents}
    if who == "director":
        messages = director_call_messages(request, class_agents, prompts=prompt_set)
    else:
        agent = class_agents.get(agent_id)
        if agent is None:
            raise InputError(f"agent {clean(agent_id)}: not in this class (its agents: "
                             f"{', '.join(clean(a) for a in class_agents)})")
        messages = agent_call_messages(request, agent, prompts=prompt_set)
    variant = " (the compact prompts for small models)" if request.config.compact_prompts else ""
    typer.echo(f"maic: note: the {who}'s next call for {clean(model)}{variant}, prompt set "
               f"{clean(prompt_set.name)}", err=True)
    if who == "director":
        from ..engine.policies import choose_policy

        policy = choose_policy(None, session.config.director, spec.compact_prompts).name
        if policy != "llm":
            typer.echo(f"maic: note: with the {clean(policy)} director the model is asked only where the rules "
                       "are not sure (rules: never); this is the call it would make then", err=True)
    typer.echo(json.dumps(messages, indent=1) + "\n" if as_json else as_text(messages), nl=False)  # JSON: \u-escaped


@app.command("list")
@friendly
def list_templates(
    prompts: Path = typer.Option(None, "--prompts", help="A folder of prompt templates overriding the "
                                 "built-in ones (default: $MAIC_HOME/prompts, if it exists)."),
) -> None:
    """List the templates a class renders; an override names the file it comes from."""
    from ..store.prompts import load_prompt_set
    from ..untrusted import clean

    prompt_set = load_prompt_set(prompts)
    overridden = set(prompt_set.overridden)
    for name in prompt_set.names:
        origin = prompt_set.source(name).origin if name in overridden else "built-in"
        typer.echo(f"{clean(name)}\t{clean(origin)}")
