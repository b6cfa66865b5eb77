"""Benchmark: the streaming parser on replies of N items, streamed in ~4-character chunks.

Run:  python tests/benchmarks/parser_bench.py

Prints, for N = 5, 20, 50, 200, 1000: total milliseconds, microseconds per chunk,
and whether every text character and every action came out exactly once; then
the fitted growth exponent (slope of log time against log N).  Targets on the
project machine (2 cores): exponent <= 1.15, N=50 <= 10 ms, N=1000 <= 200 ms,
100% of text and actions.  Exits 1 if a target is missed.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time

from maic_cli.replies.parser import StructuredStreamParser
from maic_cli.replies.parser_items import ActionItem, TextItem

SIZES = [5, 20, 50, 200, 1000]
TARGETS_MS = {50: 10.0, 1000: 200.0}
MAX_EXPONENT = 1.15
REPEATS = 5


def synthetic_reply(n: int, rnd: random.Random) -> tuple[str, str, list[tuple[str, dict]]]:
    items: list[dict] = []
    for i in range(n):
        if i % 2 == 0:
            items.append({"type": "text", "content": (
                f"Step {i}: the set {{x | x > {i}}} and the list [a, b] stay text; "
                f"\"quoted\" words, é, 中文 and 😀 too. ")})
        else:
            kind = rnd.choice(["latex", "table", "chart"])
            params: dict = {"latex": f"\\frac{{{i}}}{{2}} ]}}", "x": i}
            if kind == "table":
                params = {"data": [["n", "n^2"], [str(i), str(i * i)], ["]", "}"]]}
            elif kind == "chart":
                params = {"chartType": "bar", "labels": ["a", "b"],
                          "series": [{"name": f"s{i}", "values": [i, i + 1]}]}
            items.append({"type": "action", "name": f"wb_draw_{kind}", "params": params})
    text = "".join(item["content"] for item in items if item["type"] == "text")
    actions = [(item["name"], item["params"]) for item in items if item["type"] == "action"]
    return "```json\n" + json.dumps(items, ensure_ascii=False) + "\n```", text, actions


def chunks_of(reply: str, rnd: random.Random) -> list[str]:
    out, pos = [], 0
    while pos < len(reply):
        step = rnd.randint(2, 6)  # ~4 characters on average
        out.append(reply[pos:pos + step])
        pos += step
    return out


def run_once(chunks: list[str]) -> tuple[float, str, list[tuple[str, dict]]]:
    parser = StructuredStreamParser()
    items = []
    start = time.perf_counter()
    for chunk in chunks:
        items.extend(parser.feed(chunk))
    items.extend(parser.finish())
    elapsed = time.perf_counter() - start
    text = "".join(i.content for i in items if isinstance(i, TextItem))
    actions = [(i.name, i.params) for i in items if isinstance(i, ActionItem)]
    return elapsed, text, actions


def main() -> int:
    rnd = random.Random(42)
    ok = True
    points = []
    print(f"{'N':>6} {'chars':>8} {'chunks':>7} {'total ms':>9} {'us/chunk':>9}  complete")
    for n in SIZES:
        reply, want_text, want_actions = synthetic_reply(n, rnd)
        chunks = chunks_of(reply, rnd)
        best = math.inf
        complete = True
        for _ in range(REPEATS):
            elapsed, text, actions = run_once(chunks)
            best = min(best, elapsed)
            complete = complete and text == want_text and actions == want_actions
        ms = best * 1000
        points.append((n, best))
        print(f"{n:>6} {len(reply):>8} {len(chunks):>7} {ms:>9.2f} {best / len(chunks) * 1e6:>9.2f}  "
              f"{'100%' if complete else 'MISMATCH'}")
        ok = ok and complete
        if n in TARGETS_MS and ms > TARGETS_MS[n]:
            print(f"  target missed: N={n} took {ms:.1f} ms > {TARGETS_MS[n]} ms")
            ok = False
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mean_x) ** 2 for x in xs)
    print(f"fitted growth exponent: {slope:.3f} (target <= {MAX_EXPONENT})")
    ok = ok and slope <= MAX_EXPONENT
    print("all targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
