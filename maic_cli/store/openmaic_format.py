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

:func:`manifest_problems` checks a manifest the way OpenMAIC's importer does before it accepts one (the
required fields and their types), each problem as ``manifest.json: path: what``; the reader refuses a manifest
with any, and the tests run it over every classroom the writer makes.
"""

from __future__ import annotations

from typing import Any

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


def _is_text(record: dict[str, Any], key: str) -> bool:
    value = record.get(key)
    return isinstance(value, str) and bool(value.strip())


def _depth(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit`` (iteratively: a hostile manifest cannot exhaust the stack)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > limit:
            return True
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
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


def manifest_problems(manifest: Any) -> list[str]:
    """What OpenMAIC's importer would refuse in ``manifest`` (``[]``: it imports), each ``path: problem``."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("stage"), dict) \
            or not isinstance(manifest.get("scenes"), list):
        return ["the manifest has no stage object or no scenes list"]
    if _depth(manifest, MAX_JSON_DEPTH):
        return [f"the manifest nests deeper than {MAX_JSON_DEPTH} levels"]
    problems: list[str] = []
    version = manifest.get("formatVersion")
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
        problems.append(f"formatVersion: {version} is newer than the version {FORMAT_VERSION} maic reads")
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
        where = f"scenes[{index}]"
        if not isinstance(scene, dict) or not isinstance(scene.get("type"), str) or scene["type"] not in SCENE_TYPES:
            kind = scene.get("type") if isinstance(scene, dict) else None
            problems.append(f"{where}.type: {str(kind)[:40]!r} is not one of {', '.join(sorted(SCENE_TYPES))}")
            continue
        problems += _content_problems(scene.get("content"), scene["type"], where)
        actions = scene.get("actions")
        if actions is not None and not isinstance(actions, list):
            problems.append(f"{where}.actions: not a list")
        for number, action in enumerate(actions if isinstance(actions, list) else []):
            if not isinstance(action, dict) or not _is_text(action, "type"):
                problems.append(f"{where}.actions[{number}]: not an action with a type")
        if scene.get("whiteboards") is not None and not isinstance(scene.get("whiteboards"), list):
            problems.append(f"{where}.whiteboards: not a list")
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
