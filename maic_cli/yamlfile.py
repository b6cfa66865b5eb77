"""Load a YAML (or JSON) file into a pydantic model, reporting errors by line.

A bad file is reported as ``path:line: field: what is wrong`` — the line of the
field at fault, found by walking the YAML node tree along the error's location.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from .errors import InputError

T = TypeVar("T")


def yaml_files(folder: Path) -> list[Path]:
    """The ``.yaml``/``.yml`` files directly in ``folder``, by name."""
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def read_yaml(path: Path) -> tuple[Any, yaml.Node | None]:
    """The file's data and its node tree (for line numbers)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise InputError(f"{path}:{line}: YAML syntax: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{path}:1: YAML: {exc}") from None
    finally:
        loader.dispose()
    return data, node


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
    message = first["msg"]
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    others = {tuple(e["loc"])[:1] for e in error.errors()[1:]} - {tuple(first["loc"])[:1]}
    extra = f" (and {len(others)} more)" if others else ""
    return f"{path}:{line_of(node, loc)}: {field}: {message}{extra}"


def load_model(path: Path, model: type[T] | TypeAdapter[T], **context: Any) -> T:
    """Read ``path`` and validate it as ``model`` (a BaseModel class or a TypeAdapter)."""
    data, node = read_yaml(path)
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(data, context=context or None)
        assert issubclass(model, BaseModel)
        return model.model_validate(data, context=context or None)  # type: ignore[return-value]
    except ValidationError as exc:
        raise InputError(format_validation_error(path, node, exc, data)) from None
