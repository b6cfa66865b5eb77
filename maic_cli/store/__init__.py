"""Files: personas, lessons, scenarios, sessions, transcripts, learners, settings, and where user data lives."""
