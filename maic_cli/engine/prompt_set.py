"""A prompt set: template name → source, rendered by Jinja2 in its sandbox.

Templates are shared data, not code: they are rendered by an
``ImmutableSandboxedEnvironment`` (no attribute tricks, no mutating what they are
given) whose loader only knows the templates of this set, so ``include`` cannot
reach the file system; they get plain data only (dicts, lists, strings, numbers),
and ``StrictUndefined`` turns a misspelt variable into an error.  What the sandbox still lets a
template compute in one C call (a huge power, a width of a billion, a doubling concatenation) is
measured and refused before it runs (engine/template_bounds.py), so every render is a series of short
steps that the step budget bounds and Ctrl-C interrupts.  Every problem —
a syntax error, an unknown variable, a missing snippet — is a :class:`PromptError`
reading ``path:line: problem``, never a traceback.

The built-in templates come from the ``maic_cli.prompts`` data package (read with
importlib.resources: they are part of the program, like this module); a user's
overrides are read from files by ``store/prompts.py`` — the engine never opens a
user's file.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import FrameType, TracebackType
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import _PassArg

from ..errors import InputError
from ..untrusted import one_line
from .plain_data import check_plain, plain_at_a_glance, render_key
from .template_bounds import check_binop, check_brace_format, check_concat, check_filter, check_method

BUILTIN = "built-in"
MAX_RENDERED_CHARS = 200_000  # a prompt is a few thousand characters; a runaway template stops here
MAX_RANGE = 1_000  # range() inside a template (Jinja2's sandbox allows 100,000)
MAX_STEPS = 1_000_000  # Python lines a user's template may run per render (a built-in one needs a few thousand)
MAX_RENDER_SECONDS = 5.0  # of a user's template: a million steps on long strings would otherwise take minutes
CLOCK_EVERY = 1_024  # steps between two looks at the clock
MAX_NUMBER_ARGUMENT = 100_000  # a filter's numeric argument (center(1e9) would allocate before any check)
RENDER_CACHE_ENTRIES = 256  # built-in renders remembered (a batch repeats a class: its first prompts repeat)
_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


class PromptError(InputError):
    """A prompt template that cannot be used: ``path:line: problem``, one line.

    The message can quote a user's file (its name, a piece of the template), so control
    characters are replaced: it is printed to a terminal as it is."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


@dataclass(frozen=True)
class TemplateSource:
    text: str
    origin: str  # what an error names: a file path, or ``maic_cli/prompts/NAME`` for a built-in


