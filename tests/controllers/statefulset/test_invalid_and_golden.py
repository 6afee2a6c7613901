"""An invalid set is reported and left alone; settled clusters plan nothing; revision names are stable."""

from __future__ import annotations

import json

from builders import make_pod, make_set, revision_for

from rollwise.api.features import FeatureGates
from rollwise.api.revisions import canonical_json, fnv1_32, hash_revision_data, revision_name
from rollwise.controllers.plan import CreatePod, DeletePod, EmitEvent, WriteStatus
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView

UPSTREAM_RAW = (
    '{"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"test":"value"},"creationTimestamp":null,'
    '"labels":{"app":"foo"}},"spec":{"containers":[{"image":"test","imagePullPolicy":"Always","name":"test",'
    '"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],'
    '"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},'
    '"terminationGracePeriodSeconds":30}}}}'
)


def test_revision_hash_reproduces_the_upstream_compatibility_vector() -> None:
    """reference §3.1: FNV-1-32(raw + "0") = 733928534, safe-encoded c77f6d978 (revision test-c77f6d978)."""
    assert fnv1_32((UPSTREAM_RAW + "0").encode()) == 733928534
    assert hash_revision_data(UPSTREAM_RAW, 0) == "c77f6d978"
    assert revision_name("test", json.loads(UPSTREAM_RAW), 0) == "test-c77f6d978"
    assert canonical_json(json.loads(UPSTREAM_RAW)) == UPSTREAM_RAW


def test_revision_names_are_pinned_for_a_fixed_template() -> None:
    """A change here restarts every user's StatefulSet on upgrade (#134773): it must be deliberate."""
    assert revision_for(make_set())["metadata"]["name"] == "foo-675c9b55b9"


def test_collision_count_changes_the_name() -> None:
    sts = make_set()
    data = json.loads(canonical_json(revision_for(sts)["data"]))
    assert revision_name("foo", data, 0) != revision_name("foo", data, 1)


def test_a_settled_set_plans_nothing() -> None:
    sts = make_set(replicas=3)
    rev = revision_for(sts)
    settled = {**sts, "status": {
        "observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "currentReplicas": 3,
        "updatedReplicas": 3, "currentRevision": rev["metadata"]["name"], "updateRevision": rev["metadata"]["name"],
        "collisionCount": 0}}
    pods = tuple(make_pod(settled, i, revision=rev) for i in range(3))
    claims = {f"datadir-foo-{i}": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                   "metadata": {"name": f"datadir-foo-{i}", "namespace": "default"}}
              for i in range(3)}
    first = reconcile(SetView(set=settled, pods=pods, claims=claims, revisions=(rev,), now=0.0))
    assert [type(a).__name__ for a in first.actions] == ["WriteStatus"], "only the conditions are new"
    (write,) = first.of_type(WriteStatus)
    settled = {**settled, "status": write.status}
    plan = reconcile(SetView(set=settled, pods=pods, claims=claims, revisions=(rev,), now=50.0))
    assert plan.actions == ()


def test_an_invalid_set_gets_a_condition_and_an_event_and_no_pod_is_touched() -> None:
    sts = make_set(replicas=3)
    sts["spec"]["selector"] = {"matchLabels": {"other": "labels"}}  # does not match the template any more
    rev = revision_for(sts)
    pods = tuple(make_pod(sts, i, revision=revision_for(make_set(image="old"))) for i in range(2))
    gates = FeatureGates()
    plan = reconcile(SetView(set=sts, pods=pods, revisions=(rev,), now=5.0, gates=gates))
    assert not plan.of_type(CreatePod) and not plan.of_type(DeletePod)
    (event,) = plan.of_type(EmitEvent)
    assert event.event_type == "Warning" and event.event_reason == "InvalidSpec"
    assert "spec.template.metadata.labels" in event.message
    (write,) = plan.of_type(WriteStatus)
    (cond,) = write.status["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Progressing", "False", "InvalidSpec")
    again = reconcile(SetView(set={**sts, "status": write.status}, pods=pods, revisions=(rev,), now=9.0,
                              gates=gates))
    assert again.actions == (), "the same problem is not reported twice"
