"""A TCP proxy in front of the web table's server that can make the open events streams go
silent without closing them: what a NAT or a proxy that dropped a connection does to it (no FIN,
no RST; nothing comes any more, and nothing sent arrives). New connections are forwarded as
before, so the page can open another stream.

It can also end streams: the open ones closed, and each new one answered 200 and closed at once,
before anything of it is sent (what a proxy that buffers or cuts long answers does)."""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import urlsplit

METHODS = {b"GET", b"POST", b"PUT", b"DELETE", b"HEAD", b"OPTIONS", b"PATCH"}
# An events stream's answer with nothing in it: the connection's close ends it.
EMPTY_STREAM = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
    b"Connection: close\r\n\r\n"
)


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
        self.ending = False  # each new stream is answered empty, and closed (end_streams)
        self.ended_streams = 0  # how many were

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

    def end_streams(self, *, from_now: bool = True) -> int:
        """Close the connections that carry an events stream; with ``from_now``, every stream
        asked for after this is answered 200 and closed at once, until ``from_now=False``.
        Returns how many were open."""
        with self.lock:
            self.ending = from_now
            streams = [k for k in self.links if k.stream and not k.silent and not k.ended]
            for link in streams:
                link.ended = True
                for sock in (link.client, link.server):
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
        return len(streams)

    def answer_empty(self, link: Link) -> None:
        """Answer the stream ``link`` asks for with nothing, then close it both ways."""
        with self.lock:
            self.ended_streams += 1
            link.ended = True
        with contextlib.suppress(OSError):
            link.client.sendall(EMPTY_STREAM)
        for sock in (link.client, link.server):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

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
                    if link.stream and self.ending:
                        self.answer_empty(link)
                        return
                if not link.silent:
                    sink.sendall(data)
        # An end seen on a silenced link is not passed on either: the other side never hears it.
        link.ended = True
        if not link.silent:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)