class PromptSet:
    """Named templates (``agent/system.j2``, ``snippets/speech.md`` …) and their renderer."""

    def __init__(self, sources: Mapping[str, TemplateSource], name: str = BUILTIN,
                 overridden: tuple[str, ...] = (), *, trusted: bool = False) -> None:
        self.name = name
        self.overridden = overridden  # the names a user's folder replaced or added
        self._sources = dict(sources)
        # trusted: maic's own templates and nothing else (only :func:`_builtin` says so); they are part
        # of the program, so they render outside the sandbox: the same text, without its per-step checks.
        self._trusted = trusted and not overridden
        self._env: jinja2.Environment | None = None
        self._templates: dict[str, jinja2.Template] = {}
        # Built-in renders by (template, the data marshalled): a built-in template is a pure function of plain
        # data (no clock, no ``random`` filter in our templates), so the same data renders the same text.
        self._rendered: dict[tuple[str, bytes], str] = {}
        self._rendered_lock = threading.Lock()

    @classmethod
    def builtin(cls) -> PromptSet:
        return _builtin()

    def with_overrides(self, files: Mapping[str, TemplateSource], name: str) -> PromptSet:
        """This set with ``files`` replacing (or adding) templates of the same relative name."""
        return PromptSet({**self._sources, **files}, name, tuple(sorted(files)))

    @property
    def names(self) -> list[str]:
        return sorted(self._sources)

    def source(self, name: str) -> TemplateSource:
        return self._sources[name]

    # -- rendering ----------------------------------------------------------------------
    def _environment(self) -> jinja2.Environment:
        if self._env is None:
            def load(name: str) -> tuple[str, str, Any] | None:
                found = self._sources.get(name)
                return None if found is None else (found.text, found.origin, lambda: True)

            # The same options for both: a built-in template renders the same text either way.
            self._env = (_TrustedEnvironment if self._trusted else _BoundedEnvironment)(
                loader=jinja2.FunctionLoader(load), undefined=jinja2.StrictUndefined, autoescape=False,
                trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, auto_reload=False,
                optimized=False)  # no constant folding: ``{{ 10**4300 }}`` is checked like any render
        return self._env

    @property
    def sandboxed(self) -> bool:
        """Whether this set's templates render in the sandbox (any set but maic's own, unchanged)."""
        return not self._trusted

    def check(self) -> None:
        """Compile every template now, so a syntax error shows before a class starts."""
        for name in self.names:
            self._template(name)

    def _template(self, name: str) -> jinja2.Template:
        found = self._templates.get(name)
        if found is not None:
            return found
        try:
            found = self._templates[name] = self._environment().get_template(name)
            return found
        except jinja2.TemplateSyntaxError as exc:
            origin = exc.filename or self._origin(exc.name or name)
            raise PromptError(f"{origin}:{exc.lineno}: {exc.message}") from None
        except jinja2.TemplateNotFound:
            raise PromptError(f"{self.name} prompt set: no template {name!r}") from None
        except Exception as exc:  # noqa: BLE001 - whatever compiling a user's template raises is its fault
            raise PromptError(self._describe(exc, name)) from None

    def render(self, name: str, data: Mapping[str, Any]) -> str:
        """Render template ``name`` with ``data`` (plain data only); blank-line runs collapse to one.

        A built-in template's render is remembered for data built of exactly the plain types: their
        ``marshal`` form tells any two values apart (``1``, ``1.0`` and ``True``; a list and a tuple; the
        order of a dict's keys) and costs a quarter of their ``repr``.  The runs of a batch repeat a class,
        so their prompts repeat.  A remembered render's data was checked plain when it was first rendered,
        and ``marshal`` refuses every subclass and writes other types (bytes, sets) in forms plain data
        never has: data marshalled to the same bytes is plain too, and is not walked again."""
        key = render_key(name, data) if self._trusted else None
        if key is not None:
            found = self._rendered.get(key)
            if found is not None:
                return found
        if not plain_at_a_glance(data):
            check_plain(data, "data")
            key = None  # plain, but not exactly of the plain types (a str subclass): rendered, not remembered
        found = self._render(name, data)
        if key is not None:
            with self._rendered_lock:  # a render off the event loop (a thread) may store at the same time
                if len(self._rendered) >= RENDER_CACHE_ENTRIES:  # the oldest goes (dicts keep insertion order)
                    self._rendered.pop(next(iter(self._rendered)), None)
                self._rendered[key] = found
        return found

    def _render(self, name: str, data: Mapping[str, Any]) -> str:
        template = self._template(name)
        too_long = f"{self._origin(name)}: renders more than {MAX_RENDERED_CHARS:,} characters"
        try:
            if self._trusted:  # our own template: its size is its data's, measured once it is joined
                text = "".join(template.generate(dict(data)))
                if len(text) > MAX_RENDERED_CHARS:
                    raise PromptError(too_long)
                return _BLANK_RUNS.sub("\n\n", text).strip()
            pieces: list[str] = []
            size = 0
            with _StepBudget(MAX_STEPS if self.overridden else None):  # a user's template runs on a budget
                for piece in template.generate(dict(data)):
                    size += len(piece)
                    if size > MAX_RENDERED_CHARS:
                        raise PromptError(too_long)
                    pieces.append(piece)
        except PromptError:
            raise
        except Exception as exc:  # noqa: BLE001 - anything a template does wrong is the template's fault
            raise PromptError(self._describe(exc, name)) from None
        return _BLANK_RUNS.sub("\n\n", "".join(pieces)).strip()

    def _origin(self, name: str) -> str:
        found = self._sources.get(name)
        return found.origin if found is not None else name

    def _describe(self, exc: BaseException, name: str) -> str:
        origin, line = self._where(exc.__traceback__) or (self._origin(name), None)
        if isinstance(exc, jinja2.TemplateSyntaxError):  # an included template that does not compile
            origin, line = exc.filename or origin, exc.lineno
        problem = exc.message if isinstance(exc, jinja2.TemplateError) and exc.message else str(exc)
        if isinstance(exc, jinja2.TemplateNotFound):
            problem = f"no template {exc.name!r} in the {self.name} prompt set"
        problem = " ".join(problem.split()) or type(exc).__name__
        return f"{origin}:{line}: {problem}" if line else f"{origin}: {problem}"

    def _where(self, tb: TracebackType | None) -> tuple[str, int] | None:
        """The innermost template frame of a render error (Jinja2 rewrites frames to template lines)."""
        origins = {s.origin for s in self._sources.values()}
        found = None
        while tb is not None:
            filename = tb.tb_frame.f_code.co_filename
            if filename in origins:
                found = (filename, tb.tb_lineno)
            tb = tb.tb_next
        return found


class _TooExpensive(Exception):
    """A template ran out of its step budget (an endless or enormous loop)."""


