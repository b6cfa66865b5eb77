"""The built-in prompt set: Jinja2 templates (``*.j2``) and snippets (``*.md``) shipped as package data.

Every text the class sends a model lives here: the director's prompt, an agent's
system prompt and per-turn context (full and compact), the role and whiteboard
guidelines, and shared snippets (speech rules, output format, examples).  A user
overrides any of them by the same relative path (``$MAIC_HOME/prompts/`` or
``--prompts DIR``, see ``store/prompts.py``); ``engine/prompt_set.py`` renders them in
Jinja2's sandbox.  ``builtin.py`` only reads this package's files, through importlib.resources,
so it works from a wheel, a zip or a source checkout alike.
"""
