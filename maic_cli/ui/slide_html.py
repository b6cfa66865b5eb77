"""A slide as HTML that looks like a slide — the one look of every page maic writes (the HTML export of a class,
the web player): pure functions of a slide, no file, no script.

:func:`render_slide_html` gives a ``<section>``: the title set as a title with the slide's place, then each
element as a slide sets it — a paragraph, bullets, a formula as MathML (:mod:`.mathml`), a table with a
header row, code in a monospace block with its language, a picture's description as a captioned picture card
(a drawn stand-in, the description as its caption), which stand in a column of their own beside the rest.
What the teacher points at is marked as on the terminal: the spotlight a yellow highlight (class ``spot``), the
laser a red dot with a ring (class ``laser``).  No element id or type is ever visible text: each element
carries its id in ``data-el`` (escaped), so a page can move the spotlight and the laser by id
(``[data-el="…"]``, classes ``spot`` and ``laser``).  :func:`render_band_html` is the speaker's band (a disc in
the agent's colour, the name, the line being said).  :data:`SLIDE_CSS` styles both; every class starts with
``m`` so a page's own styles do not meet them.

Everything is untrusted: text is cleaned of control sequences and broken surrogates and HTML-escaped; a colour
is used only if it reads as one; nothing is a link, nothing loads.
"""

from __future__ import annotations

import html
import re

from ..engine.models import Slide, SlideElement
from ..replies.sanitize import replace_surrogates
from ..untrusted import clean
from .lesson_notes import MAX_COLUMNS, MAX_ITEMS, pointer_text, shown
from .mathml import latex_to_mathml, tidy_formula

__all__ = ["SLIDE_CSS", "element_html", "formula_html", "picture_html", "pointer_text", "render_band_html",
           "render_slide_html", "safe_color"]
MAX_ELEMENTS = 60
PICTURES = ("image", "video", "chart", "shape")
_COLOR = re.compile(r"^(#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|[a-z]{3,20})$")
SLIDE_CSS = """
.mslide{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;background:#fff;
border:1px solid #d0d7de;border-radius:12px;box-shadow:0 1px 3px #1f232814;padding:1.4rem 1.8rem 1.6rem;
margin:1rem 0;aspect-ratio:16/9;overflow:auto;box-sizing:border-box;line-height:1.45}
.mslide-head{display:flex;align-items:baseline;gap:1rem;border-bottom:0}
.mslide-title{font-size:1.9rem;line-height:1.2;margin:0 0 .2rem;flex:1}
.mslide-head::after{content:none}.mslide-rule{width:4.5rem;height:.3rem;background:#0969da;border:0;
margin:.2rem 0 1.1rem;border-radius:2px}.mslide-place{color:#57606a;font-size:.95rem;white-space:nowrap}
.mslide-body{display:grid;grid-template-columns:1fr;gap:1.4rem}.mslide-body.mtwo{grid-template-columns:2fr 1fr}
.mslide-main,.mslide-side{display:flex;flex-direction:column;gap:.9rem;min-width:0}
.mel{position:relative;padding:.25rem .6rem;border-radius:10px;font-size:1.2rem}
.mel.spot{background:#fff8c5;outline:4px solid #d4a72c}
.mel.laser::before{content:"";position:absolute;left:-1.35rem;top:.55rem;width:.8rem;height:.8rem;
border-radius:50%;background:#cf222e;box-shadow:0 0 0 .3rem #ffd8d3,0 0 0 .5rem #ff8182}
.mtext{margin:0;white-space:pre-line}.mbullets{margin:0;padding-left:1.4rem}
.mbullets li{margin:.2rem 0}.mbullets li::marker{color:#0969da}
.mformula{font-size:1.7rem;margin:0}.mformula math{font-size:1.1em}
.mtable{border-collapse:collapse;font-size:1rem}.mtable th,.mtable td{border:1px solid #d0d7de;
padding:.3rem .7rem;text-align:left}.mtable thead th{background:#ddf4ff}
.mcode{margin:0;background:#f6f8fa;border:1px solid #d0d7de;border-radius:8px;padding:.6rem .9rem;position:relative}
.mcode pre{margin:0;font:.95rem/1.4 ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;white-space:pre-wrap}
.mlang{position:absolute;top:.3rem;right:.6rem;color:#57606a;font-size:.75rem}
.mpicture{margin:0;background:#eef2f7;border:1px solid #d0d7de;border-radius:10px;padding:.7rem}
.mpicture svg{display:block;width:100%;height:auto;border-radius:6px}
.mpicture figcaption{color:#57606a;font-style:italic;font-size:1rem;margin-top:.5rem}
.mband{display:flex;align-items:center;gap:1rem;background:#24292f;color:#fff;border-top:.35rem solid var(--agent);
border-radius:0 0 12px 12px;padding:.8rem 1.2rem;font-family:system-ui,-apple-system,"Segoe UI",sans-serif}
.mavatar{flex:none;width:3rem;height:3rem;border-radius:50%;background:var(--agent);color:#1f2328;display:grid;
place-items:center;font-weight:700;font-size:1.3rem}.mname{color:var(--agent);font-weight:700}
.mline{font-size:1.15rem}
"""
_ART = {
    "image": '<rect width="160" height="90" fill="#dde3ea"/><circle cx="118" cy="24" r="10" fill="#f2cc60"/>'
             '<path d="M0 90 L56 36 L96 90 Z" fill="#9aa7b8"/><path d="M60 90 L108 50 L160 90 Z" fill="#b6c2d2"/>',
    "video": '<rect width="160" height="90" fill="#dde3ea"/><circle cx="80" cy="45" r="24" fill="#9aa7b8"/>'
             '<path d="M72 33 L72 57 L93 45 Z" fill="#fff"/>',
    "chart": '<rect width="160" height="90" fill="#dde3ea"/><rect x="30" y="46" width="18" height="36" fill="#9aa7b8"/>'
             '<rect x="58" y="26" width="18" height="56" fill="#9aa7b8"/><rect x="86" y="38" width="18" height="44"'
             ' fill="#9aa7b8"/><rect x="114" y="14" width="18" height="68" fill="#9aa7b8"/>',
    "shape": '<rect width="160" height="90" fill="#dde3ea"/><circle cx="56" cy="45" r="24" fill="#9aa7b8"/>'
             '<rect x="92" y="25" width="40" height="40" fill="#b6c2d2"/>',
}


