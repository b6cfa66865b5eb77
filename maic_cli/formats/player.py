"""``maic lesson export L --out lesson.html``: the lesson as a web player in one self-contained page.

The page holds everything (no network, no CDN, no font to fetch): the slides in the look every maic page shares
(:func:`maic_cli.ui.slide_html.render_slide_html`: formulas as MathML, picture cards; the spotlight and laser are
its ``spot`` and ``laser`` classes on the element whose ``data-el`` is the step's id), the speaker's band
(:func:`~maic_cli.ui.slide_html.render_band_html`), the quiz as a form, the discussions, the class as speaker
cards, and, as a JSON block, what the script in ``player_assets/player.js`` plays: each
scene's lines (who says what) with the spotlight and laser steps between them, the quiz key and each short
answer's rubric read into points (:func:`maic_cli.lessons.rubric.read_rubric`) that the page's own check
mirrors.  With a voice track (:mod:`.player_voice`) the lines are read aloud in step.  The same page is the
SCO of a SCORM 1.2 package (:mod:`.scorm`): ``scorm`` turns on its LMS reporting.

A lesson file is untrusted.  Every text is cleaned and HTML-escaped where it is markup; the JSON block escapes
``<``, ``>`` and ``&`` (no lesson text can close it); the page's Content-Security-Policy lets only the page's
own script run (by its hash), so even a markup slip could not run a lesson's script; no lesson text becomes a
link, a URL or an attribute other than escaped text.
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ..engine.models import AgentConfig, Slide, SlideElement
from ..lessons.lesson import LETTERS, DiscussionScene, Lesson, QuizQuestion, QuizScene, SlideScene
from ..lessons.rubric import MAX_ANSWER, Point, Rubric, Term, is_english, read_rubric
from ..lessons.rubric_words import AUXILIARIES, COUNTERFACTUAL_OPENERS, NEGATION_REACH, NEGATIONS, STOP_WORDS
from ..ui.slide_html import SLIDE_CSS, render_band_html, render_slide_html
from ..untrusted import clean

DEFAULT_MASTERY = 80  # percent of the quiz points a learner needs to pass (SCORM: adlcp:masteryscore)
_SAFE_COLOR = re.compile(r"^#[0-9a-fA-F]{3,8}$")
PALETTE = ("#4f9dde", "#3fb950", "#f0883e", "#d2a8ff", "#e3b341", "#79c0ff", "#ff7b72", "#56d4dd")


@dataclass(frozen=True)
class Voiced:
    """The lesson's lines read aloud: one compressed track and where each line lies in it (seconds)."""

    audio: bytes
    mime: str  # audio/ogg (Opus) or audio/mpeg
    spans: list[tuple[float, float]]  # one per line, in the order of :func:`lines`


@dataclass(frozen=True)
class Line:
    """One line of the lesson's scripts: who says it (an agent id of the class) and what."""

    speaker: str
    text: str


def _text(value: object, limit: int = 4000) -> str:
    """A lesson string as plain data: cleaned, cut, single-spaced lines."""
    return clean(str(value))[:limit]


def e(value: object, limit: int = 4000) -> str:
    return html.escape(_text(value, limit))


def _teacher(agents: list[AgentConfig]) -> str:
    teacher = next((a for a in agents if a.role == "teacher"), agents[0] if agents else None)
    return teacher.id if teacher else "teacher"


def speakers(agents: list[AgentConfig]) -> dict[str, dict[str, str]]:
    """Each agent of the class as the page shows it: name, role, avatar and a CSS colour (a checked hex one,
    else one of the palette)."""
    out = {}
    for number, agent in enumerate(agents):
        color = agent.color if _SAFE_COLOR.fullmatch(agent.color) else PALETTE[number % len(PALETTE)]
        out[agent.id] = {"name": _text(agent.name, 60), "role": agent.role, "avatar": _text(agent.avatar, 16),
                         "color": color}
    if not out:
        out["teacher"] = {"name": "Teacher", "role": "teacher", "avatar": "", "color": PALETTE[0]}
    return out


def _speaker(by: str | None, known: dict[str, Any], teacher: str) -> str:
    return by if by is not None and by in known else teacher


def lines(lesson: Lesson, agents: list[AgentConfig]) -> list[Line]:
    """Every line the page says, in order (the voice track has one clip per line, in this order)."""
    return [Line(step["by"], step["say"]) for scene in player_data(lesson, agents)["scenes"]
            for step in scene["steps"] if "say" in step]


def _term(term: Term) -> dict[str, Any]:
    return {"w": term.word, "s": sorted(term.stems), "t": term.stem}


def _point(point: Point) -> dict[str, Any]:
    return {"l": point.label, "e": point.echo, "a": [[_term(t) for t in alt] for alt in point.alternatives]}


