"""``maic serve``: one class turn per HTTP request, on this machine's model and keys (serve/).

The model flags are ``maic run``'s (``--model``, ``--api-base``, ``--client``, ``--router``, the
built-in ``local``), the prompt set is ``--prompts``/``--style``, the director ``--director``.  The
token comes from ``MAIC_SERVE_TOKEN``; listening beyond loopback without one is refused (exit 2).
Heavy imports (aiohttp, the engine, the clients) happen when the server starts, not for ``--help``.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from ..errors import InputError
from .errors import check_choice, friendly
from .help_option import MODEL_HELP, TEMPERATURE_HELP


@friendly
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (beyond loopback: MAIC_SERVE_TOKEN "
                             "must be set)."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port to listen on (0: any free one)."),
    model: str = typer.Option(None, "--model", "-m", help=MODEL_HELP),
    api_base: str = typer.Option(None, "--api-base", help="Base URL of an OpenAI-compatible server."),
    client: str = typer.Option("auto", "--client", help="auto, litellm or direct (as maic run)."),
    router: Path = typer.Option(None, "--router", help="A litellm Router config (YAML/JSON) to spread calls "
                                "over several deployments."),
    structured: str = typer.Option("auto", "--structured", help="auto, off, json_schema or json_object."),
    temperature: float = typer.Option(None, "--temperature", min=0, max=2, help=TEMPERATURE_HELP),
    small: bool = typer.Option(False, "--small", help="The model is small: compact prompts."),
    prompts: Path = typer.Option(None, "--prompts", help="A folder of prompt templates overriding the built-in "
                                 "ones (default: $MAIC_HOME/prompts, if it exists)."),
    style: str = typer.Option(None, "--style", help="A built-in teaching style (direct, socratic, worked_example)."),
    director: str = typer.Option(None, "--director", help="Who picks the speakers: llm, rules, hybrid or "
                                 "module:function. Default: what the request's class names, else the model's."),
    agents_dir: list[Path] = typer.Option(None, "--agents-dir", help="Persona folders a request may name by id."),
    max_concurrent: int = typer.Option(None, "--max-concurrent", min=1, max=10_000, help="Turns in flight at "
                                       "once; past it a turn is answered 503 (default 256)."),
    idle_timeout: float = typer.Option(15.0, "--idle-timeout", min=0.1, max=3600, help="Seconds a connection may "
                                       "take to send a request's headers, or its body, or stay idle between "
                                       "requests, before it is closed."),
    heartbeat: float = typer.Option(15.0, "--heartbeat", min=0.1, max=3600, help="Every this many seconds a turn's "
                                    "stream gets a comment line: no proxy's idle timeout cuts a slow model call."),
) -> None:
    """Serve class turns over HTTP: POST /v1/turn (maic), POST /api/chat (OpenMAIC's chat API), GET /healthz,
    GET /metrics."""
    import asyncio
    import logging
    import sys

    from ..chat.setup import chosen_model
    from ..engine.policies import policy_from_flag
    from ..llm.keys import check_key
    from ..llm.spec import ModelSpec
    from ..serve.app import build_app
    from ..serve.limits import MAX_CONCURRENT_TURNS
    from ..serve.server import LogFormatter, check_exposure, serve_forever
    from ..serve.service import TurnService
    from ..store.config import load_settings
    from ..store.personas import load_registry
    from ..store.prompts import load_prompt_set
    from ..untrusted import register_secret
    from .batch_plan import client_pool

    check_choice("--client", client, ("auto", "litellm", "direct"))
    token = os.environ.get("MAIC_SERVE_TOKEN") or None
    register_secret(token)  # redacted wherever text is cleaned for output
    check_exposure(host, token)
    if style is not None:
        from ..store.styles import style_folder

        if prompts is not None:
            raise InputError("--style names a built-in prompt set and --prompts a folder: use one")
        prompts = style_folder(style)
    prompt_set = load_prompt_set(prompts)
    settings = load_settings({"model": model, "api_base": api_base, "small": small or None})
    base_url = api_base or settings.api_base
    spec = ModelSpec.parse(model or chosen_model(settings, None), client=client, router=router is not None,
                           api_base=base_url, small=bool(settings.small))
    if router is None:
        check_key(spec, api_base=base_url)
    policy = policy_from_flag(director) if director is not None else None
    registry = load_registry(agents_dir or [])
    pool = client_pool(api_base=base_url, router_file=router, seed=None, structured=structured,
                       temperature=temperature)
    llm = pool.get(spec)
    service = TurnService(llm, spec, prompts=prompt_set, director=policy, registry=registry.agents,
                          temperature=temperature, max_concurrent=max_concurrent or MAX_CONCURRENT_TURNS)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LogFormatter("%(asctime)s %(name)s %(message)s", token))  # secrets redacted, escapes stripped
    logging.basicConfig(level=logging.INFO, handlers=[handler])

    def ready(url: str) -> None:
        routes = "POST /v1/turn, POST /api/chat"
        typer.echo(f"maic serve: {spec.raw} on {url} ({routes}; token {'on' if token else 'off'})", err=True)

    async def main() -> None:
        try:
            app = build_app(service, token=token, body_timeout=idle_timeout, heartbeat=heartbeat)
            await serve_forever(app, host, port, ready, idle_timeout=idle_timeout)
        finally:
            await pool.aclose()

    asyncio.run(main())