class _StepBudget:
    """Count the Python lines a render runs (Jinja2 compiles a template to Python) and stop it at
    ``steps``, or once it has run :data:`MAX_RENDER_SECONDS`: loops nested over small ranges, or over
    a long string, end with an error instead of a hang, and a render never holds off a Ctrl-C for
    long (the one between its steps lands at once).  ``None``: no budget (the built-in templates,
    which are part of the program)."""

    def __init__(self, steps: int | None) -> None:
        self.left = steps
        self._previous: Any = None
        self._deadline = 0.0

    def _trace(self, frame: FrameType, event: str, arg: object) -> Callable[..., Any]:
        if event == "line" and self.left is not None:
            self.left -= 1
            if self.left < 0:
                raise _TooExpensive(f"the template runs more than {MAX_STEPS:,} steps (an endless loop?)")
            if not self.left % CLOCK_EVERY and time.monotonic() > self._deadline:
                # Each step is short (engine/template_bounds.py), but a million of them on long strings is not.
                raise _TooExpensive(f"the template takes more than {MAX_RENDER_SECONDS:g} s to render")
        return self._trace

    def __enter__(self) -> None:
        if self.left is not None:
            self._deadline = time.monotonic() + MAX_RENDER_SECONDS
            self._previous = sys.gettrace()
            sys.settrace(self._trace)

    def __exit__(self, *exc: object) -> None:
        if self.left is not None:
            sys.settrace(self._previous)


class _BoundedCodeGenerator(CodeGenerator):
    """Jinja2's code generator, with ``a ~ b`` measured first (it is not an interceptable operator)."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class _BoundedEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox, with what it still lets a template do at C speed bounded before it runs
    (engine/template_bounds.py): ``**``, ``*``, ``+``, ``%`` and ``~``, string methods, ``str.format``
    and the filters (and their numeric arguments: ``center(10**9)``); no ``lipsum``/``cycler``/
    ``joiner`` (the templates need only ``range``, bounded as well)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})
    code_generator_class = _BoundedCodeGenerator

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.globals.clear()
        self.globals["range"] = _small_range
        self.filters = {name: _bounded_filter(name, fn) for name, fn in self.filters.items()}

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        check_binop(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def bounded_concat(self, values: tuple[Any, ...]) -> str:
        check_concat(values)
        return "".join(map(str, values))

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        check_method(__obj, args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        text, is_map = value.__self__, value.__name__ == "format_map"

        def checked(*args: Any, **kwargs: Any) -> str:
            named = args[0] if is_map and args and isinstance(args[0], Mapping) else kwargs
            check_brace_format(text, () if is_map else args, dict(named))
            return wrapped(*args, **kwargs)

        return checked


class _TrustedEnvironment(jinja2.Environment):
    """maic's own templates, outside the sandbox: they are code we ship and review (their output is
    pinned by tests/golden/), and the sandbox's checks on every attribute, call and operator cost more
    than a third of a render.  The same globals as the sandbox (``range`` only, bounded), so a built-in
    template cannot come to rely on something a user's copy of it would be refused."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.globals.clear()
        self.globals["range"] = _small_range

    def getattr(self, obj: Any, attribute: str) -> Any:
        """``item.key`` on a dict of data: its key straight away (Jinja2 first tries an attribute and pays
        for the AttributeError); a key named like a dict method still goes Jinja2's way."""
        if type(obj) is dict and attribute in obj and attribute not in _DICT_ATTRIBUTES:
            return obj[attribute]
        return super().getattr(obj, attribute)


_DICT_ATTRIBUTES = frozenset(dir(dict))


def _bounded_filter(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    skip = 2 if _PassArg.from_obj(fn) is not None else 1  # the context a filter may take comes before its value

    @functools.wraps(fn)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        for value in (*args[skip:], *kwargs.values()):
            if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > MAX_NUMBER_ARGUMENT:
                raise OverflowError(f"a number above {MAX_NUMBER_ARGUMENT:,} given to a filter in a prompt template")
        if len(args) >= skip:
            check_filter(name, args[skip - 1], args[skip:], kwargs)
        return fn(*args, **kwargs)

    return bounded


def _small_range(*args: int) -> range:
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise OverflowError(f"range() of more than {MAX_RANGE} numbers in a prompt template")
    return numbers


@lru_cache(maxsize=1)
def _builtin() -> PromptSet:
    from ..prompts.builtin import builtin_sources

    return PromptSet({name: TemplateSource(text, f"maic_cli/prompts/{name}")
                      for name, text in builtin_sources().items()}, trusted=True)


def resolve(prompts: PromptSet | None) -> PromptSet:
    """``None`` means the built-in set."""
    return prompts if prompts is not None else _builtin()
