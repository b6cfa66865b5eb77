"""Lesson formats: a lesson read from and written to decks (pptx), notes (Markdown), handouts (PDF), OpenMAIC
classrooms."""
