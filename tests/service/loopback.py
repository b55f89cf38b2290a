"""uvicorn serving an app on 127.0.0.1 at a free port, in a thread, for the service tests (one copy)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (for a server started in another process)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LoopbackServer:
    """Context manager: the socket is bound here (no race for the port); ``http`` is uvicorn's protocol class or
    name ("auto" by default); ``port`` and ``url`` say where it listens."""

    def __init__(self, app: Any, http: Any = "auto") -> None:
        import uvicorn

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, access_log=False, log_config=None,
                                lifespan="off", timeout_graceful_shutdown=2, http=http)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()
