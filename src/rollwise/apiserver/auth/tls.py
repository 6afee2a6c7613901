"""The credentials ``rollwise up`` serves with: a CA, a serving certificate for 127.0.0.1, a bearer token, an admin
client certificate, the service-account signing key, and the kubeconfig that ties them together. Kept in the data
directory and reused on restart, so a kubeconfig written once keeps working (a directory from a version that did not
keep the CA's key gets a new CA once, and keeps its token).

The server asks for a client certificate and accepts one the CA signed (kube-apiserver's ``--client-ca-file``): its
common name is the user and its organizations the groups (``sign_client_certificate``). The kubeconfig's user
carries both the token and an admin certificate (``kubernetes-admin`` in ``system:masters``) as kind and kubeadm
write one.
"""

from __future__ import annotations

import base64
import dataclasses
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

__all__ = ["ADMIN_GROUP", "ADMIN_USER", "Credentials", "Endpoint", "load_or_create", "merge_kubeconfig",
           "read_endpoint", "server_ssl_context", "sign_client_certificate", "write_kubeconfig"]

CONTEXT = "rollwise"
ADMIN_USER, ADMIN_GROUP = "kubernetes-admin", "system:masters"  # what kind's and kubeadm's admin.conf name
_DAY = datetime.timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Credentials:
    ca_pem: bytes
    cert_path: Path
    key_path: Path
    token: str
    ca_key_path: Path | None = None
    client_cert_pem: bytes = b""
    client_key_pem: bytes = b""
    sa_key_path: Path | None = None


def _name(cn: str, *organizations: str) -> x509.Name:
    return x509.Name([*(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def sign_client_certificate(creds: Credentials, user: str, groups: tuple[str, ...] = (), *,
                            days: int = 3650) -> tuple[bytes, bytes]:
    """A client certificate the server accepts, for ``user`` in ``groups`` (CN and O): (certificate, key) in PEM."""
    if creds.ca_key_path is None:
        raise ValueError("these credentials keep no CA key to sign with")
    ca_key = serialization.load_pem_private_key(creds.ca_key_path.read_bytes(), password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    ca = x509.load_pem_x509_certificate(creds.ca_pem)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(_name(user, *groups)).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + days * _DAY)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def _write_private(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    os.chmod(path, 0o600)


def load_or_create(directory: Path) -> Credentials:
    directory.mkdir(parents=True, exist_ok=True)
    ca_path, ca_key_path, cert_path, key_path, token_path, client_cert_path, client_key_path, sa_key_path = (
        directory / n for n in ("ca.crt", "ca.key", "server.crt", "server.key", "token", "admin.crt", "admin.key",
                                "sa.key"))
    if not all(p.exists() for p in (ca_path, ca_key_path, cert_path, key_path)):
        now = datetime.datetime.now(datetime.UTC)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca = (x509.CertificateBuilder().subject_name(_name("rollwise-ca")).issuer_name(_name("rollwise-ca"))
              .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + 3650 * _DAY)
              .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
              .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                           content_commitment=False, key_encipherment=False, data_encipherment=False,
                                           key_agreement=False, encipher_only=False, decipher_only=False),
                             critical=True)
              .sign(ca_key, hashes.SHA256()))
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder().subject_name(_name("rollwise-apiserver")).issuer_name(ca.subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + 3650 * _DAY)
                .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                            x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                               critical=False)
                .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                .sign(ca_key, hashes.SHA256()))
        ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
        _write_private(ca_key_path, _pem_key(ca_key))
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_private(key_path, _pem_key(key))
        client_cert_path.unlink(missing_ok=True)  # signed by the CA replaced, if any
    if not token_path.exists():
        _write_private(token_path, secrets.token_urlsafe(32).encode())
    if not sa_key_path.exists():
        _write_private(sa_key_path, _pem_key(ec.generate_private_key(ec.SECP256R1())))
    creds = Credentials(ca_pem=ca_path.read_bytes(), cert_path=cert_path, key_path=key_path,
                        token=token_path.read_text().strip(), ca_key_path=ca_key_path, sa_key_path=sa_key_path)
    if not (client_cert_path.exists() and client_key_path.exists()):
        cert_pem, key_pem = sign_client_certificate(creds, ADMIN_USER, (ADMIN_GROUP,))
        client_cert_path.write_bytes(cert_pem)
        _write_private(client_key_path, key_pem)
    return dataclasses.replace(creds, client_cert_pem=client_cert_path.read_bytes(),
                               client_key_pem=client_key_path.read_bytes())


def server_ssl_context(creds: Credentials) -> ssl.SSLContext:
    """Serves with the server certificate; asks for a client certificate and verifies one given against the CA (a
    client without one goes on to the token; one from another CA fails the handshake, as Go's
    VerifyClientCertIfGiven does)."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(creds.cert_path, creds.key_path)
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.load_verify_locations(cadata=creds.ca_pem.decode())
    return ctx


def _kubeconfig(url: str, creds: Credentials) -> dict[str, object]:
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": CONTEXT, "preferences": {},
        "clusters": [{"name": CONTEXT, "cluster": {
            "server": url, "certificate-authority-data": base64.b64encode(creds.ca_pem).decode()}}],
        "users": [{"name": CONTEXT, "user": _user(creds)}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": "default"}}],
    }


def _user(creds: Credentials) -> dict[str, str]:
    user = {"token": creds.token}
    if creds.client_cert_pem:
        user["client-certificate-data"] = base64.b64encode(creds.client_cert_pem).decode()
        user["client-key-data"] = base64.b64encode(creds.client_key_pem).decode()
    return user


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
