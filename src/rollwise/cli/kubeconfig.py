"""Which kubeconfig a cluster command reads, and every way it can be unusable turned into one line.

``rollwise run`` (exit 2) and the commands that act on one set (``rollout``, ``status``, ``get``, ``migrate``,
``dashboard``: exit 1, as kubectl) read their client configuration here, with lightkube's loader. A missing file, a
file that is not YAML, one whose shape lightkube cannot walk, or a context that is not in it is a
:class:`ConfigProblem` naming the file, never a traceback.

What lightkube's models leave out of a cluster entry is read here too, as client-go reads it: ``tls-server-name``
(the name the server's certificate is checked against) and ``proxy-url``, else the ``HTTPS_PROXY``/``HTTP_PROXY``
and ``NO_PROXY`` environment (Go's ``httpproxy``: a loopback or ``localhost`` server is never proxied).
"""

from __future__ import annotations

import ipaddress
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from rollwise.api.errors import one_line

__all__ = ["ClientConfig", "ConfigProblem", "client_config"]


class ConfigProblem(Exception):
    """The kubeconfig or service account cannot be used; the message is one line that names it."""


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """One context, ready for a client: lightkube's ``SingleConfig`` and the transport settings it leaves out."""

    single: Any
    tls_server_name: str | None = None
    proxy: str | None = None
    where: str = ""
    """The file (or service account) it was read from, as a one-line error names it."""

    @property
    def namespace(self) -> str:
        return str(self.single.namespace)

    def rest_client(self, *, observe: Any = None) -> Any:
        """The operator's direct client (``cluster/client/rest.py``) for this context."""
        from rollwise.cluster.client.rest import RestClient  # noqa: PLC0415 - aiohttp costs ~0.3 s offline commands skip

        return RestClient.from_config(self.single, observe=observe, server_hostname=self.tls_server_name,
                                      proxy=self.proxy)


def client_config(kubeconfig: str | None, context: str | None, *, in_cluster: bool | None = None) -> ClientConfig:
    """The client configuration for ``context`` (default: the current one) of the file kubectl would read:
    ``kubeconfig``, else the first of ``$KUBECONFIG``, else ``~/.kube/config``; or, with ``in_cluster``, the pod's
    service account (None: the command has no ``--in-cluster``)."""
    # lightkube loads only for the cluster commands (about 0.1 s that no offline command should pay).
    from lightkube.config.kubeconfig import SERVICE_ACCOUNT, KubeConfig  # noqa: PLC0415
    from lightkube.core.exceptions import ConfigError  # noqa: PLC0415

    if in_cluster:
        where = f"--in-cluster: the service account in {SERVICE_ACCOUNT}"
    else:
        path = kubeconfig or (os.environ.get("KUBECONFIG") or "").split(os.pathsep)[0] \
            or os.path.expanduser("~/.kube/config")
        flag = "--kubeconfig" if kubeconfig else "$KUBECONFIG" if os.environ.get("KUBECONFIG") else "kubeconfig"
        where = f"{flag} {path}"
        if not os.path.isfile(path):
            pod = "" if in_cluster is None else ", or --in-cluster in a pod"
            what = "not a file" if os.path.exists(path) else "no such file"  # a directory, a device
            raise ConfigProblem(f"{where}: {what} (pass --kubeconfig FILE{pod})")
    doc: Any = None
    try:
        if in_cluster:
            config = KubeConfig.from_service_account()
        else:  # read here, as lightkube's from_file does, to keep the fields its models drop
            doc = yaml.safe_load(Path(path).read_text())
            if (missing := _missing_entry(doc, context)) is not None:
                raise ConfigProblem(f"{where}: {missing}")
            config = KubeConfig.from_dict(doc, fname=Path(path))
        single = config.get(context_name=context)
    # lightkube walks the file as it finds it: a wrong shape surfaces as whichever error the walk meets first.
    except (ConfigError, OSError, ValueError, KeyError, TypeError, AttributeError, yaml.YAMLError) as err:
        raise ConfigProblem(f"{where}: {one_line(err)}") from err
    if single is None:
        raise ConfigProblem(f"{where}: no current context; pass --context")
    if single.user is None:  # a context with no user: anonymous, as kubectl reads it (lightkube's client cannot)
        from lightkube.config.models import User  # noqa: PLC0415 - as above

        single = single._replace(user=User())
    _check_credentials(single, where)
    single = _with_server_url(single, where)
    entry = _cluster_entry(doc, single.context.cluster)
    tls_name = entry.get("tls-server-name")
    if tls_name is not None and (not isinstance(tls_name, str) or not tls_name.strip()):
        raise ConfigProblem(f"{where}: context {single.context_name}: cluster tls-server-name: must be a host name")
    return ClientConfig(single, tls_server_name=tls_name or None, where=where,
                        proxy=_proxy(entry.get("proxy-url"), single.cluster.server,
                                     f"{where}: context {single.context_name}"))


