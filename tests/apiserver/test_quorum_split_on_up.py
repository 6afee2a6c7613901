"""`up`'s controllers and `rollwise run` split by controller, not by kind: with `up
--controllers=-apps.rollwise.dev` (docs/operator.md's set-up) and an operator run with `--controllers statefulset`
(no quorum-aware controller of its own), a quorum-aware set of the custom kind is still rolled, followers first and
the leader last, by `up`'s quorum-aware controller, which runtime/registrations.py says runs for both kinds. `up`
woke only the kinds its StatefulSet controller ran for, so such a set had no quorum-aware controller anywhere and
stayed at its old revision."""

from __future__ import annotations

import pytest
from kubectl_support import Up
from operator_support import Operator, audit_entries, get_json

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True),
    pytest.mark.operator("--controllers", "statefulset"),
]

ETCD = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata:
  name: etcd
  namespace: default
  annotations: {rollwise.dev/update-policy: QuorumAware, rollwise.dev/role-label: role}
spec:
  replicas: 3
  podManagementPolicy: Parallel
  updateStrategy: {type: OnDelete}
  selector: {matchLabels: {app: etcd}}
  template:
    metadata: {labels: {app: etcd}}
    spec: {containers: [{name: etcd, image: "nginx:1.26"}]}
"""


def _members(up: Up) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in get_json(up, "pods", "-l", "app=etcd")["items"]}


def test_ups_quorum_aware_controller_rolls_a_custom_kind_set_the_operator_leaves_to_it(
        up: Up, operator: Operator) -> None:
    up.apply(ETCD)
    up.kubectl("wait", "rsts/etcd", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
    up.kubectl("label", "pod", "etcd-1", "role=leader")  # the middle ordinal: no ordinal order puts it last
    up.kubectl("patch", "rsts", "etcd", "--type=merge", "-p",
               '{"spec":{"template":{"spec":{"containers":[{"name":"etcd","image":"nginx:1.27"}]}}}}')
    up.until(lambda: sorted(p["spec"]["containers"][0]["image"] for p in _members(up).values()) == ["nginx:1.27"] * 3,
             "every member at the new image", deadline=60)
    deletes = [e for e in audit_entries(up) if e["resource"] == "pods" and e["verb"] == "delete"]
    assert [e["name"] for e in deletes][2:] == ["etcd-1"] and len(deletes) == 3, deletes
    assert {e["user"] for e in deletes} == {"system:serviceaccount:kube-system:quorum-aware-controller"}, deletes
    # The operator's StatefulSet controller recreated them: one create per replaced pod, all its own.
    creates = [e for e in audit_entries(up) if e["resource"] == "pods" and e["verb"] == "create"]
    assert {e["user"] for e in creates} == {"op-a"} and len(creates) == 6, creates
