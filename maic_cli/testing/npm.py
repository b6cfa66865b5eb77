"""npm packages a test needs (a SCORM runtime, the SCORM schemas), fetched once into a cache folder.

``npm pack NAME@VERSION`` downloads the package's own tarball (no dependencies, no install scripts run) into
``$MAIC_TEST_CACHE/npm`` (default ``~/.cache/maic-tests/npm``); it is unpacked there and reused by every later
run.  Where npm is missing or the registry cannot be reached, :func:`npm_package` raises :class:`Unavailable`
with the reason, and the test skips saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path


class Unavailable(RuntimeError):
    """The package cannot be had here (no npm, no registry)."""


def cache_dir() -> Path:
    root = os.environ.get("MAIC_TEST_CACHE") or str(Path.home() / ".cache" / "maic-tests")
    return Path(root) / "npm"


def npm_package(name: str, version: str, *, seconds: float = 240.0) -> Path:
    """The unpacked package folder of ``name@version`` (its ``package/`` contents)."""
    folder = cache_dir() / f"{name.replace('/', '+')}-{version}"
    if (folder / "package.json").is_file():
        return folder
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm is not installed (Debian: apt-get install npm; .ci/run installs it as root)")
    scratch = cache_dir() / f".{folder.name}.partial"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    try:
        done = subprocess.run([npm, "pack", f"{name}@{version}", "--silent", "--pack-destination", str(scratch)],
                              cwd=scratch, stdin=subprocess.DEVNULL, capture_output=True, timeout=seconds,
                              check=False)
        tarballs = sorted(scratch.glob("*.tgz"))
        if done.returncode != 0 or not tarballs:
            last = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise Unavailable(f"npm pack {name}@{version} failed: {last[0][:200]}")
        with tarfile.open(tarballs[0]) as archive:
            archive.extractall(scratch / "x", filter="data")
        shutil.rmtree(folder, ignore_errors=True)
        (scratch / "x" / "package").rename(folder)
    except subprocess.TimeoutExpired:
        raise Unavailable(f"npm pack {name}@{version} took longer than {seconds:.0f} s") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return folder
