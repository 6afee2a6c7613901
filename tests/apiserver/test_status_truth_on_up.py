"""`rollwise status` and `rollwise get --watch` against `rollwise up`, driven as a CI step drives them: every
`Progressing=False` failing reason ends `status` with exit 1 as soon as the controller says it (not at the
timeout), and the exit codes tell a failure, a timeout and a set that cannot be asked about apart
(docs/watching-rollouts.md). `get --watch` says when the set it follows is deleted, and exits 4."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import zygote
from kubectl_support import DEADLINE, Up, hooked_set, statefulset, stop_up

from rollwise.api.reasons import FAILING_REASONS

pytestmark = pytest.mark.kubectl

IN_PLACE_ONLY = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1, podUpdatePolicy: InPlaceOnly}}
  template:
    metadata: {labels: {app: web}}
    spec: {terminationGracePeriodSeconds: 1, containers: [{name: app, image: "nginx:1.27"}]}
"""
MIXED = ('{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28",'
         '"env":[{"name":"MODE","value":"fast"}]}]}}}}')


def _rollwise(up: Up, *args: str) -> subprocess.CompletedProcess[str]:
    return zygote.run(args, env={**up.env, "NO_COLOR": "1"}, timeout=DEADLINE * 2)


def _complete(up: Up, kind: str) -> None:
    done = _rollwise(up, "status", f"{kind}/web", "--timeout", f"{DEADLINE:g}s")
    assert done.returncode == 0, done.stderr


def test_status_fails_as_soon_as_a_pre_delete_hook_times_out(up: Up) -> None:
    up.install_crd()
    up.apply(hooked_set(timeout=2))
    _complete(up, "rsts")
    up.kubectl("scale", "rsts/web", "--replicas=2")
    failed = _rollwise(up, "status", "rsts/web")  # no --timeout: only the failure ends it
    assert failed.returncode == 1, (failed.stdout, failed.stderr)
    assert failed.stderr.startswith("error: statefulset.apps.rollwise.dev/web rollout failed"), failed.stderr
    assert "PreDeleteHookTimeout: " in failed.stderr
    assert failed.stdout.splitlines()[-1].startswith("✖ Degraded - PreDeleteHookTimeout: "), failed.stdout
    shown = _rollwise(up, "get", "rsts/web").stdout
    assert "Status:      ✖ Degraded" in shown, shown
    kubectl_like = _rollwise(up, "rollout", "status", "rsts/web")
    assert kubectl_like.returncode == 1, kubectl_like.stdout
    assert kubectl_like.stderr.startswith('error: statefulset "web" rollout failed: PreDeleteHookTimeout: ')


def test_status_fails_as_soon_as_an_in_place_only_change_is_impossible(up: Up) -> None:
    up.install_crd()
    up.apply(IN_PLACE_ONLY)
    _complete(up, "rsts")
    up.kubectl("patch", "rsts", "web", "--type=merge", "-p", MIXED)
    failed = _rollwise(up, "status", "rsts/web")
    assert failed.returncode == 1, (failed.stdout, failed.stderr)
    assert "InPlaceUpdateImpossible: " in failed.stderr, failed.stderr
    once = _rollwise(up, "status", "rsts/web", "--watch=false")
    assert once.returncode == 1, "a failed rollout is failed when asked once too"


def test_status_exit_codes_tell_timeout_not_found_and_deleted_apart(up: Up) -> None:
    up.apply(statefulset("web", replicas=1, claims=False))
    _complete(up, "sts")
    up.kubectl("patch", "sts", "web", "--type=merge", "-p",
               json.dumps({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:typo"}]}}}}))
    stuck = _rollwise(up, "status", "sts/web", "--timeout", "1s")
    assert stuck.returncode == 3, (stuck.stdout, stuck.stderr)
    assert stuck.stderr.startswith("error: timed out after 1s waiting for statefulset.apps/web")

    missing = _rollwise(up, "status", "sts/nope")
    assert (missing.returncode, missing.stdout) == (4, ""), missing.stderr
    assert missing.stderr == 'error: statefulsets.apps "nope" not found in namespace "default"\n'

    following = zygote.spawn(["status", "sts/web"], env={**up.env, "NO_COLOR": "1"})
    try:
        assert following.stdout is not None
        assert following.stdout.readline().startswith("◌ Progressing"), "status follows the set"
        up.kubectl("delete", "sts", "web")
        assert following.wait(timeout=DEADLINE) == 4
        _, err = following.communicate(timeout=DEADLINE)
        assert "statefulset.apps/web was deleted while its rollout was followed" in err
    finally:
        if following.poll() is None:
            following.kill()


def test_status_says_it_could_not_ask_when_the_api_server_stops_answering_while_it_waits(up: Up) -> None:
    up.apply(statefulset("web", replicas=1, claims=False, image="nginx:typo"))
    following = zygote.spawn(["status", "sts/web", "--timeout", "10s"], env={**up.env, "NO_COLOR": "1"})
    try:
        assert following.stdout is not None
        assert following.stdout.readline(), "status follows the set"
        stop_up(up.proc)
        assert following.wait(timeout=DEADLINE) == 4, "not 3: the rollout was not slow, nothing could be asked"
        _, err = following.communicate(timeout=DEADLINE)
        assert err.startswith("error: statefulset.apps/web: the API server stopped answering: "), err
    finally:
        if following.poll() is None:
            following.kill()


def test_get_watch_says_when_the_set_is_deleted_and_exits_4(up: Up) -> None:
    up.apply(statefulset("web", replicas=1, claims=False))
    _complete(up, "sts")
    watching = zygote.spawn(["get", "sts/web", "--watch"], env={**up.env, "NO_COLOR": "1"})
    try:
        assert watching.stdout is not None
        assert watching.stdout.readline().startswith("Name:        sts/web"), "the picture comes first"
        up.kubectl("delete", "sts", "web")
        assert watching.wait(timeout=DEADLINE) == 4
        out, err = watching.communicate(timeout=DEADLINE)
        assert out.splitlines()[-1] == 'statefulset.apps/web was deleted from namespace "default" while it was followed'
        assert err == f"error: {out.splitlines()[-1]}\n"
    finally:
        if watching.poll() is None:
            watching.kill()


def test_the_documented_failing_reasons_are_the_table() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "watching-rollouts.md").read_text()
    for reason in FAILING_REASONS:
        assert f"`{reason}`" in text, f"{reason} is not documented among status's failing reasons"
