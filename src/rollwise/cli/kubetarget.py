"""What the commands that act on one set of a live cluster share (``rollout``, ``migrate``): the connection flags,
the client (``cluster/client/rest.py``, with lightkube's kubeconfig loader; loaded only by these commands), and
``TYPE/NAME`` as kubectl spells it."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from rollwise.api.errors import ApiStatusError, CredentialsUnavailable, Unreachable
from rollwise.api.validation_rules import check_dns_label, check_dns_subdomain
from rollwise.cli.kubeconfig import ConfigProblem, client_config
from rollwise.cluster.resources import ROLLWISE_STATEFULSET, STATEFULSET, GroupKind

__all__ = ["ClusterCommandError", "SetTarget", "add_connection_flags", "connect", "namespace_name", "parse_target",
           "run_on_cluster"]

_TYPES = {
    **dict.fromkeys(("rsts", "statefulset.apps.rollwise.dev", "statefulsets.apps.rollwise.dev"),
                    ROLLWISE_STATEFULSET),
    **dict.fromkeys(("sts", "statefulset", "statefulsets", "statefulset.apps", "statefulsets.apps"), STATEFULSET),
}


@dataclass(frozen=True, slots=True)
class SetTarget:
    kind: GroupKind
    name: str

    @property
    def display(self) -> str:
        """kubectl's ``statefulset.apps/web`` form."""
        return f"statefulset.{self.kind.group}/{self.name}"


def parse_target(text: str) -> SetTarget:
    kind, slash, name = text.partition("/")
    if not slash or not name or kind.lower() not in _TYPES:
        raise ValueError(f"{text!r}: expected TYPE/NAME with TYPE one of rsts (apps.rollwise.dev) or sts (apps/v1)")
    # The API server's rule for a set's name, checked here so a name no set can have (a space, a slash, "..") is
    # never put into a request path.
    for error in check_dns_subdomain(name, "NAME"):
        raise ValueError(f"{text!r}: NAME {error.rule}")
    return SetTarget(_TYPES[kind.lower()], name)


def add_connection_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig to use (default: $KUBECONFIG, ~/.kube/config)")
    p.add_argument("--context", help="kubeconfig context (default: the current one)")
    p.add_argument("-n", "--namespace", type=namespace_name, help="namespace (default: the context's, else `default`)")


def namespace_name(text: str) -> str:
    """``-n``: a namespace's name is a DNS-1123 label; anything else would be put into a request path as it stands
    (a space broke the request line, ``..`` walked the URL elsewhere)."""
    for error in check_dns_label(text, "namespace"):
        raise argparse.ArgumentTypeError(f"{text!r}: {error.rule}")
    return text


def connect(args: argparse.Namespace) -> tuple[Any, str]:
    """A ``KubeCluster`` and the namespace to act in. Raises ``ConfigProblem`` for an unusable kubeconfig, its
    credentials and server included."""
    from rollwise.cluster.client.kube import KubeCluster  # noqa: PLC0415 - aiohttp costs ~0.3 s no offline command should pay

    config = client_config(args.kubeconfig, args.context)
    # The operator's direct client (cluster/client/rest.py): lightkube's own would also build an httpx pool, which was
    # a third of a command's start-up.
    namespace = args.namespace or config.namespace or "default"
    if check_dns_label(namespace, "namespace"):  # the context's own: -n is checked as it is parsed
        raise ConfigProblem(f"{config.where}: context {config.single.context_name}: namespace {namespace!r}: not a "
                            "namespace's name (a DNS-1123 label)")
    return KubeCluster(config.rest_client()), namespace


class ClusterCommandError(Exception):
    """A command refused or failed on the cluster: its message is printed as kubectl prints errors, exit 1."""


def run_on_cluster(args: argparse.Namespace, action: Callable[[Any, str], Awaitable[int]], *,
                   could_not_ask: int = 1) -> int:
    """Connect with the connection flags, run ``action(cluster, namespace)`` to its exit status and close the
    client; an unusable kubeconfig, a ``ClusterCommandError`` or an API error (the server unreachable, a refusal,
    not found) is printed and gives exit ``could_not_ask`` (1, as kubectl, unless the command documents another)."""
    try:
        kube, ns = connect(args)
    except (ConfigProblem, OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return could_not_ask

    async def go() -> int:
        try:
            return await action(kube, ns)
        finally:
            await kube.client.close()

    try:
        return asyncio.run(go())
    except (ClusterCommandError, CredentialsUnavailable, Unreachable) as err:  # not a server's word: kubectl's form
        print(f"error: {err}", file=sys.stderr)
        return could_not_ask
    except ApiStatusError as err:
        print(f"Error from server ({err.reason}): {err.message}", file=sys.stderr)
        return could_not_ask
