"""The terminal class: the chat loop, lesson playback, slash commands, memory, and replay."""
