"""kubectl's record of what it applied (``kubectl.kubernetes.io/last-applied-configuration``), written the way
kubectl 1.32 writes it, so that a server which seeds objects (``rollwise up``'s CRD) leaves them as an apply would."""

from __future__ import annotations

from rollwise.api.meta import LAST_APPLIED, last_applied_configuration

CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "rule", "namespace": "default", "labels": {"app": "x"}},
              "data": {"z": "1", "rule": "self.a < self.b && self.c > 0 — ok"}}
WRITTEN_BY_KUBECTL = (  # `kubectl apply -f` of CONFIG_MAP, read back from the annotation
    '{"apiVersion":"v1","data":{"rule":"self.a \\u003c self.b \\u0026\\u0026 self.c \\u003e 0 — ok","z":"1"},'
    '"kind":"ConfigMap","metadata":{"annotations":{},"labels":{"app":"x"},"name":"rule","namespace":"default"}}\n')


def test_the_record_is_what_kubectl_writes_byte_for_byte() -> None:
    assert last_applied_configuration(CONFIG_MAP) == WRITTEN_BY_KUBECTL


def test_an_earlier_record_is_left_out_of_the_new_one_and_other_annotations_kept() -> None:
    recorded = {**CONFIG_MAP, "metadata": {**CONFIG_MAP["metadata"],
                                           "annotations": {LAST_APPLIED: "{}", "team": "db"}}}
    assert last_applied_configuration(recorded) == WRITTEN_BY_KUBECTL.replace(
        '"annotations":{}', '"annotations":{"team":"db"}')
