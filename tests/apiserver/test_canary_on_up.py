"""Canary steps on `rollwise up` with the real operator process (`rollwise run`) and the real kubectl: a 4-replica
custom set with steps ``[{replicas: 1}, {pause: {}}]`` holds exactly one pod at the new revision until
``kubectl rollwise rollout promote`` (the plugin, which is the CLI), then finishes; a timed pause proceeds by
itself; ``kubectl rollwise rollout abort`` at a two-pod canary's pause takes the two updated pods back to the stable
revision with their claims, touches neither of the other two, and ``rollwise status`` fails with RolloutAborted until
``retry`` starts the steps again; ``[{replicas: 2}, {analysis}]`` with a web metric on a local server that fails
aborts the same way by itself, its AnalysisRun showing the failed measurements, and with one that passes completes.
Every process is started here and ended by its pid; every wait has a deadline."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zygote
from kubectl_support import DEADLINE, PLUGIN_DIR, Up, running_up
from metric_server import Answer, metric_server
from operator_support import (
    audit_entries,
    get_json,
    last_audit_time,
    leading_operator,
    pod_writes_since,
    rolled_out,
    running_up_for_operator,
)

pytestmark = pytest.mark.kubectl

CANARY = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata: {{name: web, namespace: default}}
spec:
  replicas: 4
  selector: {{matchLabels: {{app: web}}}}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      steps: {steps}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{terminationGracePeriodSeconds: 1, containers: [{{name: app, image: "nginx:1.27"}}]}}
"""
IMAGE = '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}'


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    if not (PLUGIN_DIR / "kubectl-rollwise").exists():
        pytest.skip("the kubectl-rollwise entry point is not installed (run `make setup`)")
    with running_up_for_operator(tmp_path) as server:
        server.env = {**server.env, "PATH": f"{PLUGIN_DIR}{os.pathsep}{server.env.get('PATH', os.environ['PATH'])}"}
        server.install_rollwise()
        yield server


def _status(up: Up) -> dict[str, Any]:
    return get_json(up, "rsts", "web").get("status") or {}


def _progressing(up: Up) -> dict[str, Any]:
    return next((c for c in _status(up).get("conditions") or () if c["type"] == "Progressing"), {})


def _at_update(up: Up) -> list[str]:
    update = _status(up).get("updateRevision")
    return sorted(p["metadata"]["name"] for p in get_json(up, "pods", "-l", "app=web")["items"]
                  if p["metadata"]["labels"].get("controller-revision-hash") == update
                  and not p["metadata"].get("deletionTimestamp"))


def _deletes(up: Up, since: float) -> list[tuple[float, str]]:
    return [(e["time"], e.get("name", "")) for e in audit_entries(up)
            if e["resource"] == "pods" and e["verb"] == "delete" and e["time"] >= since and e["user"] == "op-a"]


def test_the_operator_holds_one_pod_until_promote_then_finishes(up: Up, tmp_path: Path) -> None:
    with leading_operator(up, tmp_path, "op-a"):
        up.apply(CANARY.format(steps="[{replicas: 1}, {pause: {}}]"))
        up.until(lambda: rolled_out(up, "web", 4, "nginx:1.27"), "the set comes up")
        since = last_audit_time(up)
        up.kubectl("patch", "rsts", "web", "--type=merge", "-p", IMAGE)
        up.until(lambda: _progressing(up).get("reason") == "RolloutStepPaused", "the canary pauses",
                 on_fail=lambda: str(_progressing(up)))
        assert _at_update(up) == ["web-3"]
        assert _progressing(up)["message"] == "step 2 of 2 (pause until promoted): paused until promoted"
        status = _status(up)
        assert status["currentStepIndex"] == 1 and status["stableRevision"] == status["currentRevision"]
        assert isinstance(status["pauseStartTime"], str) and status["pauseStartTime"].endswith("Z")
        # Held: the operator deletes no other pod and rewrites nothing while nothing changes.
        version = get_json(up, "rsts", "web")["metadata"]["resourceVersion"]
        up.kubectl("wait", "--for=condition=Ready=false", "rsts/web", "--timeout=5s")
        assert [name for _, name in _deletes(up, since)] == ["web-3"]
        assert pod_writes_since(up, since, ("delete",)) == [("delete", "web-3")]
        assert get_json(up, "rsts", "web")["metadata"]["resourceVersion"] == version

        promoted = up.plugin("rollout", "promote", "rsts/web")
        assert promoted.returncode == 0, promoted.stderr
        assert promoted.stdout == "statefulset.apps.rollwise.dev/web promoted: past the last step, the rest follows\n"
        up.until(lambda: rolled_out(up, "web", 4, "nginx:1.28"), "the rollout finishes after promote",
                 deadline=DEADLINE * 2)
        assert [name for _, name in _deletes(up, since)] == ["web-3", "web-2", "web-1", "web-0"]
        again = up.plugin("rollout", "promote", "rsts/web")
        assert again.returncode == 1 and "no rollout under way" in again.stderr and again.stdout == ""


