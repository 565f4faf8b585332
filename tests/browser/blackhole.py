"""A TCP proxy in front of the web table's server that can make the open events streams go
silent without closing them: what a NAT or a proxy that dropped a connection does to it (no FIN,
no RST; nothing comes any more, and nothing sent arrives). New connections are forwarded as
before, so the page can open another stream."""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import urlsplit

METHODS = {b"GET", b"POST", b"PUT", b"DELETE", b"HEAD", b"OPTIONS", b"PATCH"}


@dataclass
class Link:
    """One client connection and its own connection to the server."""

    client: socket.socket
    server: socket.socket
    stream: bool = False  # it carries an events stream (GET .../events? as text/event-stream)
    ended: bool = False  # either side closed it
    silent: bool = False  # nothing is forwarded any more, either way, and nothing is closed


class BlackHole:
    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.links: list[Link] = []
        self.lock = threading.Lock()
        self.closed = False

    def __enter__(self) -> BlackHole:
        threading.Thread(target=self.accept, daemon=True).start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.closed = True
        self.listener.close()
        with self.lock:
            for link in self.links:
                for sock in (link.client, link.server):
                    sock.close()

    def silence_streams(self) -> int:
        """From now on nothing passes on the connections that carry an events stream; returns
        how many there were."""
        with self.lock:
            streams = [k for k in self.links if k.stream and not k.silent and not k.ended]
            for link in streams:
                link.silent = True
        return len(streams)

    def accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
                server = socket.create_connection(self.upstream)
            except OSError:
                return
            link = Link(client, server)
            with self.lock:
                self.links.append(link)
            threading.Thread(
                target=self.pump, args=(link, client, server, True), daemon=True
            ).start()
            threading.Thread(
                target=self.pump, args=(link, server, client, False), daemon=True
            ).start()

    def pump(self, link: Link, source: socket.socket, sink: socket.socket, asks: bool) -> None:
        """Forward ``source`` to ``sink``; ``asks``: the client's side, whose request lines say
        which connection carries a stream."""
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                if asks and data.split(b" ", 1)[0] in METHODS:  # a request (connections are reused)
                    line = data.split(b"\r\n", 1)[0]
                    link.stream = b"/events?" in line and b"text/event-stream" in data.lower()
                if not link.silent:
                    sink.sendall(data)
        # An end seen on a silenced link is not passed on either: the other side never hears it.
        link.ended = True
        if not link.silent:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)
