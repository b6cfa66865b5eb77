"""Replacing one scene of a lesson file in place: every other byte of the file stays as the teacher wrote it.

Dumping the whole lesson again would reformat it (quotes, flow lists, comments lost).
Instead the file's node tree (PyYAML's composer, which keeps where each node starts and
ends) gives the lines of the scene's entry under ``scenes:`` — from the line of its ``-``
to the line where its last value ends — and only those lines are replaced by the new
scene, written by our YAML writer at the same indentation.  Comments between entries
stay where they are.  The result is read back and checked: it must load as a lesson
whose scenes are the old ones with this one replaced.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from ..errors import InputError
from ..lessons.lesson import Lesson, Scene
from ..yamlfile import SAFE_LOADER
from .lesson_writer import _BlockDumper, _prune


def _end(node: yaml.Node) -> yaml.Mark:
    """Where the last value inside ``node`` ends (a block mapping's own end mark runs on to the next token)."""
    if isinstance(node, yaml.MappingNode) and node.value and node.flow_style is not True:
        return _end(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and node.value and node.flow_style is not True:
        return _end(node.value[-1])
    return node.end_mark


def scene_lines(text: str, index: int, path: Path) -> tuple[int, int, int]:
    """(first line, line after the last, indentation of the ``-``) of scene ``index``'s entry in ``text``."""
    loader = SAFE_LOADER(text)
    try:
        root = loader.get_single_node()
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: YAML syntax: {exc}") from None
    finally:
        loader.dispose()
    scenes = None
    if isinstance(root, yaml.MappingNode):
        scenes = next((value for key, value in root.value if isinstance(key, yaml.ScalarNode)
                       and key.value == "scenes"), None)
    if not isinstance(scenes, yaml.SequenceNode) or scenes.flow_style or index >= len(scenes.value):
        raise InputError(f"{path}: scenes: not a block list ('- type: …' entries) whose scene could be replaced")
    entry = scenes.value[index]
    if entry.flow_style:  # - {type: discussion, …}: one flow mapping
        first, last = entry.start_mark.line, entry.end_mark.line + 1
    else:
        first = entry.start_mark.line
        end = _end(entry)
        last = end.line + 1 if end.column > 0 else end.line  # a block scalar ends at the start of the next line
    lines = text.splitlines(keepends=True)
    dash = lines[first].find("-", 0, entry.start_mark.column + 1) if first < len(lines) else -1
    if dash < 0 or lines[first][:dash].strip():
        raise InputError(f"{path}:{first + 1}: this scene does not start its own line with '- '; "
                         "replace it by hand or write it one key per line")
    return first, max(last, first + 1), dash


def scene_yaml(scene: Scene, indent: int) -> str:
    """One ``- type: …`` entry of the scenes list, indented by ``indent`` spaces."""
    body = yaml.dump([_prune(scene.model_dump(mode="json", exclude_none=True))], Dumper=_BlockDumper,
                     sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)
    return "".join(" " * indent + line if line.strip() else line for line in body.splitlines(keepends=True))


def splice_scene(text: str, index: int, scene: Scene, path: Path) -> str:
    """``text`` with scene ``index``'s lines replaced by ``scene``; every other line is kept byte for byte."""
    first, last, indent = scene_lines(text, index, path)
    lines = text.splitlines(keepends=True)
    new = scene_yaml(scene, indent)
    if last >= len(lines) and lines and not lines[-1].endswith("\n"):
        new = new.rstrip("\n")  # the file did not end with a line break: neither does it now
    return "".join(lines[:first]) + new + "".join(lines[last:])


def check_splice(text: str, before: Lesson, index: int, path: Path) -> Lesson:
    """The spliced ``text`` read back: a valid lesson, whose scenes other than ``index`` are ``before``'s."""
    try:
        data = yaml.load(text, Loader=SAFE_LOADER)
        after = Lesson.model_validate(data)
    except (yaml.YAMLError, ValidationError) as exc:
        raise InputError(f"{path}: the file with the new scene would not load ({str(exc).splitlines()[0]}); "
                         "nothing was written") from None
    same = len(after.scenes) == len(before.scenes) and all(
        a == b for i, (a, b) in enumerate(zip(after.scenes, before.scenes, strict=True)) if i != index)
    if not same:
        raise InputError(f"{path}: replacing the scene would change others; nothing was written")
    return after
