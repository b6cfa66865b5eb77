"""Audio, captions and video of a class or a lesson: one room the replay, the lesson export and the batch share."""
