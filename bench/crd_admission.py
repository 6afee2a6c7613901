"""What a write costs through a CRD's schema, CEL rules and admission policy, against the built-in kind's
rollwise validation: a dry-run create and a dry-run update (replicas changed) of the same StatefulSet, in process.

Run: `.venv/bin/python bench/crd_admission.py [--writes 300]`. Times are per write on this machine.
"""

from __future__ import annotations

import argparse
import copy
import time
from typing import Any

from rollwise.apiserver.storage.store import ApiStore


def _body(name: str, api_version: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"replicas": 3, "serviceName": name, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writes", type=int, default=300)
    writes = parser.parse_args().writes
    store = ApiStore()
    for group, version in (("apps", "v1"), ("apps.rollwise.dev", "v1alpha1")):
        resource = store.registry.find(group, version, "statefulsets")
        assert resource is not None
        start = time.perf_counter()
        for i in range(writes):
            store.create(resource, "default", _body(f"w{i}", resource.api_version), actor="bench", dry_run=True)
        create_ms = (time.perf_counter() - start) / writes * 1e3
        stored = store.create(resource, "default", _body("x", resource.api_version), actor="bench")
        start = time.perf_counter()
        for i in range(writes):
            body = copy.deepcopy(stored)
            body["spec"]["replicas"] = 3 + i % 2
            store.update(resource, "default", "x", body, actor="bench", dry_run=True)
        update_ms = (time.perf_counter() - start) / writes * 1e3
        print(f"{resource.api_version:<28} create {create_ms:5.2f} ms   update {update_ms:5.2f} ms")


if __name__ == "__main__":
    main()
