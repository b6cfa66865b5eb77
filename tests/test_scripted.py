"""The scripted model: file format, recorded calls, faults that match the litellm client's."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from maic_cli.errors import InputError
from maic_cli.llm.factory import make_llm
from maic_cli.llm.port import LLMError, LLMRequest
from maic_cli.llm.scripted import ScriptedLLM, ScriptedReply
from maic_cli.llm.spec import ModelSpec


def collect(llm: ScriptedLLM, purpose: str = "agent") -> str:
    async def go() -> str:
        parts = []
        async for piece in llm.stream(LLMRequest(messages=[{"role": "user", "content": "hi"}],
                                                 purpose=purpose)):  # type: ignore[arg-type]
            parts.append(piece.text)
        return "".join(parts)

    return asyncio.run(go())


def test_file_with_strings_and_mappings(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("- first reply\n- reply: second\n  chunk_size: 2\n", encoding="utf-8")
    llm = make_llm(ModelSpec.parse(f"scripted:{script}"))
    assert isinstance(llm, ScriptedLLM)
    assert collect(llm, "director") == "first reply"
    assert collect(llm) == "second"
    assert [c.purpose for c in llm.calls] == ["director", "agent"]
    with pytest.raises(LLMError, match="all 2 scripted replies are used up"):
        collect(llm)


def test_json_file_works_too(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text('["a", {"reply": "b"}]', encoding="utf-8")
    llm = make_llm(ModelSpec.parse(f"scripted:{script}"))
    assert collect(llm) + collect(llm) == "ab"  # type: ignore[arg-type]


def test_bad_script_names_file_line_and_field(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("- ok\n- reply: x\n  error: meteor\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        make_llm(ModelSpec.parse(f"scripted:{script}"))
    assert str(caught.value).startswith(f"{script}:3: 1.error")


@pytest.mark.parametrize(("fault", "words"), [
    ("rate_limit", "rate limited (HTTP 429)"), ("server_error", "server error (HTTP 500)"),
    ("auth", "authentication failed (HTTP 401)"), ("timeout", "request timed out"),
])
def test_scripted_faults_use_the_same_kinds_and_words(fault: str, words: str) -> None:
    llm = ScriptedLLM([ScriptedReply(error=fault)])  # type: ignore[arg-type]
    with pytest.raises(LLMError) as caught:
        collect(llm)
    assert caught.value.kind == fault
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_disconnect_after_streams_that_much_then_fails() -> None:
    llm = ScriptedLLM([ScriptedReply(reply="abcdefghij", disconnect_after=6, chunk_size=4)])
    seen: list[str] = []

    async def go() -> None:
        async for piece in llm.stream(LLMRequest(messages=[{"role": "user", "content": "x"}])):
            seen.append(piece.text)

    with pytest.raises(LLMError) as caught:
        asyncio.run(go())
    assert "".join(seen) == "abcdef"
    assert caught.value.kind == "stream_dropped"
