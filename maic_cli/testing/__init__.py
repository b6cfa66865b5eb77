"""Test helpers that ship with maic: a loopback OpenAI-compatible server, a headless browser check."""
