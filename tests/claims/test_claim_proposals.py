"""KEP-4650 on apps/v1 is a lab proposal: `up --proposals on` keeps it (with a warning), `--proposals off` answers
as every release does: the policy is an unknown field, a change of the claim templates is Forbidden."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from rollwise.api.errors import Invalid
from rollwise.api.validation import SPEC_UPDATE_FORBIDDEN
from rollwise.api.versions import parse_kube_version
from rollwise.apiserver.admission.versioning import Versioning
from rollwise.cluster.resources import STATEFULSET


def _set(storage: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "db"}}, **spec,
                     "template": {"metadata": {"labels": {"app": "db"}},
                                  "spec": {"containers": [{"name": "db", "image": "db:1"}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                               "spec": {"resources": {"requests": {"storage": storage}}}}]}}


def _versioning(proposals: bool) -> Versioning:
    release, _ = parse_kube_version("1.36", {})
    assert release is not None
    return Versioning(release, proposals=proposals)


def test_proposals_off_refuses_a_claim_template_change_as_every_release_does() -> None:
    with pytest.raises(Invalid) as refused:
        _versioning(False).admit(STATEFULSET, _set("2Gi"), _set("1Gi"))
    assert [str(e) for e in refused.value.errors] == [f"spec: Forbidden: {SPEC_UPDATE_FORBIDDEN}"]


def test_proposals_off_knows_no_volume_claim_update_policy() -> None:
    versioning = _versioning(False)
    body = _set("1Gi", volumeClaimUpdatePolicy="InPlace")
    [unknown] = versioning.unknown_fields(STATEFULSET, body)
    assert unknown.path == "spec.volumeClaimUpdatePolicy"
    admitted = versioning.admit(STATEFULSET, copy.deepcopy(body), None)
    assert "volumeClaimUpdatePolicy" not in admitted["spec"]


def test_proposals_on_keeps_both_and_warns_about_the_policy() -> None:
    versioning = _versioning(True)
    grown = _set("2Gi", volumeClaimUpdatePolicy="InPlace")
    assert versioning.admit(STATEFULSET, copy.deepcopy(grown), _set("1Gi")) == grown
    [warning] = versioning.warnings(STATEFULSET, grown, grown)
    assert warning.startswith("spec.volumeClaimUpdatePolicy: a Kubernetes 1.36.0 API server does not know the field")