def test_the_operator_ends_a_timed_pause_by_itself(up: Up, tmp_path: Path) -> None:
    with leading_operator(up, tmp_path, "op-a"):
        up.apply(CANARY.format(steps="[{replicas: 2}, {pause: {duration: 3s}}]"))
        up.until(lambda: rolled_out(up, "web", 4, "nginx:1.27"), "the set comes up")
        since = last_audit_time(up)
        up.kubectl("patch", "rsts", "web", "--type=merge", "-p", IMAGE)
        up.until(lambda: rolled_out(up, "web", 4, "nginx:1.28"), "the timed pause ends and the rollout finishes",
                 deadline=DEADLINE * 2)
        deletes = _deletes(up, since)
        assert [name for _, name in deletes] == ["web-3", "web-2", "web-1", "web-0"]
        assert deletes[2][0] - deletes[1][0] >= 3, "the rest waited the pause out"


def test_promote_of_a_set_without_steps_says_so(up: Up) -> None:
    up.apply(CANARY.format(steps="[]").replace("      steps: []\n", "      maxUnavailable: 1\n"))
    done = zygote.run(["rollout", "promote", "rsts/web", "--kubeconfig", str(up.kubeconfig)], env=up.env,
                      timeout=DEADLINE)
    assert done.returncode == 1 and done.stdout == ""
    assert "web has no canary steps (spec.updateStrategy.rollingUpdate.steps)" in done.stderr


CLAIMS = """\
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def _pods(up: Up) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in get_json(up, "pods", "-l", "app=web")["items"]
            if not p["metadata"].get("deletionTimestamp")}


def _revisions(up: Up) -> dict[str, str]:
    return {name: p["metadata"]["labels"].get("controller-revision-hash", "") for name, p in _pods(up).items()}


def _claim_uids(up: Up) -> dict[str, str]:
    return {c["metadata"]["name"]: c["metadata"]["uid"] for c in get_json(up, "pvc")["items"]}


def _ready(up: Up) -> bool:
    return _status(up).get("readyReplicas") == 4


def test_an_abort_takes_the_two_updated_pods_back_with_their_claims_and_status_fails(up: Up, tmp_path: Path) -> None:
    with leading_operator(up, tmp_path, "op-a"):
        up.apply(CANARY.format(steps="[{replicas: 2}, {pause: {}}]") + CLAIMS)
        up.until(lambda: rolled_out(up, "web", 4, "nginx:1.27"), "the set comes up")
        stable = _status(up)["currentRevision"]
        claims = _claim_uids(up)
        up.kubectl("patch", "rsts", "web", "--type=merge", "-p", IMAGE)
        up.until(lambda: _status(up).get("currentStepIndex") == 1 and _ready(up)
                 and sorted(n for n, r in _revisions(up).items() if r != stable) == ["web-2", "web-3"],
                 "the canary holds two pods at the pause", on_fail=lambda: str(_status(up)))
        untouched = {n: p["metadata"]["uid"] for n, p in _pods(up).items() if n in ("web-0", "web-1")}
        canaries = {n: p["metadata"]["uid"] for n, p in _pods(up).items() if n in ("web-2", "web-3")}

        aborted = up.plugin("rollout", "abort", "rsts/web")
        assert aborted.returncode == 0, aborted.stderr
        assert aborted.stdout == (f"statefulset.apps.rollwise.dev/web aborted: its pods return to the stable "
                                  f"revision {stable}\n")
        up.until(lambda: set(_revisions(up).values()) == {stable} and _ready(up) and len(_pods(up)) == 4,
                 "every pod back at the stable revision", deadline=DEADLINE * 2, on_fail=lambda: str(_status(up)))
        pods = _pods(up)
        assert {n: pods[n]["metadata"]["uid"] for n in untouched} == untouched
        assert all(pods[n]["metadata"]["uid"] != uid for n, uid in canaries.items())  # recreated at stable
        assert _claim_uids(up) == claims  # the same claims, bound to the pods again
        sts = get_json(up, "rsts", "web")
        assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"  # the spec keeps it
        settled = sts["metadata"]["resourceVersion"]
        progressing = next(c for c in sts["status"]["conditions"] if c["type"] == "Progressing")
        assert progressing["status"] == "False" and progressing["reason"] == "RolloutAborted"
        assert "aborted by rollwise rollout abort" in progressing["message"]
        ready = next(c for c in sts["status"]["conditions"] if c["type"] == "Ready")
        assert ready["status"] == "False" and ready["reason"] == "RolloutAborted"
        events = [e for e in get_json(up, "events")["items"] if e.get("reason") == "RolloutAborted"]
        assert len(events) == 1 and events[0]["type"] == "Warning"

        status = zygote.run(["status", "rsts/web", "--kubeconfig", str(up.kubeconfig)], env=up.env,
                            timeout=DEADLINE)
        assert status.returncode == 1
        aborted_revision = sts["status"]["abortedRevision"]
        assert status.stdout.startswith(f"✖ Degraded - RolloutAborted: rollout to revision {aborted_revision}"
                                        f" aborted by rollwise rollout abort: every pod returns to the stable "
                                        f"revision {stable}\n"), status.stdout
        shown = zygote.run(["get", "rsts/web", "--kubeconfig", str(up.kubeconfig)], env=up.env, timeout=DEADLINE)
        assert shown.returncode == 0 and "RolloutAborted" in shown.stdout
        watched = zygote.run(["rollout", "status", "rsts/web", "--kubeconfig", str(up.kubeconfig)], env=up.env,
                             timeout=DEADLINE)
        assert watched.returncode == 1 and "rollout failed: RolloutAborted" in watched.stderr
        assert get_json(up, "rsts", "web")["metadata"]["resourceVersion"] == settled  # aborted and settled: no write
        again = up.plugin("rollout", "abort", "rsts/web")
        assert again.returncode == 1 and "aborted already" in again.stderr and again.stdout == ""

        retried = up.plugin("rollout", "retry", "rsts/web")
        assert retried.returncode == 0, retried.stderr
        up.until(lambda: _status(up).get("currentStepIndex") == 1 and _ready(up)
                 and sorted(n for n, r in _revisions(up).items() if r != stable) == ["web-2", "web-3"],
                 "retry holds two pods at the pause again", deadline=DEADLINE * 2, on_fail=lambda: str(_status(up)))
        assert "abort" not in _status(up)


APPS_V1 = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {steps: [{replicas: 1}, {pause: {}}]}}
  template:
    metadata: {labels: {app: db}}
    spec: {terminationGracePeriodSeconds: 1, containers: [{name: app, image: "nginx:1.27"}]}
"""


