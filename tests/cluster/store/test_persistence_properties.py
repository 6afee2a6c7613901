"""Nothing lost on restart, as a property: after any sequence of writes (graceful pod deletion, finalizers,
owner-reference garbage collection, status writes), a store reopened on its data directory holds exactly the
same objects with the same resourceVersions and uids, and goes on numbering from where it stopped."""

from __future__ import annotations

import tempfile
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rollwise.api.errors import ApiStatusError
from rollwise.cluster.store.memory import MemoryCluster

NAMES = st.sampled_from(["a", "b", "c"])
OPS = st.lists(st.one_of(
    st.tuples(st.just("owner"), NAMES),
    st.tuples(st.just("pod"), NAMES, st.sampled_from([None, "a", "b"])),
    st.tuples(st.just("claim"), NAMES, st.booleans()),
    st.tuples(st.just("status"), NAMES),
    st.tuples(st.just("delete"), st.sampled_from(["Pod", "ConfigMap", "PersistentVolumeClaim"]), NAMES,
              st.sampled_from([None, 0]), st.sampled_from(["Background", "Foreground", "Orphan"])),
    st.tuples(st.just("unfinalize"), NAMES),
    st.tuples(st.just("reopen")),
), max_size=25)


def run(store: MemoryCluster, op: tuple[Any, ...]) -> None:
    try:
        if op[0] == "owner":
            store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": op[1]}})
        elif op[0] == "pod":
            meta: dict[str, Any] = {"name": op[1]}
            if op[2] is not None:
                owner = store.get("ConfigMap", "default", op[2])
                meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": op[2],
                                            "uid": owner["metadata"]["uid"], "controller": True,
                                            "blockOwnerDeletion": True}]
            store.create({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"nodeName": "n"}})
        elif op[0] == "claim":
            meta = {"name": op[1], "finalizers": ["kubernetes.io/pvc-protection"]} if op[2] else {"name": op[1]}
            store.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": {}})
        elif op[0] == "status":
            pod = store.get("Pod", "default", op[1])
            store.update_status({**pod, "status": {"phase": "Running", "startTime": 3.5}})
        elif op[0] == "delete":
            store.delete(op[1], "default", op[2], grace_period_seconds=op[3], propagation=op[4])
        elif op[0] == "unfinalize":
            store.patch("PersistentVolumeClaim", "default", op[1], {"metadata": {"finalizers": None}})
    except ApiStatusError:
        pass


def snapshot(store: MemoryCluster) -> list[Any]:
    return sorted(([o["kind"], o["metadata"]["name"], o] for o in store.objects()), key=lambda x: x[:2])


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_a_reopened_store_is_the_store_that_was_closed(ops: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as data:
        store = MemoryCluster.open(data, clock=lambda: 7.0)
        for op in ops:
            if op[0] == "reopen":
                before, rv = snapshot(store), store.resource_version
                store.close()
                store = MemoryCluster.open(data, clock=lambda: 7.0)
                assert snapshot(store) == before
                assert store.resource_version == rv
            else:
                run(store, op)
        before, rv = snapshot(store), store.resource_version
        store.close()
        again = MemoryCluster.open(data, clock=lambda: 7.0)
        assert snapshot(again) == before and again.resource_version == rv
        created = again.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "next"}})
        assert int(created["metadata"]["resourceVersion"]) == rv + 1
        assert created["metadata"]["uid"] not in {o[2]["metadata"]["uid"] for o in before}
        again.close()
