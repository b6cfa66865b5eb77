"""Scripted replies for every step of ``maic lesson new`` (a good whole lesson) and the helpers that
run generation on them, shared by the lesson-generation tests."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from maic_cli.authoring.generation import Initiator, LessonBrief, generate_lesson
from maic_cli.cli.app import app
from maic_cli.llm.scripted import ScriptedLLM

# Each step's reply, a JSON object that tests copy and edit.
REQUIREMENTS: dict[str, Any]
OUTLINE: dict[str, Any]
ELEMENTS: dict[str, Any]
SCRIPT: dict[str, Any]
DISCUSSION: dict[str, Any]
QUIZ: dict[str, Any]
REQUIREMENTS = {"title": "Photosynthèse → how plants eat", "description": "Where a plant's food comes from.",
                "objectives": ["Name the inputs", "Name the outputs"]}
OUTLINE = {"scenes": [{"kind": "slide", "title": "What a plant needs", "goal": "Show the three inputs.",
                       "points": ["Light, water and carbon dioxide go in", "Most mass comes from the air"]},
                      {"kind": "discussion", "title": "Plants in the dark", "goal": "Predict without light."},
                      {"kind": "quiz", "title": "Check", "goal": "Check the inputs and outputs.",
                       "points": ["The inputs", "The outputs"]}]}
ELEMENTS = {"elements": [{"type": "text", "id": "question", "content": "Where does a tree's mass come from?"},
                         {"type": "bullets", "id": "inputs", "items": ["Light", "Water", "Carbon dioxide"]},
                         {"type": "table", "id": "parts", "rows": [["In", "Out"], ["CO2", "glucose"]]}]}
SCRIPT = {"steps": [{"spotlight": "question"}, {"say": "A tree weighs tonnes. Where does that come from?"},
                    {"laser": "inputs"}, {"say": "Mostly from the air."}]}
DISCUSSION = {"topic": "What happens to a plant kept in the dark?", "prompt": "Use the inputs.",
              "initiator": "curious_student"}
QUIZ = {"questions": [{"type": "single", "question": "Where does most of a tree's mass come from?",
                       "options": ["The soil", "The air", "The water"], "answer": "B",
                       "explanation": "The carbon in wood comes from carbon dioxide in the air."},
                      {"type": "multiple", "question": "What does photosynthesis make?",
                       "options": ["Oxygen", "Glucose", "Soil"], "answer": ["A", "B"],
                       "explanation": "Glucose is the plant's food and oxygen is given off."},
                      {"type": "short", "question": "Why do plants need light?", "rubric": "Light gives the energy.",
                       "explanation": "Light is the energy that drives the reaction."}]}
STEPS: list[dict[str, Any]] = [REQUIREMENTS, OUTLINE, ELEMENTS, SCRIPT, DISCUSSION, QUIZ]


def replies(*overrides: tuple[int, Any]) -> list[Any]:
    """The six replies of a whole lesson as JSON text; ``(index, reply)`` replaces one (a list: several)."""
    out: list[Any] = [json.dumps(step, ensure_ascii=False) for step in STEPS]
    for index, reply in sorted(overrides, reverse=True):
        out[index:index + 1] = reply if isinstance(reply, list) else [reply]
    return out


def script_file(tmp_path: Path, items: list[Any]) -> Path:
    path = tmp_path / "replies.yaml"
    path.write_text(yaml.safe_dump(items, allow_unicode=True), encoding="utf-8")
    return path


def new(tmp_path: Path, items: list[Any], *args: str) -> tuple[Any, Path]:
    out = tmp_path / "out" / "lesson.yaml"
    result = CliRunner().invoke(app, ["lesson", "new", "photosynthesis", "--scenes", "3", "--model",
                                      f"scripted:{script_file(tmp_path, items)}", "--out", str(out), *args])
    return result, out


def generate(items: list[Any], **brief: Any) -> tuple[Any, ScriptedLLM]:
    brief.setdefault("initiators", (Initiator("curious_student", "Mia"),))
    llm = ScriptedLLM(items)
    result = asyncio.run(generate_lesson(LessonBrief(topic="photosynthesis", scenes=3, **brief), llm))
    return result, llm
