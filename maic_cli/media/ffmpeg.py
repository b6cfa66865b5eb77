"""ffmpeg, found and run with bounded time: the one program the video, ogg and mp3 exports need.

Found as ``$MAIC_FFMPEG``, else the one the ``imageio-ffmpeg`` wheel bundles (the ``video`` extra), else
``ffmpeg`` on the PATH; none is one line saying what to install.  Each run has a time limit and its output is
read bounded; a failure is one :class:`~maic_cli.errors.MaicError` line with ffmpeg's last words, cleaned.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from ..errors import MaicError
from ..untrusted import clean

NEEDED = "ffmpeg is needed: pip install 'maic-cli[video]' (it bundles one), or install ffmpeg"
_DURATION = re.compile(r"Duration: (\d+):(\d\d):(\d\d(?:\.\d+)?)")


def find_ffmpeg() -> str:
    """The ffmpeg to run, or a :class:`MaicError` saying how to get one."""
    configured = os.environ.get("MAIC_FFMPEG")
    if configured:
        found = shutil.which(configured)
        if found is None:
            raise MaicError(f"MAIC_FFMPEG={clean(configured)[:200]}: no such program")
        return found
    try:
        import imageio_ffmpeg

        exe = str(imageio_ffmpeg.get_ffmpeg_exe())
        if exe and Path(exe).exists():
            return exe
    except (ImportError, RuntimeError, OSError):
        pass
    found = shutil.which("ffmpeg")
    if found is None:
        raise MaicError(NEEDED)
    return found


def run(args: list[str], *, seconds: float, what: str) -> str:
    """Run ffmpeg with ``args`` (no terminal, no input), at most ``seconds``; its log (stderr), cut."""
    command = [find_ffmpeg(), "-hide_banner", "-nostdin", "-y", *args]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=seconds, check=False)
    except subprocess.TimeoutExpired:
        raise MaicError(f"{what}: ffmpeg took longer than {seconds:.0f} s and was stopped") from None
    except OSError as exc:
        raise MaicError(f"{what}: ffmpeg could not start: {exc.strerror or exc}") from None
    log = done.stderr.decode("utf-8", errors="replace")[-20000:]
    if done.returncode != 0:
        last = [line for line in log.splitlines() if line.strip()][-1:] or ["no message"]
        raise MaicError(f"{what}: ffmpeg failed: {' '.join(clean(last[0]).split())[:300]}")
    return log


def probe(path: Path, *, seconds: float = 30.0) -> str:
    """What ffmpeg says about a media file (``ffmpeg -i``: its streams and duration), for checks."""
    command = [find_ffmpeg(), "-hide_banner", "-nostdin", "-i", str(path)]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=seconds, check=False)
    except (subprocess.TimeoutExpired, OSError) as exc:
        raise MaicError(f"{path}: ffmpeg could not read it: {exc}") from None
    return done.stderr.decode("utf-8", errors="replace")[-20000:]


def duration_of(log: str) -> float | None:
    """The ``Duration:`` of an ``ffmpeg -i`` log, in seconds."""
    found = _DURATION.search(log)
    if found is None:
        return None
    return int(found.group(1)) * 3600 + int(found.group(2)) * 60 + float(found.group(3))
