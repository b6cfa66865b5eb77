"""Hostile inputs for ``maic lesson import`` / ``export``, built on the spot, and a way to measure a command.

Each builder writes a file of the kind a user may be sent: a deck of one slide holding many tiny
shapes, Markdown notes with one very wide table, a PDF whose pages all draw one huge content
stream, a lesson whose one text element is all line breaks.  ``measure`` runs ``maic`` on it in a
fresh interpreter and reports its wall time and peak memory (``os.wait4``: that child's own).
Used by ``tests/test_import_bounds.py`` (small sizes) and ``tests/benchmarks/import_bounds.py``
(the sizes of the reported attacks).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

_SHAPE = ('<p:sp><p:nvSpPr><p:cNvPr id="{id}" name="s{id}"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr><p:spPr>'
          '<a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="10" cy="10"/></a:xfrm></p:spPr>'
          '<p:txBody><a:bodyPr/><a:p><a:r><a:t>x</a:t></a:r></a:p></p:txBody></p:sp>')


def tiny_shapes_deck(path: Path, shapes: int) -> Path:
    """A deck of one slide holding ``shapes`` one-letter text boxes."""
    from pptx import Presentation

    deck = Presentation()
    deck.slides.add_slide(deck.slide_layouts[6])  # blank
    plain = io.BytesIO()
    deck.save(plain)
    with zipfile.ZipFile(io.BytesIO(plain.getvalue())) as source:
        parts = {name: source.read(name) for name in source.namelist()}
    slide = parts["ppt/slides/slide1.xml"].decode()
    body = "".join(_SHAPE.format(id=n + 10, x=(n * 37) % 9_000_000, y=(n * 53) % 6_000_000) for n in range(shapes))
    parts["ppt/slides/slide1.xml"] = slide.replace("</p:spTree>", body + "</p:spTree>").encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


def wide_table_notes(path: Path, columns: int, size: int) -> Path:
    """Markdown notes of one slide holding a table ``columns`` wide, about ``size`` bytes long."""
    row = "|" + "a|" * columns + "\n"
    rows = max(1, (size - 40) // len(row) - 1)
    path.write_text("# Wide\n\n## A table\n\n" + row + "|" + "-|" * columns + "\n" + row * rows, encoding="utf-8")
    return path


def shared_stream_pdf(path: Path, pages: int, content: int) -> Path:
    """A PDF of ``pages`` pages that all draw one content stream of ``content`` bytes (compressed)."""
    unit = b"BT /F1 12 Tf 72 720 Td (x) Tj ET\n"
    stream = zlib.compress(unit * (content // len(unit)), 9)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    kids = []
    for _ in range(pages):
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                       b"/Resources << /Font << /F1 3 0 R >> >> >>")
        kids.append(b"%d 0 R" % len(objects))
    objects[1] = b"<< /Type /Pages /Kids [" + b" ".join(kids) + b"] /Count %d >>" % pages
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(out)
    return path


def line_break_lesson(path: Path, breaks: int) -> Path:
    """A lesson file whose one text element holds ``breaks`` line breaks."""
    escaped = "\\n" * breaks  # YAML's escape: two bytes a line break
    path.write_text("title: Breaks\nscenes:\n  - type: slide\n    id: s\n    title: Breaks\n    elements:\n"
                    f"      - id: t\n        type: text\n        content: \"a{escaped}b\"\n", encoding="utf-8")
    return path


@dataclass
class Measured:
    seconds: float
    peak_mb: float
    code: int
    stderr: str


# Run by a small interpreter of its own: a child's peak memory (ru_maxrss) counts the memory of the process it was
# forked from, so maic is started from this launcher, not from a test process of hundreds of megabytes.
_LAUNCHER = """
import json, os, subprocess, sys, time
argv, timeout, errors = json.loads(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
started = time.monotonic()
with open(errors, "wb") as sink:
    child = subprocess.Popen([sys.executable, "-m", "maic_cli", *argv], stdout=subprocess.DEVNULL, stderr=sink)
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - started > timeout:
            child.kill()
            pid, status, usage = os.wait4(child.pid, 0)
            break
        time.sleep(0.02)
print(json.dumps([time.monotonic() - started, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)]))
"""


def measure(argv: list[str], cwd: Path, timeout: float = 900) -> Measured:
    """``maic ARGV`` in a fresh interpreter: its wall time, its own peak memory, exit code and stderr."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    with tempfile.TemporaryDirectory() as folder:
        errors = Path(folder) / "stderr"
        done = subprocess.run([sys.executable, "-c", _LAUNCHER, json.dumps(argv), str(timeout), str(errors)],
                              cwd=cwd, env=env, capture_output=True, text=True, check=True)
        seconds, peak, code = json.loads(done.stdout)
        return Measured(float(seconds), float(peak), int(code), errors.read_text("utf-8", "replace"))