def _names(doc: dict[str, Any], key: str) -> list[str] | None:
    """The names of the file's ``clusters``, ``contexts`` or ``users`` (None when the list is not one: lightkube's
    walk reports that shape)."""
    items = doc.get(key)
    if items is None:
        return []
    if not isinstance(items, list):
        return None
    return [str(item.get("name")) for item in items if isinstance(item, dict)]


def _missing_entry(doc: Any, context: str | None) -> str | None:
    """What the chosen context needs that the file lacks, named by its field and by what points at it: no
    ``clusters`` (kubectl would then dial http://localhost:8080 and blame the port), no ``contexts``, or a context
    whose cluster or user is not in the file. None when nothing is missing (or the shape is another problem)."""
    if not isinstance(doc, dict):
        return None
    if not isinstance(doc.get("current-context"), str | None):
        return "current-context: must be a context's name"
    chosen = context or doc.get("current-context")
    contexts = doc.get("contexts")
    if _names(doc, "contexts") == [] and chosen:
        return f"contexts: none in the file (current-context is {chosen})"
    entry = next((c.get("context") for c in contexts if isinstance(c, dict) and c.get("name") == chosen), None) \
        if isinstance(contexts, list) else None
    if not isinstance(entry, dict):
        return None  # no such context: lightkube's own line names it
    cluster, user = entry.get("cluster"), entry.get("user")
    clusters, users = _names(doc, "clusters"), _names(doc, "users")
    if clusters == []:
        return f"clusters: none in the file (context {chosen} names cluster {cluster})"
    if clusters is not None and cluster not in clusters:
        return f"context {chosen}: cluster {cluster}: not in the file's clusters"
    if user and users is not None and user not in users:  # no user at all is anonymous, as kubectl reads it
        return f"context {chosen}: user {user}: not in the file's users"
    return None


def _cluster_entry(doc: Any, name: str) -> dict[str, Any]:
    """The ``cluster`` mapping of the named entry in the file as written (empty in a pod, or if none matches)."""
    clusters = doc.get("clusters") if isinstance(doc, dict) else None
    for item in clusters if isinstance(clusters, list) else ():
        if isinstance(item, dict) and item.get("name") == name and isinstance(entry := item.get("cluster"), dict):
            return entry
    return {}


def _proxy(proxy_url: Any, server: str, where: str) -> str | None:
    """The proxy to reach ``server`` through: the cluster's ``proxy-url``, else the environment's, as client-go
    chooses it. aiohttp speaks to http and https proxies only: a socks5 one is refused in one line."""
    if proxy_url is None:
        parts = urlsplit(server)
        host = parts.hostname or ""
        if host == "localhost" or _is_loopback(host) or _no_proxy(host, parts.port):
            return None
        return urllib.request.getproxies_environment().get(parts.scheme) or None
    try:
        given = urlsplit(proxy_url) if isinstance(proxy_url, str) else None
    except ValueError as err:  # a bracketed host left open
        raise ConfigProblem(f"{where}: cluster proxy-url {proxy_url!r}: {one_line(err)}") from err
    if given is None or given.scheme not in ("http", "https") or not given.hostname:
        raise ConfigProblem(f"{where}: cluster proxy-url {proxy_url!r}: only http:// and https:// proxies are "
                            "supported")
    return str(proxy_url)


