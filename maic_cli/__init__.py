"""maic: a command-line classroom simulator (teacher, assistant and students as AI agents)."""

__version__ = "0.1.0"