def test_steps_on_apps_v1_are_a_proposal_up_keeps_with_a_warning_and_runs(tmp_path: Path) -> None:
    with running_up(tmp_path) as server:
        applied = server.kubectl("apply", "-f", "-", stdin=APPS_V1)
        assert ("Warning: spec.updateStrategy.rollingUpdate.steps: a Kubernetes 1.37.0 API server does not know "
                "the field") in applied.stderr
        server.until(lambda: (get_json(server, "sts", "db").get("status") or {}).get("readyReplicas") == 3,
                     "the set comes up")
        server.kubectl("set", "image", "sts/db", "app=nginx:1.28")

        def held() -> bool:
            status = get_json(server, "sts", "db").get("status") or {}
            pods = get_json(server, "pods", "-l", "app=db")["items"]
            updated = [p["metadata"]["name"] for p in pods
                       if p["metadata"]["labels"].get("controller-revision-hash") == status.get("updateRevision")]
            return status.get("currentStepIndex") == 1 and updated == ["db-2"] and status.get("readyReplicas") == 3

        server.until(held, "one pod at the new revision, held at the pause")
        bad = server.kubectl("patch", "sts", "db", "--type=merge", "-p",
                             '{"spec":{"updateStrategy":{"rollingUpdate":{"steps":[{"replicas":1,"pause":{}}]}}}}',
                             check=False)
        assert bad.returncode != 0
        assert "spec.updateStrategy.rollingUpdate.steps[0]" in bad.stderr and "exactly one of" in bad.stderr


def test_steps_on_apps_v1_with_proposals_off_are_an_unknown_field(tmp_path: Path) -> None:
    with running_up(tmp_path, "--proposals", "off") as server:
        result = server.kubectl("apply", "-f", "-", stdin=APPS_V1, check=False)
    assert result.returncode != 0 and 'unknown field "spec.updateStrategy.rollingUpdate.steps"' in result.stderr


def test_the_crd_refuses_an_invalid_step_with_its_field_path(up: Up) -> None:
    refused = up.kubectl("apply", "-f", "-", stdin=CANARY.format(steps="[{replicas: 1}, {pause: {duration: soon}}]"),
                         check=False)
    assert refused.returncode != 0
    assert "spec.updateStrategy.rollingUpdate.steps[1].pause.duration" in refused.stderr
    both = up.kubectl("apply", "-f", "-", stdin=CANARY.format(steps="[{replicas: 1, pause: {}}]"), check=False)
    assert both.returncode != 0 and "must have exactly one of replicas, pause, analysis" in both.stderr