def esc(value: object, limit: int = 2000) -> str:
    """Any value as escaped HTML text: cut, cleaned of control sequences and broken surrogates."""
    return html.escape(shown(value, limit))


def _table(rows: list[list[str]]) -> str:
    cells = [row[:MAX_COLUMNS] for row in rows[:MAX_ITEMS]]
    if not cells:
        return "<p class='mtext'><em>(empty table)</em></p>"
    head = "".join(f"<th scope='col'>{esc(cell, 200)}</th>" for cell in cells[0])
    body = "".join("<tr>" + "".join(f"<td>{esc(cell, 200)}</td>" for cell in row) + "</tr>" for row in cells[1:])
    return f"<table class='mtable'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _code(element: SlideElement) -> str:
    lines = "\n".join(esc(line, 240) for line in element.content.splitlines()[:MAX_ITEMS])
    language = f"<figcaption class='mlang'>{esc(element.language, 20)}</figcaption>" if element.language else ""
    return f"<figure class='mcode'>{language}<pre><code>{lines}</code></pre></figure>"


def formula_html(source: str) -> str:
    """A formula (LaTeX, or plain text like ``6 CO2 -> C6H12O6``) as display MathML."""
    return f"<div class='mformula'>{latex_to_mathml(tidy_formula(shown(source, 2000)), display=True)}</div>"


def picture_html(kind: str, caption: str) -> str:
    """A picture card: a drawn stand-in for the picture, its description as the caption."""
    art = _ART.get(kind, _ART["image"])
    return (f"<figure class='mpicture'><svg viewBox='0 0 160 90' aria-hidden='true' focusable='false'>{art}</svg>"
            f"<figcaption>{esc(caption, 600)}</figcaption></figure>")


def element_body_html(element: SlideElement) -> str:
    """One element's content as a slide sets it (no id, no type)."""
    if element.type == "bullets":
        return "<ul class='mbullets'>" + "".join(f"<li>{esc(item, 400)}</li>" for item in element.items[:MAX_ITEMS]) \
            + "</ul>"
    if element.type == "table":
        return _table(element.rows)
    if element.type == "code":
        return _code(element)
    if element.type == "formula":
        return formula_html(element.content)
    if element.type in PICTURES:
        return picture_html(element.type, " ".join(shown(element.content, 600).split()) or element.type)
    return f"<p class='mtext'>{esc(element.content)}</p>"


def element_html(element: SlideElement, *, spotlight: str | None = None, laser: str | None = None) -> str:
    """One element in its box, carrying its id in ``data-el``, marked if spotlit or under the laser."""
    marks = " spot" if element.id == spotlight else ""
    marks += " laser" if element.id == laser else ""
    return (f"<div class='mel m{element.type}{marks}' data-el=\"{esc(element.id, 64)}\">"
            f"{element_body_html(element)}</div>")


def render_slide_html(slide: Slide, *, number: int = 0, total: int = 0, spotlight: str | None = None,
                      laser: str | None = None) -> str:
    """The slide as a ``<section class="mslide">``; ``number``/``total`` its place (0: none shown)."""
    elements = slide.elements[:MAX_ELEMENTS]
    title = esc(slide.title, 200)
    place = f"{number} / {total}" if number and total else ""
    label = f"Slide {place.replace(' / ', ' of ')}: {title}" if place else title
    head = (f"<div class='mslide-head'><h3 class='mslide-title'>{title}</h3>"
            + (f"<span class='mslide-place'>{place}</span>" if place else "") + "</div><hr class='mslide-rule'>")
    pictures = [e for e in elements if e.type in PICTURES]
    rest = [e for e in elements if e.type not in PICTURES]
    columns = [rest, pictures] if pictures and rest else [elements]
    body = "".join(
        f"<div class='{'mslide-side' if column is pictures and len(columns) == 2 else 'mslide-main'}'>"
        + "".join(element_html(e, spotlight=spotlight, laser=laser) for e in column) + "</div>"
        for column in columns)
    two = " mtwo" if len(columns) == 2 else ""
    return (f"<section class='mslide' aria-label=\"{label}\" data-slide=\"{esc(slide.id, 64)}\">{head}"
            f"<div class='mslide-body{two}'>{body}</div></section>")


def safe_color(color: str, fallback: str = "#8c959f") -> str:
    """A persona's colour if it reads as one (``#4f9dde``, ``cyan``; ``bright_cyan`` as ``cyan``), else ``fallback``."""
    name = clean(replace_surrogates(color)).strip().lower().replace("bright_", "").replace("_", "")
    return name if _COLOR.fullmatch(name) else fallback


def render_band_html(name: str, text: str, color: str = "") -> str:
    """The speaker's band: a disc in the agent's colour with the name's initial, the name, the line being said."""
    who = shown(name, 60) or "?"
    return (f"<div class='mband' style='--agent:{safe_color(color)}'>"
            f"<span class='mavatar' aria-hidden='true'>{html.escape(who[0].upper())}</span>"
            f"<div><div class='mname'>{html.escape(who)}</div><div class='mline'>{esc(text, 1000)}</div></div></div>")