def _no_proxy(host: str, port: int | None) -> bool:
    """Whether ``NO_PROXY`` names the host as Go's ``httpproxy`` reads it: ``*``; an IP or a CIDR; a domain, which
    covers its subdomains (only those with a leading dot); each with an optional port that must match."""
    text = os.environ.get("NO_PROXY") or os.environ.get("no_proxy") or ""
    for entry in (e.strip().lower() for e in text.split(",")):
        if entry == "*":
            return True
        if not entry:
            continue
        if "/" in entry:
            try:
                if ipaddress.ip_address(host) in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        name, _, want = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if want and (not want.isdigit() or port != int(want)):
            continue
        domain = name.strip("[]").lstrip(".")
        if host.endswith("." + domain) or (host == domain and not name.startswith(".")):
            return True
    return False


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _with_server_url(single: Any, where: str) -> Any:
    """The context with its cluster's server as a URL the client can dial, read as client-go reads it
    (``DefaultServerURL``): ``host:port`` without a scheme is https when the cluster has a CA or the user a client
    certificate (or TLS checks are skipped), else http; an empty server, another scheme, a port out of range or a
    host that is not one is a :class:`ConfigProblem` rather than a request to nowhere."""
    import msgspec  # noqa: PLC0415 - lightkube's models are msgspec structs

    cluster, user = single.cluster, single.user
    who = f"context {single.context_name}: cluster {single.context.cluster}"
    server = cluster.server.strip()
    if not server:
        raise ConfigProblem(f"{where}: {who}: no server found")
    try:
        parts = urlsplit(server)
        if not parts.scheme or not parts.netloc:
            tls = bool(cluster.certificate_auth or cluster.certificate_auth_data or cluster.insecure
                       or user.client_cert or user.client_cert_data)
            server = ("https://" if tls else "http://") + server
            parts = urlsplit(server)
        port = parts.port
    except ValueError as err:
        raise ConfigProblem(f"{where}: {who}: server {cluster.server!r}: {one_line(err)}") from err
    if parts.scheme not in ("http", "https"):
        raise ConfigProblem(f"{where}: {who}: server {cluster.server!r}: scheme {parts.scheme!r} is neither "
                            "https nor http")
    if not parts.hostname or any(c.isspace() for c in parts.hostname) or port == 0:
        raise ConfigProblem(f"{where}: {who}: server {cluster.server!r}: not a host and port")
    if server == cluster.server:
        return single
    return single._replace(cluster=msgspec.structs.replace(cluster, server=server))


def _check_credentials(single: Any, where: str) -> None:
    """Build now what the client builds from the context's credentials, so a CA that is not base64 or not a
    certificate, a client certificate and key that do not load, a token file that is gone or an auth provider that
    cannot be driven is a :class:`ConfigProblem` naming the field, not a traceback or an SSL code at first use."""
    from lightkube.config.client_adapter import user_auth, verify_cluster  # noqa: PLC0415 - as above
    from lightkube.config.models import User  # noqa: PLC0415 - as above
    from lightkube.core.exceptions import ConfigError  # noqa: PLC0415 - as above

    cluster, user = single.cluster, single.user
    who = f"context {single.context_name}"
    # The failures a malformed field raises: binascii.Error is a ValueError, ssl.SSLError an OSError.
    failures = (ConfigError, OSError, ValueError, TypeError)
    ca_field = "certificate-authority" if cluster.certificate_auth else \
        "certificate-authority-data" if cluster.certificate_auth_data else None
    if ca_field is not None:
        try:
            verify_cluster(cluster, User(), single.abs_file, trust_env=False)
        except FileNotFoundError as err:  # kubectl: "unable to read certificate-authority FILE"
            raise ConfigProblem(f"{where}: {who}: cluster {ca_field} {err.filename or cluster.certificate_auth}: "
                                f"cannot be read "
                                f"({err.strerror})") from err
        except failures as err:
            raise ConfigProblem(f"{where}: {who}: cluster {ca_field}: cannot be loaded as a PEM CA "
                                f"certificate ({one_line(err)})") from err
    if user.client_cert or user.client_cert_data:
        fields = "client-certificate-data/client-key-data" if user.client_cert_data else "client-certificate/client-key"
        try:
            verify_cluster(cluster, user, single.abs_file, trust_env=False)
        except failures as err:
            raise ConfigProblem(f"{where}: {who}: user {fields}: cannot be loaded as a PEM certificate "
                                f"and its key ({one_line(err)})") from err
    if user.auth_provider:
        # kubectl dropped its in-tree providers in 1.26; the cloud CLIs ship exec plugins instead
        name = user.auth_provider.get("name", "?") if isinstance(user.auth_provider, dict) else "?"
        raise ConfigProblem(f"{where}: {who}: user auth-provider {name}: not supported; use an exec plugin "
                            "(users[].user.exec), as kubectl does since 1.26")
    try:
        if user.token_file is not None:
            with open(user.token_file, "rb"):  # the path as the client reads it, at each request
                pass
        user_auth(user)
    except failures as err:
        field = "tokenFile" if user.token_file is not None else "exec" if user.exec else "user"
        raise ConfigProblem(f"{where}: {who}: user {field}: {one_line(err)}") from err
