"""A pod template a real API server would refuse on its pods (`imagePullPolicy: Alwayz`, a port out of range, a
probe without a handler ...) is refused where it is written: by the real `kubectl apply` against `rollwise up`
for both kinds and for a bare Pod, and by `rollwise validate`, each naming the field and the rule; it never
reaches a rollout as FailedCreate."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import zygote
from kubectl_support import DEADLINE, Up, statefulset

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(shared=True, crd=True),
]

PULL = "spec.template.spec.containers[0].imagePullPolicy"
SUPPORTED = 'Unsupported value: "Alwayz": supported values: "Always", "IfNotPresent", "Never"'


def _typo(kind: str, name: str) -> str:
    manifest = statefulset(name, replicas=1, claims=False).replace("        image: nginx:1.26\n",
                                                                  "        image: nginx:1.26\n"
                                                                  "        imagePullPolicy: Alwayz\n")
    assert "Alwayz" in manifest
    return manifest if kind == "sts" else manifest.replace("apiVersion: apps/v1",
                                                           "apiVersion: apps.rollwise.dev/v1alpha1")


@pytest.mark.parametrize("kind", ["sts", "rsts"])
def test_kubectl_apply_of_a_pull_policy_typo_is_refused_naming_the_field(up: Up, kind: str) -> None:
    result = up.kubectl("apply", "-f", "-", stdin=_typo(kind, f"typo-{kind}"), check=False)
    assert result.returncode != 0 and result.stdout == "", result.stdout
    assert f"{PULL}: {SUPPORTED}" in result.stderr, result.stderr
    assert up.kubectl("get", kind, f"typo-{kind}", check=False).returncode != 0, "nothing was stored"


@pytest.mark.parametrize("kind", ["sts", "rsts"])
def test_kubectl_apply_of_a_port_out_of_range_is_refused_naming_the_field(up: Up, kind: str) -> None:
    manifest = statefulset(f"port-{kind}", replicas=1, claims=False).replace(
        "containerPort: 80,", "containerPort: 70000,")
    if kind == "rsts":
        manifest = manifest.replace("apiVersion: apps/v1", "apiVersion: apps.rollwise.dev/v1alpha1")
    result = up.kubectl("apply", "-f", "-", stdin=manifest, check=False)
    assert result.returncode != 0, result.stdout
    assert "spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000" in result.stderr


def test_kubectl_apply_of_a_probe_without_handler_is_refused_with_upstreams_words(up: Up) -> None:
    manifest = statefulset("probe", replicas=1, claims=False).replace(
        "ports: [{containerPort: 80, name: http}]",
        "ports: [{containerPort: 80, name: http}]\n        readinessProbe: {periodSeconds: 5}")
    result = up.kubectl("apply", "-f", "-", stdin=manifest, check=False)
    assert result.returncode != 0, result.stdout
    assert "spec.template.spec.containers[0].readinessProbe: Required value: must specify a handler type" in \
        result.stderr, result.stderr


def test_a_bare_pod_with_the_typo_is_refused_as_kube_apiserver_refuses_it(up: Up) -> None:
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: typo}\nspec:\n  containers:\n"
           "  - {name: app, image: 'nginx:1.26', imagePullPolicy: Alwayz}\n")
    result = up.kubectl("apply", "-f", "-", stdin=pod, check=False)
    assert result.returncode != 0
    assert f'spec.containers[0].imagePullPolicy: {SUPPORTED}' in result.stderr, result.stderr


@pytest.mark.parametrize("kind", ["sts", "rsts"])
def test_rollwise_validate_refuses_the_typo_with_exit_2_and_nothing_on_stdout(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(_typo(kind, "web"))
    result: subprocess.CompletedProcess[str] = zygote.run(["validate", str(path)], timeout=DEADLINE)
    assert (result.returncode, result.stdout) == (2, "")
    assert f"{PULL}: {SUPPORTED}" in result.stderr, result.stderr
