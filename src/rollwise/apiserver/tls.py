"""The credentials ``rollwise up`` serves with: a CA, a serving certificate for 127.0.0.1, a bearer token, and
the kubeconfig that ties them together. Kept in the data directory and reused on restart, so a kubeconfig written
once keeps working.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import secrets
import ssl
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["Credentials", "Endpoint", "load_or_create", "merge_kubeconfig", "read_endpoint", "server_ssl_context",
           "write_kubeconfig"]

CONTEXT = "rollwise"


@dataclass(frozen=True, slots=True)
class Credentials:
    ca_pem: bytes
    cert_path: Path
    key_path: Path
    token: str


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _write_private(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    os.chmod(path, 0o600)


def load_or_create(directory: Path) -> Credentials:
    directory.mkdir(parents=True, exist_ok=True)
    ca_path, cert_path, key_path, token_path = (directory / n for n in ("ca.crt", "server.crt", "server.key",
                                                                         "token"))
    if not all(p.exists() for p in (ca_path, cert_path, key_path, token_path)):
        now = datetime.datetime.now(datetime.UTC)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca = (x509.CertificateBuilder().subject_name(_name("rollwise-ca")).issuer_name(_name("rollwise-ca"))
              .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(
                  days=3650))
              .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
              .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                           content_commitment=False, key_encipherment=False, data_encipherment=False,
                                           key_agreement=False, encipher_only=False, decipher_only=False),
                             critical=True)
              .sign(ca_key, hashes.SHA256()))
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder().subject_name(_name("rollwise-apiserver")).issuer_name(ca.subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(
                    days=3650))
                .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                            x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                               critical=False)
                .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                .sign(ca_key, hashes.SHA256()))
        ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_private(key_path, key.private_bytes(serialization.Encoding.PEM,
                                                   serialization.PrivateFormat.PKCS8,
                                                   serialization.NoEncryption()))
        _write_private(token_path, secrets.token_urlsafe(32).encode())
    return Credentials(ca_pem=ca_path.read_bytes(), cert_path=cert_path, key_path=key_path,
                       token=token_path.read_text().strip())


def server_ssl_context(creds: Credentials) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(creds.cert_path, creds.key_path)
    return ctx


def _kubeconfig(url: str, creds: Credentials) -> dict[str, object]:
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": CONTEXT, "preferences": {},
        "clusters": [{"name": CONTEXT, "cluster": {
            "server": url, "certificate-authority-data": base64.b64encode(creds.ca_pem).decode()}}],
        "users": [{"name": CONTEXT, "user": {"token": creds.token}}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": "default"}}],
    }


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a kubeconfig ``up`` wrote points, for a client that speaks HTTP itself (a test's or a benchmark's raw
    watch): host, port, bearer token and a TLS context that trusts the kubeconfig's CA."""

    host: str
    port: int
    token: str
    tls: ssl.SSLContext


def read_endpoint(path: Path) -> Endpoint:
    """The first cluster and user of a kubeconfig written by ``write_kubeconfig``."""
    config = yaml.safe_load(path.read_text())
    cluster = config["clusters"][0]["cluster"]
    server = urlsplit(cluster["server"])
    tls = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    return Endpoint(host=server.hostname or "127.0.0.1", port=server.port or 443,
                    token=config["users"][0]["user"]["token"], tls=tls)


def write_kubeconfig(path: Path, url: str, creds: Credentials) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_private(path, yaml.safe_dump(_kubeconfig(url, creds), sort_keys=False).encode())


def merge_kubeconfig(path: Path, url: str, creds: Credentials) -> None:
    """Add (or replace) the ``rollwise`` cluster, user and context in an existing kubeconfig; keep the rest."""
    ours = _kubeconfig(url, creds)
    current: dict[str, object] = {}
    if path.exists():
        loaded = yaml.safe_load(path.read_text()) or {}
        current = loaded if isinstance(loaded, dict) else {}
    for section in ("clusters", "users", "contexts"):
        existing = current.get(section)
        entries = [e for e in existing if isinstance(e, dict) and e.get("name") != CONTEXT] \
            if isinstance(existing, list) else []
        mine = ours[section]
        assert isinstance(mine, list)
        current[section] = entries + mine
    current.setdefault("apiVersion", "v1")
    current.setdefault("kind", "Config")
    current.setdefault("current-context", CONTEXT)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_private(path, yaml.safe_dump(current, sort_keys=False).encode())
