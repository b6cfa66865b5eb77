"""``maic serve``: the stateless turn over HTTP (one director → agent cycle per request), its limits,
metrics and the thin client that plays a class's turns on a server (``client``)."""
