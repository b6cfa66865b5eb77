"""The garbage collector while a batch plays and its report is written.

A batch's runs and its report allocate fast and make few reference cycles (a report of 1,000 runs
makes ~1.5 million objects, nearly none in cycles), so Python's young generation, swept every 700
new objects, costs more than it finds (1,000 runs at -j 50 spent 0.8 s of a 15 s batch in ~700
passes): it is swept every :data:`YOUNG_OBJECTS` instead, and restored after.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_OBJECTS = 20_000


@contextmanager
def fewer_collections(young_objects: int = YOUNG_OBJECTS) -> Iterator[None]:
    """The young generation swept every ``young_objects`` new objects; the old settings restored after."""
    thresholds = gc.get_threshold()
    gc.set_threshold(young_objects, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
