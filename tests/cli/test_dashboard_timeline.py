"""The dashboard's timeline colours each stretch of a pod's life by the revision it ran then: a patch that changes
the set's update revision changes nothing in the lanes of pods it has not touched yet."""

from __future__ import annotations

from typing import Any

from builders import make_pod, make_set, revision_for, with_image

from rollwise.api.meta import Obj
from rollwise.cli.dashboard.timeline import Timeline
from rollwise.projection import RolloutView, project


def _view(sts: Obj, pods: list[Obj], revisions: list[Obj], current: Obj, update: Obj, now: float) -> RolloutView:
    sts["status"] = {"observedGeneration": sts["metadata"]["generation"], "replicas": 3, "readyReplicas": 3,
                     "availableReplicas": 3, "currentRevision": current["metadata"]["name"],
                     "updateRevision": update["metadata"]["name"],
                     "updatedReplicas": sum(p["metadata"]["labels"]["controller-revision-hash"]
                                            == update["metadata"]["name"] for p in pods)}
    return project(sts, kind="sts", pods=pods, revisions=revisions, now=now)


def _lanes(timeline: Timeline) -> dict[str, list[tuple[Any, ...]]]:
    out: dict[str, list[tuple[Any, ...]]] = {}
    for s in timeline.to_json()["segments"]:
        out.setdefault(s["pod"], []).append((s["revision"], s["band"], s["from"]))
    return out


def test_a_patch_does_not_recolour_the_pods_it_has_not_touched() -> None:
    first = make_set("web", image="nginx:1.26")
    a = revision_for(first, 1)
    pods = [make_pod(first, o, revision=a) for o in range(3)]
    timeline = Timeline()
    timeline.observe(_view(first, pods, [a], a, a, 10.0), since={p["metadata"]["name"]: 0.0 for p in pods})
    before = _lanes(timeline)

    patched = with_image(first, "nginx:1.27")
    b = revision_for(patched, 2)
    timeline.observe(_view(patched, pods, [a, b], a, b, 20.0))  # the patch: no pod has moved yet
    assert _lanes(timeline) == before, "untouched pods keep their lane and its colour"

    moved = [*pods[:2], make_pod(patched, 2, revision=b)]
    timeline.observe(_view(patched, moved, [a, b], a, b, 30.0))
    lanes = _lanes(timeline)
    assert lanes["web-0"] == before["web-0"] and lanes["web-1"] == before["web-1"]
    assert [(rev, band) for rev, band, _ in lanes["web-2"]] == [
        (a["metadata"]["name"], "available"), (b["metadata"]["name"], "available")]
    data = timeline.to_json()
    assert data["revisions"] == [a["metadata"]["name"], b["metadata"]["name"]], "colours in order of first run"
