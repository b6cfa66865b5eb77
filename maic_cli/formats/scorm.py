"""``maic lesson export L --out lesson.scorm.zip``: the web player as a SCORM 1.2 package for any LMS.

The package holds two files, each at the top with a plain name: ``imsmanifest.xml`` (content packaging 1.1.2 with
the ADL SCORM 1.2 extensions: one organization, one item, one SCO resource listing every file of the package) and
``index.html``, the player page of :mod:`.player` with its LMS reporting on.  The item's ``adlcp:masteryscore``
is the mastery score (``--mastery``, percent of the quiz points, default 80); the LMS hands it to the SCO as
``cmi.student_data.mastery_score`` and the page passes or fails the learner against it (the page's own copy
when the LMS gives none).  What the page reports is documented in ``docs/guide/exports.md``.

Sizes are bounded: the page is refused above :data:`MAX_PAGE_BYTES` (a long voice track); the zip has fixed
timestamps, so the same lesson gives the same package.
"""

from __future__ import annotations

import io
import zipfile
from xml.sax.saxutils import escape, quoteattr

from ..errors import InputError

MANIFEST = "imsmanifest.xml"
PAGE = "index.html"
MAX_PAGE_BYTES = 200_000_000  # the page with its voice track
_STAMP = (2020, 1, 1, 0, 0, 0)
SCHEMA_LOCATIONS = ("http://www.imsproject.org/xsd/imscp_rootv1p1p2 imscp_rootv1p1p2.xsd "
                    "http://www.adlnet.org/xsd/adlcp_rootv1p2 adlcp_rootv1p2.xsd")


def manifest(title: str, identifier: str, mastery: int, files: list[str]) -> str:
    """The SCORM 1.2 manifest: one SCO (``index.html``) holding ``files``; ``identifier`` an XML NCName."""
    if not 0 <= mastery <= 100:
        raise InputError(f"--mastery: a percentage from 0 to 100, not {mastery}")
    listed = "".join(f"\n      <file href={quoteattr(name)}/>" for name in files)
    name = escape(title)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier={quoteattr(identifier)} version="1.0"
    xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
    xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xsi:schemaLocation="{SCHEMA_LOCATIONS}">
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>1.2</schemaversion>
  </metadata>
  <organizations default="maic-organization">
    <organization identifier="maic-organization">
      <title>{name}</title>
      <item identifier="maic-lesson" identifierref="maic-player" isvisible="true">
        <title>{name}</title>
        <adlcp:masteryscore>{mastery}</adlcp:masteryscore>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="maic-player" type="webcontent" adlcp:scormtype="sco" href="{PAGE}">{listed}
    </resource>
  </resources>
</manifest>
"""


def package_bytes(page: str, *, title: str, identifier: str, mastery: int) -> bytes:
    """The zip: the manifest and the page, deflated, with fixed timestamps."""
    body = page.encode("utf-8")
    if len(body) > MAX_PAGE_BYTES:
        raise InputError(f"the player page would be {len(body) / 1e6:.0f} MB, more than a package holds "
                         f"({MAX_PAGE_BYTES / 1e6:.0f} MB): export it without --voice or split the lesson")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in ((MANIFEST, manifest(title, identifier, mastery, [PAGE]).encode("utf-8")), (PAGE, body)):
            info = zipfile.ZipInfo(name, _STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return out.getvalue()
