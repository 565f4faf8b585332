"""A TCP link between the service and a real Redis that can hold one command back until its
sender gave up waiting (its socket timeout) and closed the connection, then deliver it: a
command that reaches a slow Redis late, and is run there after its client answered 503. Or
drop it: a command lost with its connection, never run.

Nothing of Redis is imitated: bytes pass through unchanged, only later."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Self

from devstack.redis_server import free_port


class LateLink:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = free_port()
        self.hold: bytes | None = None  # the marker of the command to hold back, once
        self.deliver = True  # ... and then deliver (else drop) once its sender has left
        self.late = 0.0  # ... this many seconds after its sender left
        self.held = threading.Event()  # a command was held back
        self.delivered = threading.Event()  # ... and delivered after its sender left
        self._server = socket.create_server(("127.0.0.1", self.port))
        self._stop = threading.Event()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def hold_next(self, marker: bytes, *, deliver: bool = True, late: float = 0.0) -> None:
        """Hold back the next command whose bytes contain ``marker``; ``late`` seconds after
        its sender closed the connection, deliver it to Redis, or drop it."""
        self.held.clear()
        self.delivered.clear()
        self.deliver = deliver
        self.late = late
        self.hold = marker

    def __enter__(self) -> Self:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._server.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            threading.Thread(target=self._down, args=(upstream, client), daemon=True).start()
            threading.Thread(target=self._up, args=(client, upstream), daemon=True).start()

    def _up(self, client: socket.socket, upstream: socket.socket) -> None:
        """The client's bytes to Redis; a held command goes once the client has closed."""
        held = b""
        with closing(client, upstream):
            for data in chunks(client):
                if held or (self.hold is not None and self.hold in data):
                    self.hold = None
                    held += data
                    self.held.set()
                    continue
                upstream.sendall(data)
            if held and self.deliver:  # the sender gave up: its command reaches Redis now
                time.sleep(self.late)
                upstream.sendall(held)
                self.delivered.set()

    def _down(self, upstream: socket.socket, client: socket.socket) -> None:
        with closing(client, upstream):
            for data in chunks(upstream):
                client.sendall(data)


def chunks(sock: socket.socket) -> Iterator[bytes]:
    while True:
        try:
            data = sock.recv(65536)
        except OSError:
            return
        if not data:
            return
        yield data


@contextlib.contextmanager
def closing(*socks: socket.socket) -> Iterator[None]:
    try:
        yield
    except OSError:
        pass
    finally:
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)
