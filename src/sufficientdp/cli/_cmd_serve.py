"""``sufficientdp serve``: run the collector HTTP service (extra ``service``; docs/collector.md).

uvicorn's access log is off (it would log client addresses and paths); only start-up and errors are logged.
A request's headers, then its body, must each arrive within ``--read-timeout`` seconds (else the connection is
closed, or 408 for a late body); with ``--max-connections-per-client N`` one peer address may hold at most N
connections at once (one more gets 503 ``too_many_connections``; default 0: no limit); on SIGTERM or Ctrl-C the server
stops accepting, gives requests in flight at most :data:`SHUTDOWN_GRACE` seconds, stops the calibration jobs and
closes the database (SQLite: WAL checkpointed and truncated).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections.abc import Callable
from typing import Any

from .._errors import ParameterError
from ._common import bounded_int, emit, positive_int

ADMIN_TOKEN_ENV = "SUFFICIENTDP_ADMIN_TOKEN"
#: Seconds a graceful shutdown waits for requests in flight before cancelling them.
SHUTDOWN_GRACE = 5
#: Seconds an idle keep-alive connection stays open.
KEEP_ALIVE = 5


def _port(text: str) -> int:
    return bounded_int(text, "port", 1, 65535)


def _seconds(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"read-timeout must be a number of seconds in (0, 3600]; got {text!r}") \
            from None
    if not 0 < v <= 3600:  # also refuses nan
        raise argparse.ArgumentTypeError(f"read-timeout must be a number of seconds in (0, 3600]; got {text}")
    return v


def _connections(text: str) -> int:
    from ..service.server import MAX_CONNECTIONS_PER_CLIENT

    return bounded_int(text, "max-connections-per-client", 0, MAX_CONNECTIONS_PER_CLIENT,
                       f"an integer in [0, {MAX_CONNECTIONS_PER_CLIENT}] (0: no limit)")


def _job_limit(option: str) -> Callable[[str], Any]:
    """argparse type for a calibration-job limit: parsed and range-checked against the collector's declared bounds
    (sufficientdp.service.jobs, imported only when the option is given, so start-up stays light); the error is one
    line naming the option, the value and the allowed range."""
    def parse(text: str) -> Any:
        from ..service import jobs

        if option == "calibration-time-limit":
            allowed = f"a number of seconds in (0, {jobs.MAX_TIME_LIMIT:g}]"
            try:
                f = float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{option} must be {allowed}; got {text!r}") from None
            if not 0 < f <= jobs.MAX_TIME_LIMIT:  # also refuses nan
                raise argparse.ArgumentTypeError(f"{option} must be {allowed}; got {text}")
            return f
        lo, hi = {"calibration-workers": (1, jobs.MAX_WORKERS), "calibration-queue": (0, jobs.MAX_QUEUE),
                  "calibration-memory-mb": (jobs.MIN_MEMORY_LIMIT >> 20, jobs.MAX_MEMORY_LIMIT >> 20)}[option]
        return bounded_int(text, option, lo, hi)
    return parse


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add the ``serve`` command."""

    p = sub.add_parser("serve", help="run the collector HTTP service (needs the 'service' extra)")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8000, help="TCP port (default 8000)")
    p.add_argument("--database", required=True,
                   help="sqlite:///path.db, a file path (SQLite) or a postgresql:// URL")
    p.add_argument("--max-body-bytes", type=positive_int("max-body-bytes"), default=1 << 20,
                   help="largest request body in bytes (default 1 MiB)")
    p.add_argument("--read-timeout", type=_seconds, default=30.0,
                   help="seconds within which a request's headers, then its body, must arrive (default 30; a "
                        "late body gets 408, late headers a closed connection)")
    p.add_argument("--max-connections-per-client", type=_connections, default=0,
                   help="most connections one client address may hold open at once; one more gets 503 "
                        "too_many_connections (default 0: no limit; behind a reverse proxy every connection comes "
                        "from the proxy, so limit there instead)")
    # defaults (None): the collector's own (sufficientdp.service.jobs: 1 worker, 8 queued, 600 s, 4096 MiB)
    p.add_argument("--calibration-workers", type=_job_limit("calibration-workers"), default=None,
                   help="calibration jobs run at once, one child process each (default 1, at most 8)")
    p.add_argument("--calibration-queue", type=_job_limit("calibration-queue"), default=None,
                   help="further jobs that may wait; beyond them campaign creation answers 429 (default 8)")
    p.add_argument("--calibration-time-limit", type=_job_limit("calibration-time-limit"), default=None,
                   help="wall-clock seconds one calibration job may take before it is killed and its campaign "
                        "fails with calibration_timeout (default 600)")
    p.add_argument("--calibration-memory-mb", type=_job_limit("calibration-memory-mb"), default=None,
                   help="address-space limit of a calibration job's process in MiB (default 4096)")
    p.add_argument("--reuse-port", action="store_true",
                   help="share --port with other collector processes started with this flag (SO_REUSEPORT, "
                        "Linux: the kernel spreads connections over them; only processes of the same user may "
                        "join). Every guarantee holds across processes on one SQLite file or PostgreSQL database "
                        "(docs/collector.md)")
    p.add_argument("--log-level", choices=("critical", "error", "warning", "info"), default="info",
                   help="server log level (the access log is always off)")
    common(p)
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ImportError as exc:
        raise ImportError("serve needs the 'service' extra: pip install 'sufficientdp[service]'") from exc
    from ..service.app import create_app
    from ..service.server import header_deadline_protocol

    admin = os.environ.get(ADMIN_TOKEN_ENV) or None
    if admin is not None and len(admin) < 16:
        raise ParameterError(f"{ADMIN_TOKEN_ENV} must be at least 16 characters; got {len(admin)}")
    app = create_app(args.database, max_body_bytes=args.max_body_bytes, admin_token=admin,
                     read_timeout=args.read_timeout, release_page=_release_page(),
                     **_job_limits(args))
    url = f"http://{args.host}:{args.port}"
    if args.json:  # one line for scripts that start the collector (no database URL: it may hold a password)

        # admin: "token" (admin calls need the bearer token) or "closed" (no token configured: they answer 403)
        emit({"url": url, "openapi": f"{url}/openapi.json", "admin": "token" if admin is not None else "closed"})
        sys.stdout.flush()
    elif not args.quiet:
        state = ("need the bearer token" if admin is not None else
                 f"are closed (set {ADMIN_TOKEN_ENV} to open them with a token)")
        print(f"sufficientdp collector on {url} (OpenAPI at /openapi.json); admin calls {state}", file=sys.stderr)
    options = dict(host=args.host, port=args.port, access_log=False, log_level=args.log_level, server_header=False,
                   proxy_headers=False, timeout_keep_alive=KEEP_ALIVE, timeout_graceful_shutdown=SHUTDOWN_GRACE,
                   http=header_deadline_protocol(args.read_timeout,
                                                 max_connections_per_client=args.max_connections_per_client or None))
    if not args.reuse_port:
        uvicorn.run(app, **options)
        return 0
    sock = _shared_socket(args.host, args.port)  # (uvicorn.run binds its own socket, without SO_REUSEPORT)
    server = uvicorn.Server(uvicorn.Config(app, **options))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # pragma: no cover - uvicorn handles SIGINT itself
        pass
    finally:
        sock.close()
    if not server.started:  # as uvicorn.run: the server could not start (its log says why)
        raise SystemExit(3)
    return 0


