"""The real kubectl (1.32) against ``rollwise up`` in a subprocess: scenario A of operator-plan.md §4, plus the
seeds' strategies as a user sees them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubectl_support import ROOT, Up, find_kubectl, namespace, start_up, statefulset, stop_up

KUBECTL = find_kubectl()
pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None, reason="no kubectl binary installed (kubectl.1.32 or kubectl)"),
    # The one server of the suite's kubectl tests is a real `python -m rollwise up` process, not a zygote's fork:
    # its entry point, start-up output and exit on SIGTERM are what the first test checks.
    pytest.mark.up(shared=True, real_process=True),
]


def _images(up: Up, ns: str, app: str) -> list[str]:
    out = up.kubectl("get", "pods", "-n", ns, "-l", f"app={app}", "-o",
                     "jsonpath={range .items[*]}{.spec.containers[0].image}{' '}{end}").stdout
    return out.split()


def test_up_prints_the_url_and_kubeconfig_first_then_the_export_line(up: Up) -> None:
    assert up.output[0].startswith("rollwise up: serving https://127.0.0.1:")
    assert up.output[1] == f"kubeconfig: {up.kubeconfig}"
    assert up.output[2] == f"export KUBECONFIG={up.kubeconfig}"
    assert "Server Version: v1.37" in up.kubectl("version").stdout
    assert up.kubectl("auth", "can-i", "delete", "pods").stdout.strip() == "yes"
    resources = up.kubectl("api-resources").stdout
    assert any(line.split()[:3] == ["statefulsets", "sts", "apps/v1"] for line in resources.splitlines())


def test_apply_rollout_watch_history_undo_restart_scale_describe(up: Up) -> None:
    namespace(up, "a")
    assert "statefulset.apps/web created" in up.apply(statefulset("web"), "-n", "a")
    assert "roll out complete" in up.kubectl("rollout", "status", "sts/web", "-n", "a", "--timeout=60s").stdout
    wide = up.kubectl("get", "pods", "-n", "a", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    assert [line.split()[:3] for line in wide[1:]] == [[f"web-{i}", "1/1", "Running"] for i in range(3)]
    sts = json.loads(up.kubectl("get", "sts", "web", "-n", "a", "-o", "json").stdout)
    assert sts["status"]["readyReplicas"] == 3 and sts["spec"]["updateStrategy"]["type"] == "RollingUpdate"
    assert "kind: StatefulSet" in up.kubectl("get", "sts", "web", "-n", "a", "-o", "yaml").stdout
    assert up.kubectl("get", "sts", "-n", "a").stdout.split()[:5] == ["NAME", "READY", "AGE", "web", "3/3"]

    watch = up.watch("pods", "-n", "a", "-o", "custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[0].image")
    try:
        watch.read_until(lambda lines: len(lines) >= 4)  # the header and the three pods as they are
        assert "image updated" in up.kubectl("set", "image", "sts/web", "app=nginx:1.27", "-n", "a").stdout
        watch.read_until(lambda lines: {f"web-{i}" for i in range(3)} <= {
            line.split()[0] for line in lines[4:] if line.split()[-1] == "nginx:1.27"})
    finally:
        watch.stop()
    up.kubectl("rollout", "status", "sts/web", "-n", "a", "--timeout=60s")
    assert _images(up, "a", "web") == ["nginx:1.27"] * 3

    history = up.kubectl("rollout", "history", "sts/web", "-n", "a").stdout.split()
    assert history[history.index("CHANGE-CAUSE") + 1:][::2] == ["1", "2"]
    assert "rolled back" in up.kubectl("rollout", "undo", "sts/web", "-n", "a").stdout
    up.kubectl("rollout", "status", "sts/web", "-n", "a", "--timeout=60s")
    up.until(lambda: _images(up, "a", "web") == ["nginx:1.26"] * 3, "the undo rolled every pod back")
    assert "restarted" in up.kubectl("rollout", "restart", "sts/web", "-n", "a").stdout
    up.kubectl("rollout", "status", "sts/web", "-n", "a", "--timeout=60s")

    assert "scaled" in up.kubectl("scale", "sts", "web", "--replicas=5", "-n", "a").stdout
    up.kubectl("rollout", "status", "sts/web", "-n", "a", "--timeout=60s")
    assert "condition met" in up.kubectl("wait", "--for=condition=Ready", "pod/web-4", "-n", "a",
                                         "--timeout=60s").stdout
    pod = up.kubectl("describe", "pod", "web-4", "-n", "a").stdout
    assert "Controlled By:  StatefulSet/web" in pod
    assert all(reason in pod for reason in ("Scheduled", "Pulling", "Started"))
    assert "started nginx:1.26" in up.kubectl("logs", "web-4", "-n", "a", "-c", "app").stdout
    describe = up.kubectl("describe", "sts", "web", "-n", "a").stdout
    assert "Pods Status:" in describe and "5 Running" in describe and "SuccessfulCreate" in describe
    assert "SuccessfulDelete" in up.kubectl("events", "--for", "sts/web", "-n", "a").stdout
    events = up.kubectl("get", "events", "-n", "a").stdout.splitlines()
    assert events[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert any("statefulset/web" in line for line in events[1:])
    uid = up.kubectl("get", "pod", "web-1", "-n", "a", "-o", "jsonpath={.metadata.uid}").stdout
    assert 'pod "web-1" deleted' in up.kubectl("delete", "pod", "web-1", "-n", "a", "--timeout=60s").stdout
    up.kubectl("wait", "--for=condition=Ready", "pod/web-1", "-n", "a", "--timeout=60s")
    assert up.kubectl("get", "pod", "web-1", "-n", "a", "-o", "jsonpath={.metadata.uid}").stdout != uid
    assert "a           web-0" in up.kubectl("get", "pods", "-A").stdout
    diff = up.kubectl("diff", "-n", "a", "-f", "-", stdin=statefulset("web", image="nginx:1.29", replicas=5),
                      check=False)
    assert diff.returncode == 1 and "+      - image: nginx:1.29" in diff.stdout
    assert _images(up, "a", "web") == ["nginx:1.26"] * 5  # the diff's dry run changed nothing
    running = up.kubectl("get", "pods", "-n", "a", "-l", "app=web", "--field-selector", "status.phase=Running",
                         "-o", "name").stdout.split()
    assert sorted(running) == [f"pod/web-{i}" for i in range(5)]
    assert up.kubectl("get", "pods", "-n", "a", "-l", "app!=web", "-o", "name").stdout == ""


def test_patch_types_label_and_server_side_apply(up: Up) -> None:
    namespace(up, "b")
    up.apply(statefulset("db", replicas=1, claims=False), "-n", "b")
    up.kubectl("patch", "sts", "db", "-n", "b", "--type", "merge", "-p", '{"metadata":{"labels":{"m":"1"}}}')
    up.kubectl("patch", "sts", "db", "-n", "b", "--type", "json",
               "-p", '[{"op":"add","path":"/metadata/labels/j","value":"2"}]')
    up.kubectl("patch", "sts", "db", "-n", "b", "--type", "strategic",
               "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}')
    up.kubectl("label", "sts", "db", "-n", "b", "l=3")
    up.kubectl("annotate", "sts", "db", "-n", "b", "note=kept")
    # Client-side apply of a built-in kind sends a strategic merge patch ($setElementOrder, merge keys).
    assert "statefulset.apps/db configured" in up.apply(
        statefulset("db", image="nginx:1.29", replicas=1, claims=False), "-n", "b")
    sts = json.loads(up.kubectl("get", "sts", "db", "-n", "b", "-o", "json").stdout)
    assert sts["metadata"]["labels"] == {"m": "1", "j": "2", "l": "3"}
    assert sts["metadata"]["annotations"]["note"] == "kept"
    container = sts["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx:1.29" and container["ports"][0]["containerPort"] == 80
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: '1'}\n"
    assert "serverside-applied" in up.kubectl("apply", "--server-side", "-n", "b", "-f", "-", stdin=cm).stdout
    cm2 = cm.replace("{a: '1'}", "{a: '1', b: '2'}")
    up.kubectl("apply", "--server-side", "-n", "b", "-f", "-", stdin=cm2)
    data = json.loads(up.kubectl("get", "cm", "settings", "-n", "b", "-o", "json").stdout)["data"]
    assert data == {"a": "1", "b": "2"}
    up.kubectl("rollout", "status", "sts/db", "-n", "b", "--timeout=60s")


def test_an_invalid_set_prints_the_field_paths_and_changes_nothing(up: Up) -> None:
    namespace(up, "c")
    bad = statefulset("bad", replicas=1, claims=False).replace("replicas: 1", "replicas: -1").replace(
        "  selector:", "  updateStrategy: {type: Sideways}\n  selector:")
    result = up.kubectl("apply", "-n", "c", "-f", "-", stdin=bad, check=False)
    assert result.returncode != 0
    assert 'The StatefulSet "bad" is invalid' in result.stderr
    assert "spec.replicas" in result.stderr and "spec.updateStrategy.type" in result.stderr
    assert up.kubectl("get", "sts", "-n", "c", "-o", "name").stdout == ""


def test_strict_field_validation_names_an_unknown_field_and_a_normal_apply_passes(up: Up) -> None:
    namespace(up, "sv")
    # A set with a template and a claim template: kubectl sends creationTimestamp: null in both, and the
    # last-applied annotation; all of it must pass strict validation.
    assert "statefulset.apps/ok created" in up.apply(statefulset("ok", replicas=1), "-n", "sv")
    typo = statefulset("typo", replicas=1).replace("  replicas: 1", "  replicaz: 1")
    result = up.kubectl("apply", "-n", "sv", "-f", "-", stdin=typo, check=False)
    assert result.returncode != 0
    assert 'strict decoding error: unknown field "spec.replicaz"' in result.stderr, result.stderr
    assert up.kubectl("get", "sts", "-n", "sv", "-o", "name").stdout == "statefulset.apps/ok\n"
    # An update of the existing set (a strategic merge patch) with the typo is refused too, and changes nothing.
    patched = statefulset("ok", replicas=1, image="nginx:1.29").replace("  replicas: 1", "  replicaz: 1")
    result = up.kubectl("apply", "-n", "sv", "-f", "-", stdin=patched, check=False)
    assert result.returncode != 0 and '"spec.replicaz"' in result.stderr, result.stderr
    ok = json.loads(up.kubectl("get", "sts", "ok", "-n", "sv", "-o", "json").stdout)
    assert ok["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
    # --validate=warn: stored without the field, and kubectl prints the server's Warning header.
    warned = up.kubectl("create", "-n", "sv", "-f", "-", "--validate=warn",
                        stdin=typo.replace("name: typo", "name: warned", 1))
    assert 'Warning: unknown field "spec.replicaz"' in warned.stderr, warned.stderr
    # --validate=false sends fieldValidation=Ignore: the set is stored without the unknown field.
    up.apply(typo, "-n", "sv", "--validate=false")
    stored = json.loads(up.kubectl("get", "sts", "typo", "-n", "sv", "-o", "json").stdout)
    assert "replicaz" not in stored["spec"] and stored["spec"]["replicas"] == 1


def test_delete_with_each_propagation_policy(up: Up) -> None:
    namespace(up, "d")
    for name in ("bg", "fg", "orphan"):
        up.apply(statefulset(name, replicas=2, claims=False), "-n", "d")
    for name in ("bg", "fg", "orphan"):
        up.kubectl("rollout", "status", f"sts/{name}", "-n", "d", "--timeout=60s")
    up.kubectl("delete", "sts", "fg", "-n", "d", "--cascade=foreground", "--wait=true", "--timeout=60s")
    # Foreground: the owner goes last, so its pods are gone when the wait returns.
    assert up.kubectl("get", "pods", "-n", "d", "-l", "app=fg", "-o", "name").stdout == ""
    up.kubectl("delete", "sts", "bg", "-n", "d", "--wait=true", "--timeout=60s")
    up.until(lambda: up.kubectl("get", "pods", "-n", "d", "-l", "app=bg", "-o", "name").stdout == "",
             "background deletion collected the pods")
    up.kubectl("delete", "sts", "orphan", "-n", "d", "--cascade=orphan", "--wait=true", "--timeout=60s")
    pods = json.loads(up.kubectl("get", "pods", "-n", "d", "-l", "app=orphan", "-o", "json").stdout)["items"]
    assert len(pods) == 2 and all(not p["metadata"].get("ownerReferences") for p in pods)


def _rows(lines: list[str]) -> list[tuple[str, str, bool]]:
    """(pod, image, terminating) per watch line of custom columns NAME, IMAGE, DELETED."""
    out = []
    for line in lines[1:]:
        parts = line.split()
        if len(parts) == 3:
            out.append((parts[0], parts[1], parts[2] != "<none>"))
    return out


_COLUMNS = "custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[0].image,DELETED:.metadata.deletionTimestamp"


def test_recreate_deletes_every_old_pod_before_the_first_new_one(up: Up) -> None:
    namespace(up, "r")
    up.apply(statefulset("rc", replicas=3, strategy="{type: Recreate}", claims=False), "-n", "r")
    up.kubectl("wait", "sts/rc", "-n", "r", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
    watch = up.watch("pods", "-n", "r", "-o", _COLUMNS)
    try:
        # The watch's own listing first: a kubectl slow to start would otherwise list only what the change left.
        watch.read_until(lambda ls: len(_rows(ls)) >= 3)
        up.kubectl("set", "image", "sts/rc", "app=nginx:1.27", "-n", "r")
        lines = watch.read_until(lambda ls: {p for p, img, dead in _rows(ls) if img == "nginx:1.27"} == {
            "rc-0", "rc-1", "rc-2"})
    finally:
        watch.stop()
    rows = _rows(lines)
    first_new = next(i for i, (_, img, _) in enumerate(rows) if img == "nginx:1.27")
    assert {p for p, img, dead in rows[:first_new] if dead and img == "nginx:1.26"} == {"rc-0", "rc-1", "rc-2"}
    up.kubectl("wait", "sts/rc", "-n", "r", "--for=jsonpath={.status.updatedReplicas}=3", "--timeout=60s")


def test_max_unavailable_two_takes_two_pods_down_at_once(up: Up) -> None:
    namespace(up, "m")
    up.apply(statefulset("mu", replicas=4, claims=False,
                         strategy="{type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}"), "-n", "m")
    up.kubectl("rollout", "status", "sts/mu", "-n", "m", "--timeout=60s")
    watch = up.watch("pods", "-n", "m", "-o", _COLUMNS)
    try:
        # The watch's own listing first: a kubectl slow to start would otherwise list only what the change left.
        watch.read_until(lambda ls: len(_rows(ls)) >= 4)
        up.kubectl("set", "image", "sts/mu", "app=nginx:1.27", "-n", "m")
        lines = watch.read_until(lambda ls: sum(1 for _, img, dead in _rows(ls) if dead) >= 2)
    finally:
        watch.stop()
    rows = _rows(lines)
    assert {p for p, _, dead in rows if dead} == {"mu-3", "mu-2"}
    assert not any(img == "nginx:1.27" for _, img, _ in rows)  # both went before any new pod appeared
    up.kubectl("rollout", "status", "sts/mu", "-n", "m", "--timeout=60s")
    assert _images(up, "m", "mu") == ["nginx:1.27"] * 4


def test_a_stuck_image_is_fixed_later_under_enforced_rolling_update(up: Up) -> None:
    namespace(up, "e")
    up.apply(statefulset("en", replicas=3, claims=False,
                         strategy="{type: EnforcedRollingUpdate, enforcedRollingUpdate: {maxUnavailable: 1}}"),
             "-n", "e")
    up.kubectl("wait", "sts/en", "-n", "e", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
    up.kubectl("set", "image", "sts/en", "app=nginx:typo", "-n", "e")

    def stuck() -> bool:
        out = up.kubectl("get", "pod", "en-2", "-n", "e").stdout
        return "ErrImagePull" in out or "ImagePullBackOff" in out

    up.until(stuck, "en-2 shows the image pull failure")
    assert 'Failed to pull image "nginx:typo"' in up.kubectl("events", "--for", "pod/en-2", "-n", "e").stdout
    logs = up.kubectl("logs", "en-2", "-n", "e", check=False)
    assert logs.returncode == 1 and logs.stderr.startswith(
        'Error from server (BadRequest): container "app" in pod "en-2" is waiting to start: ')
    assert "image can't be pulled" in logs.stderr or "trying and failing to pull image" in logs.stderr
    up.kubectl("set", "image", "sts/en", "app=nginx:1.28", "-n", "e")
    up.kubectl("wait", "sts/en", "-n", "e", "--for=jsonpath={.status.updatedReplicas}=3", "--timeout=60s")
    up.kubectl("wait", "sts/en", "-n", "e", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
    assert _images(up, "e", "en") == ["nginx:1.28"] * 3


def test_audit_log_names_the_user_verb_and_resource(up: Up) -> None:
    # Its own set: the suite's workers steal tests, so another test of this module may have run on another server.
    namespace(up, "audit")
    up.apply(statefulset("logged", replicas=1, claims=False), "-n", "audit")
    entries = [json.loads(line) for line in Path(up.audit_log).read_text().splitlines()]
    creates = [e for e in entries if e["verb"] == "create" and e["resource"] == "statefulsets.apps"
               and e.get("namespace") == "audit"]
    assert creates and all(e["user"] == "admin" and e["resourceVersion"] for e in creates)


def test_restart_with_a_data_dir_loses_nothing(tmp_path: Path) -> None:
    assert KUBECTL is not None
    data = tmp_path / "data"
    first = start_up(tmp_path, KUBECTL, "--data-dir", str(data))
    try:
        namespace(first, "keep")
        first.apply(statefulset("db", replicas=2), "-n", "keep")
        first.kubectl("apply", "-n", "keep", "-f", "-",
                      stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: '1'}\n")
        first.kubectl("rollout", "status", "sts/db", "-n", "keep", "--timeout=60s")
        before = json.loads(first.kubectl("get", "sts,pods,pvc,cm", "-n", "keep", "-o", "json").stdout)["items"]
    finally:
        assert stop_up(first.proc) == 0
    second = start_up(tmp_path, KUBECTL, "--data-dir", str(data))
    try:
        after = json.loads(second.kubectl("get", "sts,pods,pvc,cm", "-n", "keep", "-o", "json").stdout)["items"]
        assert second.url != "" and second.kubectl("get", "ns", "keep", "-o", "name").stdout.strip() == \
            "namespace/keep"
    finally:
        assert stop_up(second.proc) == 0

    def ids(items: list[dict[str, object]]) -> dict[tuple[str, str], str]:
        return {(str(o["kind"]), str(o["metadata"]["name"])): str(o["metadata"]["uid"])
                for o in items}

    assert ids(after) == ids(before)
    assert sum(1 for kind, _ in ids(after) if kind == "PersistentVolumeClaim") == 2
    cm = {o["metadata"]["name"]: o for o in after if o["kind"] == "ConfigMap"}["settings"]
    cm_before = {o["metadata"]["name"]: o for o in before if o["kind"] == "ConfigMap"}["settings"]
    assert cm["metadata"]["resourceVersion"] == cm_before["metadata"]["resourceVersion"]


def test_unauthenticated_requests_are_refused(up: Up) -> None:
    import ssl
    import urllib.error
    import urllib.request

    ca = tmp_ca(up)
    ctx = ssl.create_default_context(cadata=ca)
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(f"{up.url}/api/v1/namespaces/default/pods", context=ctx, timeout=10)
    assert err.value.code == 401
    assert json.loads(err.value.read())["reason"] == "Unauthorized"
    with urllib.request.urlopen(f"{up.url}/readyz", context=ctx, timeout=10) as ok:
        assert ok.status == 200


def tmp_ca(up: Up) -> str:
    import base64

    import yaml
    config = yaml.safe_load(up.kubeconfig.read_text())
    return base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()


def test_the_rollwise_kind_runs_with_its_short_name_printer_columns_and_scale(up: Up) -> None:
    namespace(up, "cr")
    manifest = statefulset("rw", replicas=2, claims=False).replace("apiVersion: apps/v1",
                                                                    "apiVersion: apps.rollwise.dev/v1alpha1")
    assert "statefulset.apps.rollwise.dev/rw created" in up.apply(manifest, "-n", "cr")
    up.kubectl("wait", "rsts/rw", "-n", "cr", "--for=jsonpath={.status.readyReplicas}=2", "--timeout=60s")
    table = up.kubectl("get", "rsts", "-n", "cr").stdout.split()
    assert table[:6] == ["NAME", "DESIRED", "CURRENT", "UPDATED", "READY", "AGE"] and table[6:11] == [
        "rw", "2", "2", "2", "2"]
    assert "statefulset.apps.rollwise.dev/rw scaled" in up.kubectl("scale", "rsts", "rw", "--replicas=3", "-n",
                                                                    "cr").stdout
    up.kubectl("wait", "rsts/rw", "-n", "cr", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
    # The built-in kind of the same name is another resource: `sts` does not see it.
    assert up.kubectl("get", "sts", "-n", "cr", "-o", "name").stdout == ""
    up.apply(manifest.replace("nginx:1.26", "nginx:1.27").replace("replicas: 2", "replicas: 3"), "-n", "cr")
    up.until(lambda: _images(up, "cr", "rw") == ["nginx:1.27"] * 3, "the rollwise kind rolled to the new image")


def test_applying_the_crd_as_the_install_guide_says_finds_it_unchanged_and_warns_of_nothing(up: Up) -> None:
    """`up` installs the CRD and its admission policy as `kubectl apply` leaves them, kubectl's record of what it
    applied included: docs/install.md's apply then has nothing to change, and no "missing the last-applied
    annotation" warning for each object."""
    applied = up.kubectl("apply", "-k", str(ROOT / "deploy" / "crds"))
    assert applied.stderr == ""
    assert applied.stdout.splitlines() == [
        "customresourcedefinition.apiextensions.k8s.io/analysisruns.apps.rollwise.dev unchanged",
        "customresourcedefinition.apiextensions.k8s.io/analysistemplates.apps.rollwise.dev unchanged",
        "customresourcedefinition.apiextensions.k8s.io/statefulsets.apps.rollwise.dev unchanged",
        "validatingadmissionpolicy.admissionregistration.k8s.io/rollwise-statefulset-keys unchanged",
        "validatingadmissionpolicybinding.admissionregistration.k8s.io/rollwise-statefulset-keys unchanged"]
    assert up.kubectl("diff", "-k", str(ROOT / "deploy" / "crds")).stdout == ""


