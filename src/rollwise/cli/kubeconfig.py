"""Which kubeconfig a cluster command reads, and every way it can be unusable turned into one line.

``rollwise run`` (exit 2) and the commands that act on one set (``rollout``, ``status``, ``get``, ``migrate``,
``dashboard``: exit 1, as kubectl) read their client configuration here, with lightkube's loader. A missing file, a
file that is not YAML, one whose shape lightkube cannot walk, or a context that is not in it is a
:class:`ConfigProblem` naming the file, never a traceback.
"""

from __future__ import annotations

import os
from typing import Any

import yaml

__all__ = ["ConfigProblem", "client_config"]


class ConfigProblem(Exception):
    """The kubeconfig or service account cannot be used; the message is one line that names it."""


def client_config(kubeconfig: str | None, context: str | None, *, in_cluster: bool | None = None) -> Any:
    """lightkube's ``SingleConfig`` for ``context`` (default: the current one) of the file kubectl would read:
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
            raise ConfigProblem(f"{where}: no such file (pass --kubeconfig FILE{pod})")
    try:
        config = KubeConfig.from_service_account() if in_cluster else KubeConfig.from_file(path)
        single = config.get(context_name=context)
    # lightkube walks the file as it finds it: a wrong shape surfaces as whichever error the walk meets first.
    except (ConfigError, OSError, ValueError, KeyError, TypeError, AttributeError, yaml.YAMLError) as err:
        raise ConfigProblem(f"{where}: {' '.join(str(err).split()) or type(err).__name__}") from err
    if single is None:
        raise ConfigProblem(f"{where}: no current context; pass --context")
    return single