def _shared_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``(host, port)`` with ``SO_REUSEPORT``, for several collector processes on one port.

    Raises:
        ParameterError: the platform has no ``SO_REUSEPORT``.
        OSError: the address cannot be bound (in use by a process without the flag, or not an address here).
    """
    if not hasattr(socket, "SO_REUSEPORT"):
        raise ParameterError("--reuse-port needs SO_REUSEPORT, which this platform does not have")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


def _job_limits(args: argparse.Namespace) -> dict[str, Any]:
    """The calibration-job options given on the command line, as create_app's keyword arguments."""
    out: dict[str, Any] = {}
    for opt, key, scale in (("calibration_workers", "calibration_workers", 1),
                            ("calibration_queue", "calibration_queue", 1),
                            ("calibration_time_limit", "calibration_time_limit", 1),
                            ("calibration_memory_mb", "calibration_memory_limit", 1 << 20)):
        value = getattr(args, opt)
        if value is not None:
            out[key] = value * scale
    return out


def _release_page() -> Any:
    """The report adapter's release page renderer, or None without the ``report`` extra (the collector then
    answers 404 for release pages)."""
    try:
        import jinja2  # noqa: F401
        import matplotlib  # noqa: F401
    except ImportError:
        return None
    from ..report.release import release_page

    return release_page
