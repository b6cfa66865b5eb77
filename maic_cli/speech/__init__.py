"""The speech port and its engines: text in, audio out (a room beside ``llm``; the engine never imports it)."""
