"""Pod statuses of any shape, for generated inputs: what a scenario step or a careless client may write into a
pod's ``status``. Mostly near-misses of the real shape (a condition list holding a string, a container state that
is a number, a Ready condition with a text time), some plain JSON of any shape."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["hostile_statuses"]

_KEYS = ["phase", "conditions", "containerStatuses", "type", "status", "lastTransitionTime", "state", "lastState",
         "waiting", "running", "terminated", "reason", "name", "ready", "exitCode", "restartCount", "startedAt"]
_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**12), st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from(["x", "", "True", "Running", "Ready", "app", "CrashLoopBackOff", "soon"]))
_JSON = st.recursive(_LEAVES, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=3), max_leaves=8)
_CONDITION = st.fixed_dictionaries({}, optional={
    "type": st.one_of(st.just("Ready"), _JSON), "status": st.one_of(st.sampled_from(["True", "False"]), _JSON),
    "lastTransitionTime": st.one_of(st.integers(0, 100), _JSON)})
_STATE = st.one_of(_JSON, st.fixed_dictionaries({}, optional={
    "waiting": st.one_of(_JSON, st.fixed_dictionaries({"reason": st.one_of(st.just("CrashLoopBackOff"), _JSON)})),
    "running": _JSON, "terminated": _JSON}))
_CONTAINER = st.fixed_dictionaries({}, optional={
    "name": st.one_of(st.sampled_from(["app", "etcd"]), _JSON), "ready": _JSON, "restartCount": _JSON,
    "state": _STATE, "lastState": _STATE})


def _listed(item: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(_JSON, st.lists(st.one_of(item, _LEAVES), max_size=3))


hostile_statuses: st.SearchStrategy[Any] = st.one_of(
    _JSON,
    st.fixed_dictionaries({}, optional={
        "phase": st.one_of(st.sampled_from(["Running", "Pending", "Failed", "Succeeded"]), _JSON),
        "conditions": _listed(_CONDITION), "containerStatuses": _listed(_CONTAINER)}),
)
