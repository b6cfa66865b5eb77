"""maic serve."""
