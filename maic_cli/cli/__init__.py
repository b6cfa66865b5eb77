"""The command line: Typer commands that wire engine, llm, store and ui together."""
