"""Which container's log a request reads and whether there is one yet, as the API server and the kubelet answer:
a container the pod lacks, no name among several, and a container still waiting are 400s in their words."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.api.errors import BadRequest
from rollwise.apiserver.serving.requests import pod_log


def _pod(*containers: str, node: str = "rollwise-node", inits: tuple[str, ...] = (),
         **states: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "web-2"},
            "spec": {"nodeName": node, "containers": [{"name": c} for c in containers],
                     "initContainers": [{"name": c} for c in inits]},
            "status": {"containerStatuses": [{"name": c, "image": "nginx:1.27", **states[c]} for c in states]}}


@pytest.mark.parametrize(("pod", "container", "message"), [
    (_pod("app", app={"state": {"waiting": {"reason": "ImagePullBackOff"}}}), None,
     'container "app" in pod "web-2" is waiting to start: trying and failing to pull image'),
    (_pod("app", app={"state": {"waiting": {"reason": "ErrImagePull"}}}), "app",
     'container "app" in pod "web-2" is waiting to start: image can\'t be pulled'),
    (_pod("app", app={"state": {"waiting": {"reason": "ContainerCreating"}}}), None,
     'container "app" in pod "web-2" is waiting to start: ContainerCreating'),
    (_pod("app", app={"state": {}}), None, 'container "app" in pod "web-2" is waiting to start - no logs yet'),
    (_pod("app"), None, 'container "app" in pod "web-2" is not available'),
    (_pod("app", app={"state": {"running": {"startedAt": 1.0}}}), "sidecar",
     "container sidecar is not valid for pod web-2"),
    (_pod("app", "sidecar", inits=("init",)), None,
     "a container name must be specified for pod web-2, choose one of: [app sidecar] or one of the init "
     "containers: [init]"),
])
def test_a_log_that_cannot_be_read_is_a_400_in_upstreams_words(pod: dict[str, Any], container: str | None,
                                                               message: str) -> None:
    with pytest.raises(BadRequest) as refused:
        pod_log(pod, container)
    assert refused.value.message == message


def test_a_running_or_restarted_container_has_its_start_line_and_an_unscheduled_pod_an_empty_log() -> None:
    running = _pod("app", app={"state": {"running": {"startedAt": 0.0}}})
    assert pod_log(running, None) == "1970-01-01T00:00:00Z app: started nginx:1.27 (simulated container)\n"
    restarting = _pod("app", app={"state": {"waiting": {"reason": "CrashLoopBackOff"}},
                                  "lastState": {"terminated": {"startedAt": 0.0}}})
    assert "app: started nginx:1.27" in pod_log(restarting, "app")
    assert pod_log(_pod("app", node=""), None) == ""


def test_the_previous_log_is_the_last_terminated_container_s_or_a_400_when_it_never_restarted() -> None:
    restarted = _pod("app", app={"state": {"running": {"startedAt": 60.0}},
                                 "lastState": {"terminated": {"startedAt": 0.0}}})
    assert pod_log(restarted, None, previous=True).startswith("1970-01-01T00:00:00Z app: started")
    with pytest.raises(BadRequest) as refused:
        pod_log(_pod("app", app={"state": {"running": {"startedAt": 0.0}}}), None, previous=True)
    assert refused.value.message == 'previous terminated container "app" in pod "web-2" not found'
