"""OpenMAIC's classroom ZIP (``*.maic.zip``), as far as maic reads and writes it.

OpenMAIC (THU-MAIC's web app) exports a classroom as a zip holding ``manifest.json`` and its media
(``audio/…``, ``media/…``).  The manifest (format version 1)::

    {formatVersion, exportedAt, appVersion,
     stage: {name, description?, language?, style?, createdAt, updatedAt},
     agents: [{name, role, persona, avatar, color, priority, voiceConfig?}],
     scenes: [{type: slide|quiz|interactive|pbl, title, order, content, actions?, whiteboards?, multiAgent?}],
     mediaIndex: {path: {type: audio|image|generated, mimeType?, missing?, …}}}

A slide's ``content`` is ``{type: "slide", canvas: {id, viewportSize, viewportRatio, theme, elements}}`` with
PPTist elements (``text`` holding HTML, ``latex``, ``table`` of cells, ``image``, ``shape``, ``line``, ``video``,
``audio``) placed on a 1000 × 562.5 canvas; a quiz's is ``{type: "quiz", questions: [{id, type: single|multiple|
short_answer, question, options: [{label, value}], answer: [values], analysis?, commentPrompt?, points?}]}``.
Actions are the lecture: ``speech`` (text), ``spotlight`` / ``laser`` (elementId), ``discussion`` (topic, prompt,
agentIndex), whiteboard drawing (``wb_*``), ``play_video``, widget actions.

:func:`manifest_problems` checks a manifest, each problem as ``path: what``: strictly (every field OpenMAIC's
types require; the tests run it over every classroom the writer makes) or as OpenMAIC's importer does (a stage
object and a scenes list: the reader refuses a manifest without them, and skips a scene it cannot use).
"""

from __future__ import annotations

import io
import json
import stat
import zipfile
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import describe_size, read_bounded
from .common import line

FORMAT_VERSION = 1
SUFFIX = ".maic.zip"
MANIFEST = "manifest.json"
SCENE_TYPES = frozenset({"slide", "quiz", "interactive", "pbl"})
MEDIA_TYPES = frozenset({"audio", "image", "generated"})
CANVAS_WIDTH = 1000
CANVAS_RATIO = 0.5625

# What a classroom zip may be before anything in it is read (it may have come from anyone).
MAX_ZIP_BYTES = 200 * 2**20
MAX_MEMBERS = 5_000
MAX_MANIFEST_BYTES = 20 * 2**20
MAX_RATIO = 100  # uncompressed / compressed, for the manifest when it is over RATIO_FROM bytes
RATIO_FROM = 2**20
MAX_JSON_DEPTH = 64
HOLDER = "maic-discussions"  # the canvas id of the empty slide maic writes to hold a lesson of discussions only
BEFORE = "before the scene"  # a discussion action's description: it comes before its scene (maic's)
MAX_MANIFEST_SCENES = 1_000  # OpenMAIC's classrooms have tens
MAX_ACTIONS = 5_000  # a scene's actions that are read (a long lecture has a few hundred)


def _is_text(record: dict[str, Any], key: str) -> bool:
    value = record.get(key)
    return isinstance(value, str) and bool(value.strip())


