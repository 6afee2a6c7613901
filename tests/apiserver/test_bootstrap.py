"""What `up` seeds into a data directory it opens: rollwise's CRD and admission policy as `kubectl apply -k
deploy/crds/` leaves them, brought up to this version when an older one is stored, and left alone when current."""

from __future__ import annotations

from pathlib import Path

from rollwise.api.meta import LAST_APPLIED, annotations_of
from rollwise.apiserver.store import ApiStore
from rollwise.cluster.crd import crd
from rollwise.cluster.resources import GroupKind

CRD = GroupKind("apiextensions.k8s.io", "CustomResourceDefinition")
NAME = crd()["metadata"]["name"]


def _stored(data_dir: Path) -> dict:
    store = ApiStore(data_dir=data_dir)
    try:
        return store.cluster.get(CRD, "", NAME)
    finally:
        store.cluster.close()


def test_an_older_crd_in_a_kept_data_dir_is_brought_up_to_date_with_kubectls_record(tmp_path: Path) -> None:
    store = ApiStore(data_dir=tmp_path)
    current = store.cluster.get(CRD, "", NAME)
    older = {**current, "metadata": {**current["metadata"], "annotations": {"team": "db"}},
             "spec": {**current["spec"], "names": {**current["spec"]["names"], "shortNames": []}}}
    store.cluster.update(older, actor="system")  # as an earlier release left it: older names, no kubectl record
    store.cluster.close()

    upgraded = _stored(tmp_path)
    assert upgraded["spec"] == crd()["spec"]
    assert annotations_of(upgraded)["team"] == "db"
    assert annotations_of(upgraded)[LAST_APPLIED] == annotations_of(current)[LAST_APPLIED]
    assert _stored(tmp_path)["metadata"]["resourceVersion"] == upgraded["metadata"]["resourceVersion"], \
        "a current CRD is not written again"
