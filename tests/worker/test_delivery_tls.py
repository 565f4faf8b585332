"""A webhook delivery over https: the receiver's certificate is verified for the URL's host
(SNI and Host as the URL names them), though the connection goes to the address the URL
policy approved, not to a name resolved again."""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from service.api.webhook_urls import Target, allowed_hosts, target
from service.worker import deliveries


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for localhost and 127.0.0.1, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture()
def receiver(tmp_path: Path) -> Iterator[tuple[int, Path, list[tuple[str, str, bytes]]]]:
    """An https receiver on 127.0.0.1: its port, its certificate, what it was sent."""
    cert, key = self_signed(tmp_path)
    got: list[tuple[str, str, bytes]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            got.append((self.path, self.headers.get("Host", ""), body))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], cert, got
    finally:
        server.shutdown()
        server.server_close()


def soon() -> float:
    """An attempt's deadline: as long from now as the sender gives one."""
    return time.monotonic() + deliveries.ATTEMPT_SECONDS


def approved(url: str) -> Target:
    found = target(url, allowed_hosts("localhost,127.0.0.1"), soon(), "ann")
    assert isinstance(found, Target), found
    return found


def test_an_https_delivery_verifies_the_receivers_certificate(
    receiver: tuple[int, Path, list[tuple[str, str, bytes]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    port, cert, got = receiver
    where = approved(f"https://localhost:{port}/turns?player=ann")
    with pytest.raises(ssl.SSLCertVerificationError):  # not signed by a CA of the bundle
        deliveries.post(where, b"{}", {"content-type": "application/json"}, soon())
    assert got == []
    monkeypatch.setattr(deliveries, "TLS", ssl.create_default_context(cafile=str(cert)))
    assert deliveries.post(where, b'{"n": 1}', {"content-type": "application/json"}, soon()) == 204
    assert deliveries.post(approved(f"https://127.0.0.1:{port}/x"), b"{}", {}, soon()) == 204
    assert got == [
        ("/turns?player=ann", f"localhost:{port}", b'{"n": 1}'),
        ("/x", f"127.0.0.1:{port}", b"{}"),
    ]


def test_a_path_outside_ascii_is_sent_percent_encoded(
    receiver: tuple[int, Path, list[tuple[str, str, bytes]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A URL the policy accepts may carry a space or a letter outside ASCII in its path, as
    requests sent them (quoted). http.client refused the first (an attempt lost each time) and
    raised UnicodeEncodeError for the second, which ended the sending thread: the delivery was
    neither sent nor given up, taken again each time its lease ran out."""
    port, cert, got = receiver
    monkeypatch.setattr(deliveries, "TLS", ssl.create_default_context(cafile=str(cert)))
    where = approved(f"https://localhost:{port}/équipe/a b?who=zoë&x=%2F")
    assert deliveries.post(where, b"{}", {}, soon()) == 204
    assert got[0][0] == "/%C3%A9quipe/a%20b?who=zo%C3%AB&x=%2F"
