"""``maic voices list | say``: the voice engines, which agent sounds how, and one sentence to try a voice.

``maic voices --help`` stays light: the speech room, the persona store and Rich are imported by the
commands that use them.
"""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import InputError
from ..untrusted import clean, one_line
from .errors import friendly
from .help_option import help_option
from .voice_setup import VoiceApiBaseOption, VoiceOption

app = typer.Typer(help="The class's voices: list them, try one.", no_args_is_help=True)

AgentsDir = typer.Option(None, "--agents-dir", help="A folder of persona YAML files (adds to or overrides the "
                         "built-in class by id). Repeatable.")


@app.callback()
def _voices(show_help: bool = help_option()) -> None:
    """The class's voices: list them, try one."""


@app.command("list")
@friendly
def list_voices(voice: str = VoiceOption, voice_api_base: str = VoiceApiBaseOption,
                agents_dir: list[Path] = AgentsDir) -> None:
    """The engine's voices, and which agent of the class gets which (voice off: the offline voice's)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ..speech.cast import cast
    from ..speech.factory import check_ready, make_engine
    from ..store.personas import load_registry
    from .voice_setup import offline_fallback, origin, settings_for, the_class, voice_spec

    settings = settings_for(voice, voice_api_base, list(agents_dir or []))
    chosen = voice_spec(settings, voice_flag=voice)
    spec = offline_fallback(chosen)
    console = Console()
    if not chosen.enabled:
        console.print(Text(f"The voice is off (--voice, MAIC_VOICE or voice: in config.yaml); "
                           f"showing --voice {spec.raw}.", style="dim"))
    if spec.kind == "espeak":
        check_ready(spec)
    engine = make_engine(spec)
    assert engine is not None  # offline_fallback never leaves it off
    names = engine.voices()
    shown = ", ".join(names[:60]) + (f" … ({len(names)} in all)" if len(names) > 60 else "")
    open_list = " (and any voice id the server knows)" if getattr(engine, "accepts_any_voice", False) else ""
    console.print(Text(f"{engine.name} voices: {clean(shown)}{open_list}"))
    registry = load_registry(settings.agents_dir)
    agents = the_class(registry, settings)
    voices = cast(agents, engine)
    table = Table(box=None, pad_edge=False)
    for column in ("agent", "role", "voice", "speed", "pitch", "from"):
        table.add_column(column)
    for agent in agents:
        said = voices[agent.id]
        table.add_row(Text(clean(agent.id)), Text(agent.role), Text(clean(said.id)), f"{said.speed:.2f}",
                      f"{said.pitch:+.1f}", Text(origin(agent)))
    console.print(table)
    console.print(Text("derived: from the agent's id and role (a persona's voice: chooses id, speed, pitch)",
                       style="dim"))


@app.command("say")
@friendly
def say(agent_id: str = typer.Argument(..., help="The persona's id (maic agents list)."),
        text: str = typer.Argument(..., help="What to say."),
        voice: str = VoiceOption, voice_api_base: str = VoiceApiBaseOption,
        out: Path = typer.Option(None, "--out", "-o", help="Write a WAV file here instead of playing it."),
        agents_dir: list[Path] = AgentsDir) -> None:
    """Say TEXT in the agent's voice: played through a player on PATH, or written to --out as WAV."""
    from ..speech.audio import wav_bytes
    from ..speech.cast import cast
    from ..speech.factory import check_ready, open_engine
    from ..speech.say import say_all
    from ..speech.system_player import NAMES, find_player
    from ..store.paths import speech_cache_dir
    from ..store.personas import load_registry
    from .voice_setup import describe, offline_fallback, settings_for, the_class, voice_spec

    settings = settings_for(voice, voice_api_base, list(agents_dir or []))
    spec = offline_fallback(voice_spec(settings, voice_flag=voice))
    check_ready(spec)
    registry = load_registry(settings.agents_dir)
    agents = the_class(registry, settings, agent_id)
    if out is None and find_player() is None:
        raise InputError(f"no audio player on PATH ({NAMES}): use --out FILE.wav")
    engine = open_engine(spec, speech_cache_dir())
    assert engine is not None
    chosen = cast(agents, engine)[agent_id]
    audio = say_all(engine, text, chosen)
    if audio is None:
        raise InputError("nothing to say: the text has no words once markup and symbols are left out")
    problem = getattr(getattr(engine, "cache", None), "problem", None)
    if problem:
        typer.echo(f"maic: warning: {one_line(problem)}", err=True)
    said = f"{clean(agent_id)} in {engine.name} ({clean(describe(chosen))}), {audio.seconds:.1f} s"
    if out is not None:
        from ..store.paths import write_atomic

        try:
            write_atomic(out, wav_bytes(audio))
        except OSError as exc:
            raise InputError(f"--out {one_line(str(out))}: cannot write ({exc.strerror or exc})") from None
        typer.echo(f"wrote {one_line(str(out))}: {said}")
        return
    _play(audio, said)


def _play(audio: object, said: str) -> None:
    import tempfile

    from ..speech.audio import wav_bytes
    from ..speech.port import Audio
    from ..speech.system_player import play_file

    assert isinstance(audio, Audio)
    with tempfile.TemporaryDirectory(prefix="maic-voice-") as folder:
        path = Path(folder) / "say.wav"
        path.write_bytes(wav_bytes(audio))
        player = play_file(path, audio.seconds)
    typer.echo(f"said by {said} (through {player})")
