"""A TCP link between the service and a real Redis that can hold one command back until its
sender gave up waiting (its socket timeout) and closed the connection, then deliver it: a
command that reaches a slow Redis late, and is run there after its client answered 503. Or
drop it: a command lost with its connection, never run. Or deliver it at once and lose its
reply: the connection breaks after Redis ran the command, before its sender heard the answer.

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
        self.lose = b""  # the marker of a command whose reply is to be lost, once
        self.lost = threading.Event()  # a reply was lost (its connection broken)
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

    def lose_reply_of_next(self, marker: bytes) -> None:
        """Deliver the next command whose bytes contain ``marker``, then break its connection
        instead of passing Redis's reply back."""
        self.lost.clear()
        self.lose = marker

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
            losing = threading.Event()  # this connection's next reply is to be lost
            args = (upstream, client, losing)
            threading.Thread(target=self._down, args=args, daemon=True).start()
            threading.Thread(target=self._up, args=(client, upstream, losing), daemon=True).start()

    def _up(self, client: socket.socket, upstream: socket.socket, losing: threading.Event) -> None:
        """The client's bytes to Redis; a held command goes once the client has closed."""
        held = b""
        with closing(client, upstream):
            for data in chunks(client):
                if held or (self.hold is not None and self.hold in data):
                    self.hold = None
                    held += data
                    self.held.set()
                    continue
                if self.lose and self.lose in data:
                    self.lose = b""
                    losing.set()
                upstream.sendall(data)
            if held and self.deliver:  # the sender gave up: its command reaches Redis now
                time.sleep(self.late)
                upstream.sendall(held)
                self.delivered.set()

    def _down(
        self, upstream: socket.socket, client: socket.socket, losing: threading.Event
    ) -> None:
        with closing(client, upstream):
            for data in chunks(upstream):
                if losing.is_set():  # Redis ran the command: its answer never arrives
                    self.lost.set()  # first: the sender hears of it at the shutdown
                    for sock in (client, upstream):
                        with contextlib.suppress(OSError):
                            sock.shutdown(socket.SHUT_RDWR)
                    return
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