ANALYSIS_TEMPLATE = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: AnalysisTemplate
metadata: {name: error-rate, namespace: default}
spec:
  args: [{name: url}]
  metrics:
  - name: error-rate
    interval: 1s
    count: 2
    failureCondition: result > 0.05
    provider:
      web: {url: "{{args.url}}", jsonPath: "{$.rate}"}
"""
ANALYSIS_STEPS = ('[{{replicas: 2}}, {{analysis: {{templates: [{{templateName: error-rate}}], '
                  'args: [{{name: url, value: "{url}"}}]}}}}]')


def _runs(up: Up) -> list[dict[str, Any]]:
    return list(get_json(up, "analysisruns", "-l", "rollwise.dev/set=web")["items"])


def test_a_failing_metric_aborts_the_two_pod_canary_and_its_run_shows_why(up: Up, tmp_path: Path) -> None:
    with metric_server() as metrics, leading_operator(up, tmp_path, "op-a"):
        metrics.answers["/rate"] = Answer(body={"rate": 0.12})
        up.apply(ANALYSIS_TEMPLATE)
        up.apply(CANARY.format(steps=ANALYSIS_STEPS.format(url=metrics.url("/rate"))) + CLAIMS)
        up.until(lambda: rolled_out(up, "web", 4, "nginx:1.27"), "the set comes up")
        stable = _status(up)["currentRevision"]
        claims = _claim_uids(up)
        untouched = {n: p["metadata"]["uid"] for n, p in _pods(up).items() if n in ("web-0", "web-1")}
        up.kubectl("patch", "rsts", "web", "--type=merge", "-p", IMAGE)
        up.until(lambda: _status(up).get("abort") is True, "the failed analysis aborts the rollout",
                 deadline=DEADLINE * 2, on_fail=lambda: str(_status(up)))
        up.until(lambda: set(_revisions(up).values()) == {stable} and _ready(up) and len(_pods(up)) == 4,
                 "every pod back at the stable revision", deadline=DEADLINE * 2, on_fail=lambda: str(_status(up)))
        pods = _pods(up)
        assert {n: pods[n]["metadata"]["uid"] for n in untouched} == untouched  # never touched
        assert _claim_uids(up) == claims  # web-2 and web-3 came back with their claims
        status = _status(up)
        update = status["abortedRevision"]
        (run,) = _runs(up)
        assert run["metadata"]["name"] == f"{update}-1" and run["status"]["phase"] == "Failed"
        (result,) = run["status"]["metricResults"]
        assert result["failed"] >= 1 and result["measurements"][-1]["value"] == "0.12"
        assert status["currentStepAnalysisRun"]["phase"] == "Failed"
        progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
        assert progressing["status"] == "False" and progressing["reason"] == "RolloutAborted"
        assert 'metric error-rate failed: result 0.12 matches failureCondition "result > 0.05"' in \
            progressing["message"]
        shown = up.kubectl("get", "ar", "-l", "rollwise.dev/set=web").stdout
        assert "Failed" in shown and f"{update}-1" in shown


def test_a_passing_metric_lets_the_canary_complete(up: Up, tmp_path: Path) -> None:
    with metric_server() as metrics, leading_operator(up, tmp_path, "op-a"):
        metrics.answers["/rate"] = Answer(body={"rate": 0.01})
        up.apply(ANALYSIS_TEMPLATE)
        up.apply(CANARY.format(steps=ANALYSIS_STEPS.format(url=metrics.url("/rate"))))
        up.until(lambda: rolled_out(up, "web", 4, "nginx:1.27"), "the set comes up")
        since = last_audit_time(up)
        up.kubectl("patch", "rsts", "web", "--type=merge", "-p", IMAGE)
        up.until(lambda: rolled_out(up, "web", 4, "nginx:1.28"), "the analysis passes and the rollout completes",
                 deadline=DEADLINE * 2, on_fail=lambda: str(_status(up)))
        (run,) = _runs(up)
        assert run["status"]["phase"] == "Successful"
        assert [m["value"] for m in run["status"]["metricResults"][0]["measurements"]] == ["0.01", "0.01"]
        deletes = _deletes(up, since)
        assert [name for _, name in deletes] == ["web-3", "web-2", "web-1", "web-0"]
        measured = [e["time"] for e in audit_entries(up) if e["resource"] == "analysisruns.apps.rollwise.dev/status"
                    and e["time"] >= since]
        assert measured and deletes[2][0] >= measured[-1], "web-1 waited for the verdict"
        assert "abort" not in _status(up)
