"""Reading what a model wrote: the streamed reply parser, JSON replies, cleaning, speech and junk."""
