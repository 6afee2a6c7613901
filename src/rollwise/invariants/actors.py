"""one-actor-per-object: one pod (one incarnation: from its create to its delete) is deleted by one actor.

Two controllers that both run a set each decide to delete the same member: the audit log then holds two delete
requests for one pod from two users, the second usually refused (409 ``Precondition failed: UID``, or 404). That is
the mark of two controllers acting on one object (``up``'s and the operator's in the same cluster, issue 38), so the
refused request counts too. The kubelet's final delete of a pod it terminated completes the first one, and is no
second decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DeleteActors"]

_KUBELET_PREFIX = "system:node:"

PodKey = tuple[str, str]


@dataclass(slots=True)
class DeleteActors:
    """Who asked to delete each pod incarnation, and on which line: fed every audit line in order."""

    _first: dict[PodKey, tuple[str, int]] = field(default_factory=dict)

    def created(self, pod: PodKey) -> None:
        """A new incarnation under the name: nobody has asked to delete it yet."""
        self._first.pop(pod, None)

    def delete_asked(self, pod: PodKey, user: str, line: int) -> tuple[str, int] | None:
        """Record a delete request (refused or not); the first asker and its line when ``user`` is a second one."""
        if user.startswith(_KUBELET_PREFIX):
            return None
        first = self._first.setdefault(pod, (user, line))
        return first if first[0] != user else None
