"""An aborted rollout ends with every pod at the stable revision (issue 42; api/abort.py).

While ``status.abort`` holds, the stable revision (``status.currentRevision``) is the one every in-range pod should
run: the rule names each pod that does not. A state owes it at its end, not at every step (the pods go back one
budget at a time), so the explorer reads it as part of what a finished rollout is (``explore/search.py``): from
every state from which a rollout is owed, healthy moves must reach one where this list is empty.
"""

from __future__ import annotations

from collections.abc import Iterable

from rollwise.api.abort import is_aborted
from rollwise.api.identity import ordinal_of, ordinal_range, revision_of
from rollwise.api.meta import Obj, name_of

__all__ = ["off_the_stable_revision"]


def off_the_stable_revision(sts: Obj, pods: Iterable[Obj]) -> list[str]:
    """What keeps an aborted rollout from having ended: each in-range pod not at the stable revision."""
    status = sts.get("status") or {}
    if not is_aborted(status):
        return []
    stable = status.get("currentRevision")
    span = ordinal_range(sts)
    return [f"the rollout is aborted and {name_of(pod)} runs revision {revision_of(pod)}, not the stable revision "
            f"{stable}" for pod in pods if ordinal_of(pod) in span and revision_of(pod) != stable]
