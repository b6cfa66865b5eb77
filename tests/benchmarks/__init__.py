"""Benchmarks: scripts run by hand (``python tests/benchmarks/NAME.py``), not collected by pytest."""
