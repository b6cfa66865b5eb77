"""Files: personas, scenarios, sessions, transcripts, and where user data lives."""
