"""`kubectl apply -k deploy/` on `rollwise up` runs the operator's Deployment with simulated pods (Running, running
nothing): `up` says so where the user meets it, on its own output beside the kubectl session."""

from __future__ import annotations

import pytest
from kubectl_support import ROOT, Up, stop_up

pytestmark = pytest.mark.kubectl


def test_up_says_the_operators_deployment_runs_no_operator_and_what_does(up: Up) -> None:
    up.kubectl("apply", "-k", str(ROOT / "deploy" / "crds"))
    up.kubectl("apply", "-k", str(ROOT / "deploy"))
    up.until(lambda: up.read("deploy", "rollwise", "-n", "rollwise-system").get("status", {}).get(
        "readyReplicas") == 2, "the operator's Deployment 2/2, simulated")
    assert stop_up(up.proc) == 0
    assert up.proc.stderr is not None
    said = up.proc.stderr.read()
    assert ("pods are simulated and no container runs, a Deployment's included: the operator's (kubectl apply -k "
            "deploy/) shows Running pods that run no operator; the operator is `rollwise run --kubeconfig "
            f"{up.kubeconfig}`") in said, said
