"""A socketserver (http.server's ThreadingHTTPServer) served from a thread for a `with` block."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from socketserver import BaseServer
from typing import Iterator, TypeVar

__all__ = ["POLL_SECONDS", "served"]

_Server = TypeVar("_Server", bound=BaseServer)

# socketserver notices shutdown() only between polls: its default 0.5 s poll made every
# stop of a test's HTTP server wait up to half a second for nothing.
POLL_SECONDS = 0.02


@contextmanager
def served(server: _Server) -> Iterator[_Server]:
    """Serve `server` from a daemon thread for the `with` block, then shut it down and close its socket."""
    threading.Thread(target=server.serve_forever, args=(POLL_SECONDS,), daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