def rubric_data(rubric: Rubric) -> dict[str, Any]:
    """The rubric's points as the page's check reads them (the stems the Snowball stemmer gave, with synonyms)."""
    return {"ess": [_point(p) for p in rubric.essential], "bon": [_point(p) for p in rubric.bonus],
            "terms": [_term(t) for t in rubric.terms], "pol": rubric.polarity, "asked": sorted(rubric.asked)}


def _question(question: QuizQuestion, language: str | None) -> dict[str, Any]:
    data: dict[str, Any] = {"id": question.id, "type": question.type, "points": question.points,
                            "explanation": _text(question.explanation or "", 1000)}
    if question.type == "short":
        data["rubric"] = rubric_data(read_rubric(question.rubric or "", question.question, language=language))
    else:
        data["options"] = len(question.options)
        data["answer"] = sorted(question.key())
    return data


def player_data(lesson: Lesson, agents: list[AgentConfig], *, voiced: Voiced | None = None,
                scorm: bool = False, mastery: int = DEFAULT_MASTERY) -> dict[str, Any]:
    """What the page's script plays (see the module): scenes with their steps, the quiz key, the class."""
    known, teacher = speakers(agents), _teacher(agents)
    said = itertools.count()
    scenes: list[dict[str, Any]] = []
    for scene in lesson.scenes:
        if isinstance(scene, SlideScene):
            steps: list[dict[str, Any]] = []
            for step in scene.script:
                if step.say is not None:
                    steps.append({"say": _text(step.say), "by": _speaker(step.by, known, teacher), "n": next(said)})
                else:
                    steps.append({"spotlight" if step.spotlight else "laser": _text(step.target or "", 64)})
            scenes.append({"type": "slide", "title": _text(scene.title, 200), "steps": steps})
        elif isinstance(scene, QuizScene):
            scenes.append({"type": "quiz", "title": _text(scene.title, 200),
                           "steps": [{"say": f"Time for a quiz: {_text(scene.title, 200)}.", "by": teacher,
                                      "n": next(said)}],
                           "questions": [_question(q, lesson.language) for q in scene.questions]})
        else:
            opener = _speaker(scene.initiator, known, teacher)
            steps = [{"say": _text(s.say), "by": _speaker(s.by, known, teacher), "n": next(said)}
                     for s in scene.script if s.say is not None] or \
                [{"say": f"Let's discuss: {_text(scene.topic, 500)}", "by": opener, "n": next(said)}]
            scenes.append({"type": "discussion", "title": _text(scene.title or scene.topic, 200), "steps": steps})
    english = is_english(lesson.language)
    words = {"stop": sorted(STOP_WORDS) if english else [], "neg": sorted(NEGATIONS), "reach": NEGATION_REACH,
             "aux": sorted(AUXILIARIES), "cf": list(COUNTERFACTUAL_OPENERS), "en": english, "max": MAX_ANSWER}
    return {"title": _text(lesson.title, 200), "speakers": known, "teacher": teacher, "scenes": scenes,
            "maxPoints": lesson.max_points, "words": words, "scorm": scorm, "mastery": mastery,
            "spans": [[round(a, 3), round(b, 3)] for a, b in voiced.spans] if voiced else None}


