"""Lesson formats: a lesson read from and written to decks (pptx), notes (Markdown), handouts (PDF), OpenMAIC
classrooms; and written as a web player in one page (``player``, its voice track ``player_voice``, its script and
style in ``player_assets/``) and as the SCORM 1.2 package an LMS imports (``scorm``)."""