def test_applying_the_operator_as_the_install_guide_says_finds_its_namespace_unchanged(up: Up) -> None:
    """`up` starts with the operator's namespace (where `rollwise run` takes its Lease), as `kubectl apply -k deploy/`
    leaves it: the guide's apply then warns of nothing."""
    up.kubectl("apply", "-k", str(ROOT / "deploy" / "crds"))
    applied = up.kubectl("apply", "-k", str(ROOT / "deploy"))
    assert applied.stderr == ""
    assert applied.stdout.splitlines()[0] == "namespace/rollwise-system unchanged"


def test_create_generators_send_protobuf_that_the_server_reads(up: Up) -> None:
    assert "namespace/gen created" in up.kubectl("create", "namespace", "gen").stdout
    up.kubectl("create", "configmap", "cfg", "-n", "gen", "--from-literal=a=b")
    up.kubectl("create", "secret", "generic", "sec", "-n", "gen", "--from-literal=k=v")
    up.kubectl("create", "service", "clusterip", "svc", "-n", "gen", "--tcp=80:8080")
    assert up.kubectl("get", "cm", "cfg", "-n", "gen", "-o", "jsonpath={.data.a}").stdout == "b"
    assert up.kubectl("get", "secret", "sec", "-n", "gen", "-o", "jsonpath={.data.k}").stdout == "dg=="
    svc = json.loads(up.kubectl("get", "svc", "svc", "-n", "gen", "-o", "json").stdout)["spec"]
    assert svc["ports"][0]["port"] == 80 and svc["ports"][0]["targetPort"] == 8080
    up.kubectl("create", "deployment", "d", "--image=x:1", "--replicas=2", "--port=80", "-n", "gen")
    dep = json.loads(up.kubectl("get", "deploy", "d", "-n", "gen", "-o", "json").stdout)["spec"]
    assert dep["replicas"] == 2 and dep["selector"]["matchLabels"] == {"app": "d"}
    assert dep["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] == 80
    up.kubectl("create", "rolebinding", "rb", "--clusterrole=view", "--user=bob", "-n", "gen")
    binding = json.loads(up.kubectl("get", "rolebinding", "rb", "-n", "gen", "-o", "json").stdout)
    assert binding["roleRef"]["name"] == "view" and binding["subjects"][0]["name"] == "bob"
    up.kubectl("create", "ingress", "i", "--rule=a.com/x*=svc:80", "-n", "gen")
    rule = json.loads(up.kubectl("get", "ingress", "i", "-n", "gen", "-o", "json").stdout)["spec"]["rules"][0]
    assert rule["host"] == "a.com"
    assert rule["http"]["paths"][0] == {"path": "/x", "pathType": "Prefix",
                                        "backend": {"service": {"name": "svc", "port": {"number": 80}}}}


def test_the_quorum_aware_controller_rolls_an_on_delete_set(up: Up) -> None:
    namespace(up, "q")
    manifest = statefulset("qa", replicas=3, claims=False, strategy="{type: OnDelete}").replace(
        "metadata:\n  name: qa", "metadata:\n  name: qa\n  annotations: {rollwise.dev/update-policy: QuorumAware}")
    up.apply(manifest, "-n", "q")
    up.kubectl("wait", "sts/qa", "-n", "q", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
    up.kubectl("set", "image", "sts/qa", "app=nginx:1.27", "-n", "q")
    up.until(lambda: _images(up, "q", "qa") == ["nginx:1.27"] * 3, "DEP-07 replaced every member")
    events = up.kubectl("get", "events", "-n", "q", "--field-selector", "involvedObject.name=qa").stdout
    assert "QuorumAwareDelete" in events
