"""Whatever a pod's status holds, the controllers decide without failing (DESIGN principle 5): generated statuses
of any shape written straight into the store (status writes skip admission), then the StatefulSet controller under
each strategy, the quorum-aware controller and the kubelet's status builder run over them."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_set
from harness import Harness
from hostile_status import hostile_statuses
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import examples

from rollwise.api.meta import name_of
from rollwise.controllers.quorum import reconcile_quorum
from rollwise.kubelet.status import build_status, status_notes
from rollwise.runtime.views import set_view

STRATEGIES = [
    {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "podProgressTimeoutSeconds": 20}},
    {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}},
    {"type": "EnforcedRollingUpdate"},
    {"type": "Recreate"},
    {"type": "OnDelete"},
]


@pytest.mark.parametrize("n", examples(60, 150))
def test_the_controllers_survive_any_pod_status(n: int) -> None:
    @settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(strategy=st.sampled_from(STRATEGIES), policy=st.sampled_from(["OrderedReady", "Parallel"]),
           quorum=st.booleans(), statuses=st.lists(hostile_statuses, min_size=1, max_size=3),
           min_ready=st.sampled_from([0, 5]))
    def check(strategy: dict[str, Any], policy: str, quorum: bool,
                                                    statuses: list[Any], min_ready: int) -> None:
        annotations = {"rollwise.dev/update-policy": "QuorumAware"} if quorum else {}
        sts = make_set(replicas=3, policy=policy, updateStrategy=strategy if not quorum else {"type": "OnDelete"},
                       minReadySeconds=min_ready, progressDeadlineSeconds=60)
        sts["metadata"]["annotations"] = annotations
        h = Harness(sts)
        h.settle()
        h.set_image("nginx:next")
        for pod, status in zip(h.pods(), statuses, strict=False):
            h.cluster.update_status({**pod, "status": status})
            status_notes(status, {"phase": "Running"})
            build_status(h.pod(name_of(pod)), [], failed=False, t=h.now)
        for t in (1.0, 30.0, 200.0):
            h.now = t
            h.sync()
            if quorum:
                reconcile_quorum(set_view(h.cluster, h.sts, now=h.now, gates=h.gates))

    check()
