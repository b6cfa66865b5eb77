"""The terminal: Rich renderables (pure functions of state), the live view, plain output, input."""