def _depth(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit`` (iteratively: a hostile manifest cannot exhaust the stack;
    only containers are visited)."""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, level = stack.pop()
        if level > limit:
            return True
        stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item)
                     if isinstance(child, (dict, list)))
    return False


def _content_problems(content: Any, scene_type: str, where: str) -> list[str]:
    if not isinstance(content, dict) or not _is_text(content, "type"):
        return [f"{where}.content: not a content object with a type"]
    if content["type"] != scene_type:
        return [f"{where}.content.type: {str(content['type'])[:40]!r} is not the scene's type {scene_type!r}"]
    wanted = {"slide": ("canvas", dict), "quiz": ("questions", list), "interactive": ("url", str),
              "pbl": ("projectConfig", dict)}[scene_type]
    if not isinstance(content.get(wanted[0]), wanted[1]):
        shape = "an object" if wanted[1] is dict else f"a {wanted[1].__name__}"
        return [f"{where}.content.{wanted[0]}: missing or not {shape}"]
    return []


def scene_problems(scene: Any, where: str) -> list[str]:
    """What keeps one scene of a manifest from being shown (its type, its content, its actions' shape)."""
    if not isinstance(scene, dict) or not isinstance(scene.get("type"), str) or scene["type"] not in SCENE_TYPES:
        kind = scene.get("type") if isinstance(scene, dict) else None
        return [f"{where}.type: {str(kind)[:40]!r} is not one of {', '.join(sorted(SCENE_TYPES))}"]
    problems = _content_problems(scene.get("content"), scene["type"], where)
    actions = scene.get("actions")
    if actions is not None and not isinstance(actions, list):
        problems.append(f"{where}.actions: not a list")
    for number, action in enumerate(actions[:MAX_MEMBERS] if isinstance(actions, list) else []):
        if not isinstance(action, dict) or not _is_text(action, "type"):
            problems.append(f"{where}.actions[{number}]: not an action with a type")
            break
    if scene.get("whiteboards") is not None and not isinstance(scene.get("whiteboards"), list):
        problems.append(f"{where}.whiteboards: not a list")
    return problems


def manifest_problems(manifest: Any, strict: bool = True) -> list[str]:
    """What keeps ``manifest`` from importing (``[]``: it imports), each ``path: problem``.

    ``strict`` (for what maic writes): every field OpenMAIC's types require, of the agents and of every scene.
    Not strict (for what maic reads): only what OpenMAIC's importer itself refuses (no stage object, no scenes
    list), a manifest nested too deep and a format newer than maic knows; the reader skips a scene it cannot
    use (:func:`scene_problems`) and says so."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("stage"), dict) \
            or not isinstance(manifest.get("scenes"), list):
        return ["the manifest has no stage object or no scenes list"]
    if len(manifest["scenes"]) > MAX_MANIFEST_SCENES:
        return [f"scenes: {len(manifest['scenes']):,} of them, more than a classroom maic reads holds "
                f"({MAX_MANIFEST_SCENES:,})"]
    if strict and _depth(manifest, MAX_JSON_DEPTH):  # (the reader recurses into nothing, and json has its limit)
        return [f"the manifest nests deeper than {MAX_JSON_DEPTH} levels"]
    problems: list[str] = []
    version = manifest.get("formatVersion")
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
        problems.append(f"formatVersion: {min(version, 10**9)} is newer than the version {FORMAT_VERSION} "
                        "maic reads")
    if not strict:
        return problems
    agents = manifest.get("agents", [])
    if not isinstance(agents, list):
        problems.append("agents: not a list")
        agents = []
    for index, agent in enumerate(agents):
        if not isinstance(agent, dict):
            problems.append(f"agents[{index}]: not an object")
            continue
        problems += [f"agents[{index}].{name}: missing or empty" for name in ("name", "role", "persona", "avatar",
                                                                              "color") if not _is_text(agent, name)]
        priority = agent.get("priority")
        if not isinstance(priority, (int, float)) or isinstance(priority, bool) or priority != priority \
                or priority in (float("inf"), float("-inf")):
            problems.append(f"agents[{index}].priority: not a number")
    for index, scene in enumerate(manifest["scenes"]):
        problems += scene_problems(scene, f"scenes[{index}]")
    media = manifest.get("mediaIndex")
    if media is not None:
        if not isinstance(media, dict):
            problems.append("mediaIndex: not an object")
        else:
            for path, entry in media.items():
                if not isinstance(entry, dict) or not isinstance(entry.get("type"), str) \
                        or entry["type"] not in MEDIA_TYPES:
                    problems.append(f"mediaIndex[{str(path)[:60]!r}]: not a media record")
    return problems


def read_manifest(path: Path) -> Any:
    """The parsed ``manifest.json`` of the classroom zip ``path``, read with bounded time and memory (the zip
    and its members counted and sized before anything is unpacked; only the manifest is read)."""
    data = read_bounded(path, MAX_ZIP_BYTES, "classroom zip")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if len(members) > MAX_MEMBERS:
                raise InputError(f"{path}: a zip of {len(members):,} files, more than a classroom holds "
                                 f"({MAX_MEMBERS:,})")
            entries = [m for m in members if m.filename == MANIFEST]
            if not entries:
                raise InputError(f"{path}: a zip, but not an OpenMAIC classroom (no {MANIFEST} at its top)")
            if len(entries) > 1:
                raise InputError(f"{path}: the zip holds {MANIFEST} {len(entries)} times; which one is the "
                                 "classroom cannot be told")
            entry = entries[0]
            if stat.S_ISLNK(entry.external_attr >> 16):
                raise InputError(f"{path}: its {MANIFEST} is a symbolic link, not a file")
            if entry.flag_bits & 0x1:
                raise InputError(f"{path}: its {MANIFEST} is encrypted; export the classroom again without a "
                                 "password")
            if entry.file_size > MAX_MANIFEST_BYTES:
                raise InputError(f"{path}: {MANIFEST} unpacks to {describe_size(entry.file_size)}, more than "
                                 f"{describe_size(MAX_MANIFEST_BYTES)}")
            if entry.file_size > RATIO_FROM and entry.file_size > MAX_RATIO * max(entry.compress_size, 1):
                raise InputError(f"{path}: {MANIFEST} unpacks {entry.file_size // max(entry.compress_size, 1)} "
                                 "times its size (a zip bomb?); not opened")
            with archive.open(entry) as handle:
                raw = handle.read(max(entry.file_size, 0) + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError, NotImplementedError,
            RuntimeError) as exc:
        raise InputError(f"{path}: not a readable classroom zip ({line(str(exc), 120) or type(exc).__name__})") \
            from None
    if len(raw) > entry.file_size:
        raise InputError(f"{path}: {MANIFEST} is larger than it says")
    try:  # a byte-order mark is allowed; bytes that are not UTF-8 become U+FFFD
        return json.loads(raw.decode("utf-8-sig", "replace"))
    except RecursionError:
        raise InputError(f"{path}: {MANIFEST} nests deeper than JSON is read (hundreds of levels)") from None
    except ValueError as exc:  # a syntax error, or an integer of more digits than Python reads
        where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise InputError(f"{path}: {MANIFEST} is not JSON{where}") from None


def scene_order(value: Any, index: int) -> float:
    """A scene's place: its ``order`` when that is a finite number, else where it stands in the list."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value) if abs(value) < 1e300 else (1e300 if value > 0 else -1e300)
        if number == number:
            return number
    return float(index)


def media_prompts(media: Any) -> dict[str, str]:
    """What each generated picture of the media index was drawn from, by the element id its path names
    (``media/<element id>.<ext>``, as OpenMAIC's export names it)."""
    out: dict[str, str] = {}
    for path, entry in list(media.items())[:MAX_MEMBERS] if isinstance(media, dict) else []:
        if isinstance(path, str) and path.startswith("media/") and isinstance(entry, dict) \
                and isinstance(entry.get("prompt"), str) and (prompt := line(entry["prompt"], 300)):
            out[path[len("media/"):].rsplit(".", 1)[0]] = prompt
    return out


def scalar(value: Any) -> str:
    """A text, number or truth of the manifest as text; anything else (a list, an object, nothing) as ``""``."""
    return value if isinstance(value, str) else str(value) if isinstance(value, (int, float)) else ""
