"""The server's counters in Prometheus' text format (``GET /metrics``), kept in memory per instance.

``maic_turns_total`` (turns answered, by outcome: ok, error, cancelled, busy), ``maic_turns_in_flight``,
``maic_request_errors_total`` (requests refused before a turn, by status), ``maic_model_tokens_total``
(by kind: prompt, completion) and ``maic_turn_duration_seconds`` (a histogram).  No client library: the
format is a few lines of text (https://prometheus.io/docs/instrumenting/exposition_formats/).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


@dataclass
class Metrics:
    turns: Counter[str] = field(default_factory=Counter)  # by outcome
    request_errors: Counter[int] = field(default_factory=Counter)  # by HTTP status
    tokens: Counter[str] = field(default_factory=Counter)  # prompt, completion
    in_flight: int = 0
    duration_counts: list[int] = field(default_factory=lambda: [0] * len(DURATION_BUCKETS))
    duration_sum: float = 0.0
    duration_count: int = 0

    def turn_finished(self, outcome: str, seconds: float, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        self.turns[outcome] += 1
        self.tokens["prompt"] += prompt_tokens
        self.tokens["completion"] += completion_tokens
        self.duration_sum += seconds
        self.duration_count += 1
        for i, bound in enumerate(DURATION_BUCKETS):
            if seconds <= bound:
                self.duration_counts[i] += 1

    def refused(self, status: int) -> None:
        self.request_errors[status] += 1

    def render(self) -> str:
        lines = ["# HELP maic_turns_total Turns answered, by outcome.", "# TYPE maic_turns_total counter"]
        for outcome in sorted({"ok", "error", "cancelled", "busy", *self.turns}):
            lines.append(f'maic_turns_total{{outcome="{outcome}"}} {self.turns[outcome]}')
        lines += ["# HELP maic_turns_in_flight Turns running now.", "# TYPE maic_turns_in_flight gauge",
                  f"maic_turns_in_flight {self.in_flight}",
                  "# HELP maic_request_errors_total Requests refused before a turn ran, by status.",
                  "# TYPE maic_request_errors_total counter"]
        for status in sorted(self.request_errors):
            lines.append(f'maic_request_errors_total{{status="{status}"}} {self.request_errors[status]}')
        lines += ["# HELP maic_model_tokens_total Model tokens used by turns, by kind.",
                  "# TYPE maic_model_tokens_total counter"]
        for kind in ("prompt", "completion"):
            lines.append(f'maic_model_tokens_total{{kind="{kind}"}} {self.tokens[kind]}')
        lines += ["# HELP maic_turn_duration_seconds Time from a turn's request to its done event.",
                  "# TYPE maic_turn_duration_seconds histogram"]
        for bound, count in zip(DURATION_BUCKETS, self.duration_counts, strict=True):
            lines.append(f'maic_turn_duration_seconds_bucket{{le="{bound}"}} {count}')
        lines += [f'maic_turn_duration_seconds_bucket{{le="+Inf"}} {self.duration_count}',
                  f"maic_turn_duration_seconds_sum {self.duration_sum:.6f}",
                  f"maic_turn_duration_seconds_count {self.duration_count}"]
        return "\n".join(lines) + "\n"
