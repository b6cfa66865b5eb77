"""Benchmark: cleaning untrusted text stays linear on hostile shapes.

Run:  python tests/benchmarks/clean_bench.py

For each shape (plain text, long CSI parameters, ESC ] repeated, ZWJ chains, tag runs,
lone ESCs, mixed text streamed in 7-character pieces) prints milliseconds at 100k and
1M characters and the growth ratio.  Target: ratio <= 15 for a 10x longer input
(linear, with slack for noise).  Exits 1 if a shape misses it.
"""

from __future__ import annotations

import sys
import time

from maic_cli.untrusted import StreamCleaner, clean


def streamed(text: str) -> str:
    cleaner = StreamCleaner()
    return "".join(cleaner.feed(text[i:i + 7]) for i in range(0, len(text), 7)) + cleaner.flush()


SHAPES = {
    "plain text": lambda n: ("hello world " * n)[:n],
    "CSI parameters": lambda n: "\x1b[" + "1;" * (n // 2),
    "ESC ] repeated": lambda n: "\x1b]" * (n // 2),
    "ZWJ chain": lambda n: "\U0001f469\u200d" * (n // 2),
    "tag run": lambda n: "\U0001f3f4" + "\U000e0067" * n,
    "lone ESC": lambda n: "\x1b" * n,
    "mixed, streamed": lambda n: ("hi \U0001f469\u200d\U0001f3eb \x1b[31mred\x1b[0m " * n)[:n],
}


def elapsed_ms(shape: str, size: int) -> float:
    text = SHAPES[shape](size)
    run = streamed if "streamed" in shape else clean
    start = time.perf_counter()
    run(text)
    return (time.perf_counter() - start) * 1000


def main() -> int:
    failed = 0
    for shape in SHAPES:
        small, large = elapsed_ms(shape, 100_000), elapsed_ms(shape, 1_000_000)
        ratio = large / max(small, 0.01)
        ok = ratio <= 15
        failed += not ok
        print(f"{shape:16} 100k {small:8.1f} ms   1M {large:8.1f} ms   x{ratio:5.1f}  {'ok' if ok else 'SLOW'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
