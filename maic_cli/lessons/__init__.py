"""Lessons: the lesson model, the player that walks its scenes, quizzes and their grading, grounded answers."""
