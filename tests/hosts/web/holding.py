"""A gate for the test recipe's ``hold: PORT`` calls: a run that stays ``running`` until the
test lets it go (for the sync tests; ``server.gate`` is the async one)."""

from __future__ import annotations

import socket
import threading

__all__ = ["Gate"]


class Gate:
    """A local port whose connections wait until :meth:`release` (the test recipe's
    ``hold: PORT`` calls): a run that stays ``running`` as long as the test needs."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port: int = self.listener.getsockname()[1]
        self.released = threading.Event()
        self.held = threading.Event()
        self.closed = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.held.set()
            threading.Thread(target=self._let_go, args=(conn,), daemon=True).start()

    def _let_go(self, conn: socket.socket) -> None:
        with conn:
            if self.released.wait(60):
                conn.sendall(b"go")

    def release(self) -> None:
        self.released.set()

    def close(self) -> None:
        self.release()
        self.closed = True
        self.thread.join(5)
        self.listener.close()
