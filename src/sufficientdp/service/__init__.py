"""The collector HTTP service (an adapter: FastAPI + SQLite/PostgreSQL; the math is in the core).

Needs the ``service`` extra (fastapi, uvicorn, httpx, psycopg[binary], cryptography). Build the ASGI app with
:func:`create_app` and serve it with ``sufficientdp serve`` (docs/collector.md).
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def create_app(database_url: str, **kwargs: Any) -> Any:
    """Build the collector's FastAPI app (see :func:`sufficientdp.service.app.create_app`).

    Raises:
        ImportError: the ``service`` extra is not installed.
    """
    from .app import create_app as _create_app

    return _create_app(database_url, **kwargs)
