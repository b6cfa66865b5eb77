"""Load a YAML (or JSON) file into a pydantic model, reporting errors by line.

A bad file is reported as ``path:line: field: what is wrong`` — the line of the
field at fault, found by walking the YAML node tree along the error's location.
The one loader for personas, scenarios, config, router and scripted files, all
of which may come from someone else, so what is read is bounded: regular files
only, at most :data:`MAX_YAML_BYTES`, nesting the parser allows (libyaml: 1,000
levels; the pure-Python one: until Python's recursion limit), and aliases that
expand to at most :data:`MAX_YAML_VALUES` values (a "billion laughs" file is
refused before anything walks the expanded tree).  An integer of more than
:data:`MAX_NUMBER_CHARS` characters is out of range (``path:line``), not an exception.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from .errors import InputError
from .files import read_bounded
from .untrusted import one_line

T = TypeVar("T")
MAX_YAML_BYTES = 2**20  # personas, scenarios, config and router files are a few KB
MAX_YAML_VALUES = 1_000_000  # more than a 1 MB file can hold without aliases
MAX_NUMBER_CHARS = 1_000  # of an integer (Python refuses to convert more than 4,300 digits)
_INT_TAG = "tag:yaml.org,2002:int"
# libyaml's loader (when PyYAML has it) is about 9x faster and caps nesting at 1,000 levels.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def yaml_files(folder: Path) -> list[Path]:
    """The ``.yaml``/``.yml`` files directly in ``folder``, by name."""
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def read_yaml(path: Path, max_bytes: int = MAX_YAML_BYTES) -> tuple[Any, yaml.Node | None]:
    """The file's data and its node tree (for line numbers)."""
    try:
        text = read_bounded(path, max_bytes, "YAML file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: cannot read: not UTF-8 text (byte {exc.start})") from None
    loader = SAFE_LOADER(text)
    try:
        node = loader.get_single_node()
        if node is not None and expanded_size(node) > MAX_YAML_VALUES:
            raise InputError(f"{path}: aliases expand to more than {MAX_YAML_VALUES:,} values "
                             "(a YAML alias bomb?)")
        twice = duplicate_key(node) if node is not None else None
        if twice is not None:
            raise InputError(f"{path}:{twice.start_mark.line + 1}: {one_line(str(twice.value))[:80]}: "
                             "this key is given twice in the same mapping (YAML would keep only the last)")
        huge = huge_number(node) if node is not None else None
        if huge is not None:
            raise InputError(f"{path}:{huge.start_mark.line + 1}: a number of {len(huge.value):,} characters is "
                             f"out of range (at most {MAX_NUMBER_CHARS:,})")
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise InputError(f"{path}:{line}: YAML syntax: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{path}:1: YAML: {exc}") from None
    except RecursionError:
        raise InputError(f"{path}: nested too deeply") from None
    except ValueError as exc:  # a value YAML's constructors refuse (a date like 2026-13-45)
        raise InputError(f"{path}: {one_line(str(exc))[:200]}") from None
    finally:
        loader.dispose()
    return data, node


def expanded_size(root: yaml.Node) -> int:
    """How many values the document holds once its aliases are expanded (capped just above
    the limit; a recursive alias counts as too many).  Linear in the distinct nodes."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_counted = stack.pop()
        key = id(node)
        if children_counted:
            sizes[key] = min(MAX_YAML_VALUES + 1, 1 + sum(sizes[id(child)] for child in _children(node)))
            on_path.discard(key)
        elif key in on_path:
            return MAX_YAML_VALUES + 1  # an alias inside its own anchor
        elif key not in sizes:
            on_path.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))
    return sizes[id(root)]


def _nodes(root: yaml.Node) -> Iterator[yaml.Node]:
    """Every node under ``root``, each once (an alias shares its node: it is not walked again)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(_children(node))


def huge_number(root: yaml.Node) -> yaml.ScalarNode | None:
    """An integer written with more than :data:`MAX_NUMBER_CHARS` characters, if any."""
    return next((node for node in _nodes(root) if isinstance(node, yaml.ScalarNode) and node.tag == _INT_TAG
                 and len(node.value) > MAX_NUMBER_CHARS), None)


def duplicate_key(root: yaml.Node) -> yaml.ScalarNode | None:
    """The second occurrence of a key given twice in one mapping, if any (each node visited once)."""
    for node in _nodes(root):
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if key.value in keys:
                        return key
                    keys.add(key.value)
    return None


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def line_of(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int:
    """The 1-based line of the node at ``loc`` (or of its nearest existing parent)."""
    if node is None:
        return 1
    current = node
    for step in loc:
        child = None
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                if getattr(key, "value", None) == str(step):
                    child = key if isinstance(value, yaml.ScalarNode) and value.value == "" else value
                    break
        elif isinstance(current, yaml.SequenceNode) and isinstance(step, int):
            if 0 <= step < len(current.value):
                child = current.value[step]
        if child is None:
            break
        current = child
    return current.start_mark.line + 1


def data_loc(data: Any, loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """``loc`` without the steps pydantic adds for union members (``ScriptedReply``, ``str``…)."""
    kept: list[int | str] = []
    current = data
    for index, step in enumerate(loc):
        if isinstance(current, dict) and step in current:
            current = current[step]
        elif isinstance(current, list) and isinstance(step, int) and 0 <= step < len(current):
            current = current[step]
        elif index < len(loc) - 1 or isinstance(current, list):
            continue  # a union tag, not a place in the file
        kept.append(step)
    return tuple(kept)


def format_validation_error(path: Path, node: yaml.Node | None, error: ValidationError,
                            data: Any = None) -> str:
    first = error.errors()[0]
    loc = data_loc(data, tuple(first["loc"])) if data is not None else tuple(first["loc"])
    field = ".".join(str(step) for step in loc) or "(top level)"
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    others = {tuple(e["loc"])[:1] for e in error.errors()[1:]} - {tuple(first["loc"])[:1]}
    extra = f" (and {len(others)} more)" if others else ""
    return f"{path}:{line_of(node, loc)}: {field}: {message}{extra}"


def load_model(path: Path, model: type[T] | TypeAdapter[T], *, max_bytes: int = MAX_YAML_BYTES,
               **context: Any) -> T:
    """Read ``path`` and validate it as ``model`` (a BaseModel class or a TypeAdapter)."""
    data, node = read_yaml(path, max_bytes)
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(data, context=context or None)
        assert issubclass(model, BaseModel)
        return model.model_validate(data, context=context or None)
    except ValidationError as exc:
        raise InputError(format_validation_error(path, node, exc, data)) from None
