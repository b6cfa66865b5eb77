"""Authoring lessons with a model: generation, one scene again, outlines, fixes and lint."""