def json_block(data: object) -> str:
    """``data`` as JSON that no text inside can end early: ``<``, ``>``, ``&`` and the line separators escaped."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("player_assets", name).read_text(encoding="utf-8")


def _question_html(scene_number: int, number: int, question: QuizQuestion) -> str:
    name = f"q{scene_number}-{number}"
    points = f"{question.points} point{'s' if question.points != 1 else ''}"
    kind = {"single": "choose one", "multiple": "choose all that apply", "short": "answer in your words"}
    legend = (f"<legend><span class='qn'>Question {number + 1}</span> <span class='qmeta'>({points}, "
              f"{kind[question.type]})</span><span class='qtext'>{e(question.question, 2000)}</span></legend>")
    if question.type == "short":
        body = (f"<label class='short' for='{name}'>Your answer</label>"
                f"<textarea id='{name}' name='{name}' rows='3' maxlength='{MAX_ANSWER}'></textarea>")
    else:
        kind_input = "radio" if question.type == "single" else "checkbox"
        body = "".join(f"<label class='opt'><input type='{kind_input}' name='{name}' value='{i}'> "
                       f"<span>{LETTERS[i]}) {e(option, 1000)}</span></label>"
                       for i, option in enumerate(question.options))
    return (f"<fieldset class='q' data-q='{number}'>{legend}{body}"
            f"<p class='feedback' id='{name}-fb' aria-live='polite'></p></fieldset>")


def _scene_html(number: int, scene: SlideScene | QuizScene | DiscussionScene, agents: dict[str, Any],
                slides: tuple[int, int]) -> str:
    """A scene's section: a slide as the shared renderer draws it, a quiz as a form, a discussion as a card."""
    label = e(scene.title or getattr(scene, "topic", ""), 200)
    head = f"<section class='scene kind-{scene.type}' data-scene='{number}' aria-label=\"{label}\" hidden>"
    if isinstance(scene, SlideScene):
        return f"{head}{render_slide_html(scene.slide(), number=slides[0], total=slides[1])}</section>"
    if isinstance(scene, QuizScene):
        questions = "".join(_question_html(number, k, q) for k, q in enumerate(scene.questions))
        return (f"{head}<h2 id='h{number}'>{e(scene.title, 200)}</h2>"
                f"<form class='quiz' data-quiz='{number}' novalidate>{questions}"
                "<div class='submit-row'><button type='submit' class='submit'>Submit</button>"
                f"<p class='result' role='status' tabindex='-1'></p></div></form></section>")
    opener = agents.get(scene.initiator or "", {}).get("name")
    card = [SlideElement(id="topic", type="text", content=scene.topic)]
    if scene.prompt:
        card.append(SlideElement(id="prompt", type="text", content=scene.prompt))
    if opener:
        card.append(SlideElement(id="opener", type="text", content=f"Opened by {opener}"))
    title = f"Discussion: {scene.title or scene.topic}"[:200]
    return f"{head}{render_slide_html(Slide(id=scene.id, title=title, elements=card))}</section>"


def _cards(known: dict[str, dict[str, str]]) -> str:
    return "".join(
        f"<li class='card' data-sp='{html.escape(agent_id)}' style='--c:{data['color']}'>"
        f"<span class='avatar' aria-hidden='true'>{html.escape(data['name'][:1].upper())}</span>"
        f"<span class='who'><span class='name'>{html.escape(data['name'])}</span>"
        f"<span class='role'>{html.escape(data['role'])}</span></span><span class='line'></span></li>"
        for agent_id, data in known.items())


def player_html(lesson: Lesson, agents: list[AgentConfig], *, voiced: Voiced | None = None, scorm: bool = False,
                mastery: int = DEFAULT_MASTERY) -> str:
    """The player page (see the module)."""
    data = player_data(lesson, agents, voiced=voiced, scorm=scorm, mastery=mastery)
    script = _asset("player.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:; "
              "media-src data:; font-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'")
    audio = (f"<audio id='voice' preload='auto' src='data:{voiced.mime};base64,"
             f"{base64.b64encode(voiced.audio).decode('ascii')}'></audio>") if voiced else ""
    total = sum(1 for scene in lesson.scenes if isinstance(scene, SlideScene))
    places = {index: (place, total) for place, (index, _) in enumerate(lesson.slide_scenes(), 1)}
    scenes = "".join(_scene_html(number, scene, data["speakers"], places.get(number, (0, 0)))
                     for number, scene in enumerate(lesson.scenes))
    end = render_slide_html(Slide(id="end", title="The end", elements=[SlideElement(id="summary", content=" ")]))
    first = next((step for scene in data["scenes"] for step in scene["steps"] if "say" in step), None)
    who = data["speakers"].get(first["by"], {}) if first else {}
    title = e(lesson.title, 200)
    return "".join([
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{policy}\">",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<meta name='generator' content='maic lesson export'><title>{title}</title>",
        f"<style>{SLIDE_CSS}{_asset('player.css')}</style></head><body>",
        "<a class='skip' href='#controls'>Skip to the lesson controls</a>",
        f"<header><h1>{title}</h1><p id='where' class='where'></p></header>",
        "<div class='layout'><main id='stage'>", scenes,
        f"<section class='scene kind-end' data-scene='end' aria-label='The end' hidden>{end}</section>",
        "<div id='band' class='band' aria-live='polite' aria-atomic='true'>",
        render_band_html(who.get("name", ""), first["say"] if first else "", who.get("color", "")), "</div>",
        "<nav id='controls' class='controls' aria-label='Lesson controls'>",
        "<button type='button' id='prev'>Previous</button>",
        "<button type='button' id='play' aria-pressed='false'><span class='icon' aria-hidden='true'>▶</span>"
        "Play</button><button type='button' id='next'>Next</button>",
        "<span class='hint'>Keys: ← → move, space plays</span></nav></main>",
        f"<aside class='class' aria-label='The class'><h2>The class</h2><ul class='cards'>"
        f"{_cards(data['speakers'])}</ul></aside></div>", audio,
        f"<script type='application/json' id='lesson-data'>{json_block(data)}</script>",
        f"<script>{script}</script></body></html>\n",
    ])
