"""Kubeconfigs that parse and name a context, but whose server or credentials a client cannot use: each with the
field the one-line error must name. Shared by the cluster commands' tests (exit 1) and ``rollwise run``'s (exit 2)."""

from __future__ import annotations

import base64
from pathlib import Path

_PEM_NOT_A_CERT = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n")

# (cluster fields, user fields, the field the error names)
CASES: dict[str, tuple[str, str, str]] = {
    "CA data not base64": ("certificate-authority-data: '@@@not base64'", "token: t", "certificate-authority-data"),
    "CA data not a certificate": (f"certificate-authority-data: {base64.b64encode(b'hello').decode()}", "token: t",
                                  "certificate-authority-data"),
    "CA data a broken PEM": (f"certificate-authority-data: {_PEM_NOT_A_CERT.decode()}", "token: t",
                             "certificate-authority-data"),
    "CA file gone": ("certificate-authority: /nonexistent/ca.crt", "token: t", "certificate-authority"),
    "client certificate not PEM": ("", "client-certificate-data: aGVsbG8=, client-key-data: aGVsbG8=",
                                   "client-certificate-data/client-key-data"),
    "client key file gone": ("", "client-certificate: /nonexistent/tls.crt, client-key: /nonexistent/tls.key",
                             "client-certificate/client-key"),
    "token file gone": ("", "tokenFile: /nonexistent/token", "tokenFile"),
    "an in-tree auth provider": ("", "auth-provider: {name: gcp}", "auth-provider gcp"),
    "an empty server": ("server: ''", "token: t", "cluster c: no server found"),
    "a server that is not a URL": ("server: 'not a url'", "token: t", "server 'not a url': not a host and port"),
    "a server with another scheme": ("server: 'ftp://k8s'", "token: t", "scheme 'ftp'"),
    "a server port out of range": ("server: 'https://10.0.0.1:99999'", "token: t", "server 'https://10.0.0.1:99999'"),
    "a server with a broken IPv6 host": ("server: 'https://[::1'", "token: t", "server 'https://[::1'"),
    "a proxy-url with a broken IPv6 host": ("proxy-url: 'http://[::1'", "token: t", "proxy-url 'http://[::1'"),
}


def write(tmp_path: Path, case: str) -> Path:
    """The kubeconfig of ``case`` in ``tmp_path``; its server is never reached."""
    cluster, user, _ = CASES[case]
    return kubeconfig(tmp_path, cluster, user)


def kubeconfig(tmp_path: Path, cluster: str, user: str) -> Path:
    """A kubeconfig in ``tmp_path`` with context ``x``: its cluster and user given as YAML flow fields (the server
    one that is never reached, unless ``cluster`` names its own)."""
    if "server:" not in cluster:
        cluster = f"server: 'https://127.0.0.1:9', {cluster}"
    path = tmp_path / "config"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        f"clusters: [{{name: c, cluster: {{{cluster}}}}}]\n"
        f"users: [{{name: u, user: {{{user}}}}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n")
    return path
