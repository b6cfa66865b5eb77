"""``maic chat``: its options; what a chat starts from is chat/setup.py, the class itself chat/run.py.

``maic chat --help`` must stay as quick as a bare Typer app's: the engine, the stores and
the model specs are imported inside the functions that use them, not here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..errors import InputError
from ..untrusted import one_line
from .errors import friendly
from .help_option import MAX_TURNS_HELP, MODEL_HELP, TEMPERATURE_HELP


@friendly
def chat(
    model: str = typer.Option(None, "--model", "-m", help=MODEL_HELP),
    api_base: str = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server."),
    agents: str = typer.Option(None, "--agents", help="Comma-separated agent ids for the class."),
    agents_dir: list[Path] = typer.Option(None, "--agents-dir", help="A folder of persona files. Repeatable."),
    session_file: Path = typer.Option(None, "--session", "-s", help="Session file: resumed if it exists, "
                                      "else created."),
    resume_latest: bool = typer.Option(False, "--continue", "-c", help="Resume the most recent session."),
    topic: str = typer.Option(None, "--topic", help="Discussion mode: the topic the class discusses."),
    initiator: str = typer.Option(None, "--initiator", help="Discussion mode: the agent who opens it."),
    name: str = typer.Option(None, "--name", help="Your name, as the class sees it."),
    bio: str = typer.Option(None, "--bio", help="A line about you (level, goals) for the class."),
    language: str = typer.Option(None, "--language", help="The language the class speaks."),
    max_turns: int = typer.Option(None, "--max-turns", min=1, max=50, help=MAX_TURNS_HELP),
    temperature: float = typer.Option(None, "--temperature", min=0, max=2, help=TEMPERATURE_HELP),
    structured: str = typer.Option(None, "--structured", help="Constrain replies to their JSON schema: "
                                   "auto (where litellm reports support), off, json_schema (OpenAI form) or "
                                   "json_object (llama.cpp server form)."),
    small: bool = typer.Option(False, "--small", help="The model is small: give it the compact prompts and, in a "
                               "lesson, let it say only what the lesson says (the built-in offline model always "
                               "is; config.yaml: small: true, or MAIC_SMALL=1)."),
    plain: bool = typer.Option(False, "--plain", help="Line-oriented output even on a terminal."),
    transcript: Path = typer.Option(None, "--transcript", help="Record the class to this JSONL file "
                                    "(default: $MAIC_HOME/transcripts/<session>.jsonl)."),
    prompts: Path = typer.Option(None, "--prompts", help="A folder of prompt templates overriding the "
                                 "built-in ones (default: $MAIC_HOME/prompts, if it exists)."),
    director: str = typer.Option(None, "--director", help="Who picks the speakers: llm, rules, hybrid or "
                                 "module:function (your Python hook). Default: rules for the offline model, else llm."),
    lesson: str = typer.Option(None, "--lesson", help="Play a lesson, by name (maic lesson list: photosynthesis, "
                               "…) or file: slides lectured, discussions, a quiz. Enter goes on; type to ask; "
                               "/ask ID question; /outline, /next, /prev, /slide N."),
    pace: float = typer.Option(None, "--pace", min=0, max=5, help="Seconds per word of a scripted lecture on a "
                               "terminal (default 0.12; 0: at once). Pipes and --plain: at once unless given."),
    no_memory: bool = typer.Option(False, "--no-memory", help="Neither use nor update the learner's memory "
                                   "($MAIC_HOME/learners; kept for a learner with a --name)."),
    lrs: str = typer.Option(None, "--lrs", help="When the class ends, send its learning records (xAPI) to this "
                            "learning record store; credentials from MAIC_LRS_TOKEN, or MAIC_LRS_USER and "
                            "MAIC_LRS_PASSWORD."),
    watch: str = typer.Option(None, "--watch", help="Watch a simulated learner (a learner file, or a built-in "
                              "one: fraction_mixup, dozen_student, quiet_learner) take your seat, live."),
    learner_model: str = typer.Option(None, "--learner-model", help="With --watch: the learner's model "
                                      "(default: the class's)."),
    style: str = typer.Option(None, "--style", help="A built-in teaching style (direct, socratic, "
                              "worked_example): a prompt set by name, instead of --prompts."),
    voice: str = typer.Option(None, "--voice", help="The class aloud, each agent in its own voice: local (offline), "
                              "espeak, openai-compatible (with --voice-api-base), a provider's speech model "
                              "(openai/tts-1, …) or off (the default; also MAIC_VOICE, config.yaml's voice:)."),
    voice_api_base: str = typer.Option(None, "--voice-api-base", help="Base URL of an OpenAI-compatible speech "
                                       "server (its /v1) for --voice openai-compatible."),
    server: str = typer.Option(None, "--server", help="Play the class's turns on a maic serve instance at this URL "
                               "(MAIC_SERVER_TOKEN: its token); its model answers, the session stays here."),
) -> None:
    """Hold a class: you ask, the agents answer, the whiteboard fills up."""
    import asyncio  # not at the top: ~30 ms that --help does not need

    from ..chat.notices import model_notice
    from ..chat.setup import (
        check_resumed,
        choose_director,
        keep_or_replace_lesson,
        load_lesson_play,
        new_session,
        open_memory,
        resolve_model,
        session_path_for,
        warm_up_litellm,
        watched_learner,
    )
    from ..store.config import load_settings
    from ..store.prompts import load_prompt_set
    from ..store.session import SessionLock, load_session

    if initiator is not None and not topic:
        raise InputError("--initiator opens a discussion: use it with --topic")
    if lesson is not None and topic:
        raise InputError("--lesson and --topic: a lesson brings its own discussions; use one or the other")
    play = load_lesson_play(lesson) if lesson is not None else None  # a bad file stops here: one line, exit 2
    from .xapi_send import check_lrs, send_transcript

    check_lrs(lrs)

    watched = watched_learner(watch, learner_model, lesson is not None)
    if style is not None:
        from ..store.styles import style_folder

        if prompts is not None:
            raise InputError("--style names a built-in prompt set and --prompts a folder: use one")
        prompts = style_folder(style)
    prompt_set = load_prompt_set(prompts)  # a broken template stops here, before anything runs
    settings = load_settings({
        "model": model, "api_base": api_base, "agents_dir": agents_dir or None,
        "agents": [a.strip() for a in agents.split(",") if a.strip()] if agents else None,
        "name": name or (watched[0].name if watched else None),
        "bio": bio or (watched[0].user_profile().bio if watched else None),
        "language": language, "max_turns": max_turns, "temperature": temperature,
        "structured": structured, "voice_api_base": voice_api_base, "small": small or None,
    })
    speech = None
    if (voice or settings.voice or "off").strip().lower() not in ("off", "none"):  # off imports nothing of speech
        from ..chat.setup import voice_engine

        speech = voice_engine(voice, settings)  # parsed once; an engine that cannot speak here: one line, exit 2
    if play is not None:  # the lesson's class and language, unless the user chose them
        settings = settings.model_copy(update={"agents": settings.agents or play.lesson.agents,
                                               "language": settings.language or play.lesson.language})
    path = session_path_for(session_file, resume_latest)
    from ..llm.keys import check_key

    turns = None
    if server is not None:
        from ..serve.client import turns_from_flag

        turns = turns_from_flag(server)  # a bad address: one line, exit 2, before any file is written
        if turns is not None and model is None:  # the server's model names the class (and its default director)
            from .server_model import client_model

            settings = settings.model_copy(update={"model": client_model(turns.describe()["model"])})

    spec = None
    if not path.exists():  # a new class: a hosted model's missing key is said before any file is written
        spec = resolve_model(settings, None)
        if turns is None:  # a server holds its own keys
            check_key(spec, api_base=settings.api_base)
    new_class_options = {"--agents": agents, "--agents-dir": agents_dir, "--topic": topic, "--initiator": initiator,
                         "--name": name, "--bio": bio, "--language": language}
    with SessionLock(path):
        resumed = load_session(path) if path.exists() else None
        if resumed is not None or spec is None:  # the model a resumed session brings, parsed once
            spec = resolve_model(settings, resumed)
        if resumed is not None:
            check_resumed(path, settings, resumed, spec, new_class_options)
        session = resumed or new_session(settings, topic, initiator)
        if play is not None:
            keep_or_replace_lesson(session, play)
        session.model = spec.raw
        if settings.api_base:
            session.api_base = settings.api_base
        if resumed is not None and turns is None:
            check_key(spec, api_base=session.api_base)
        if resumed is not None and settings.max_turns:
            session.config.max_turns = settings.max_turns
        policy = choose_director(session, director)
        if turns is not None and director is None and model is None and session.config.director is None:
            turns.server_picks_director = True  # nothing here named a model or a director: the server's decide
        # a watched simulated learner is not a person: the class neither reads nor writes anyone's memory
        memory = None if no_memory or watched else open_memory(session, settings.name)  # a broken profile stops here
        if memory is not None and memory.profile.sessions:
            typer.echo(f"maic: note: the class remembers {one_line(memory.name)} from {memory.profile.sessions} "
                       "earlier sessions (maic learner show; --no-memory to leave it out)", err=True)
        speaking = None
        if speech is not None:
            from ..chat.setup import cast_voices

            speaking = (speech, cast_voices(speech, session))  # a persona's unknown voice id: one line, exit 2
        if turns is None:
            warm_up_litellm(spec)
        from ..chat.run import run_chat  # heavy (prompt-toolkit, views): imported while litellm warms up

        interactive = sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty() and not plain
        code = asyncio.run(run_chat(session, path, spec=spec, interactive=interactive,
                                    temperature=settings.temperature,
                                    notice=model_notice(spec, lesson=session.lesson is not None) if turns is None
                                    else f"class turns on {turns.where}",
                                    resumed=resumed is not None,
                                    structured=settings.structured or "auto", transcript=transcript,
                                    prompts=prompt_set, director=policy, pace=pace, memory=memory, watch=watched,
                                    speech=speaking, turns=turns))
    if lrs is not None and session.transcript:
        send_transcript(Path(session.transcript), lrs)  # the session is saved: a refusal is one line, exit 1
    if code:
        raise typer.Exit(code)
