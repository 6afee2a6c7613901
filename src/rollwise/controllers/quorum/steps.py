"""DEP-07's update procedure: which member to delete now, or what to wait for (seed 001 "Pod Update Procedure").

Order per reconcile, as etcd-druid implements it (reference §1.2): step 1 (nothing outdated → done), the top gate
(a pod terminating or missing → hold), step 2 (an outdated non-participating pod: Dead, Transient, then Alive),
step 3 (an updated pod not participating → hold), step 4 (an outdated participating pod: followers, then the
leader). Step 5 is the next reconcile. Step 2 runs before step 3 on purpose: a member that contributes nothing can
be replaced while an updated one is still rejoining.
"""

from __future__ import annotations

from dataclasses import dataclass

from rollwise.api.predicates import CONTAINER_ALIVE, CONTAINER_DEAD, CONTAINER_TRANSIENT
from rollwise.controllers.plan import Blocked
from rollwise.controllers.quorum.members import Member, Roster
from rollwise.controllers.quorum.settings import AUTO, Settings

__all__ = ["Decision", "Deletion", "batch_size", "decide"]

# seed 001 step 2 table: the most broken first; a live process is kept longest to help restore quorum.
_STEP2_RANK = {CONTAINER_DEAD: 0, CONTAINER_TRANSIENT: 1, CONTAINER_ALIVE: 2}


@dataclass(frozen=True, slots=True, kw_only=True)
class Deletion:
    """One member to delete, the step that chose it and why; ``unless_leader`` is the Lease to re-check."""

    member: Member
    step: int
    message: str
    unless_leader: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """Either deletions, or waits, or done (nothing outdated)."""

    deletions: tuple[Deletion, ...] = ()
    waits: tuple[Blocked, ...] = ()
    done: bool = False
    wake_at: float | None = None
    """When time alone ends the wait (an updated member becomes available): the plan's requeue."""

    @property
    def message(self) -> str:
        """What the controller does or waits for, one line: the condition message and the event text."""
        if self.deletions:
            return "; ".join(d.message for d in self.deletions)
        return "; ".join(str(w) for w in self.waits)


def decide(roster: Roster, settings: Settings) -> Decision:
    """One reconcile's choice: at most one deletion, or a batch of followers when max-unavailable-members allows."""
    outdated = roster.outdated
    if not outdated:
        return Decision(done=True)  # step 1

    # Top gate (reference §1.2, etcd-druid b6bbedc3): one deletion (or batch) in flight at a time. A terminating
    # pod, or an ordinal not yet recreated, means the last deletion has not played out; scale-up holds too.
    if roster.terminating or roster.missing:
        waits = [Blocked(pod=name, cause="terminating") for name in roster.terminating]
        have = len(roster.members)
        waits += [Blocked(pod=name, cause=f"not yet recreated ({have} of {roster.replicas} members exist)")
                  for name in roster.missing]
        return Decision(waits=tuple(waits))

    # Step 2. Unknown (no container status) is skipped, as etcd-druid does. Ties: highest ordinal first, so the
    # choice does not depend on list order (etcd-druid takes the first pod in list order).
    candidates = [m for m in outdated if not m.participating and m.health in _STEP2_RANK]
    if candidates:
        pick = min(candidates, key=lambda m: (_STEP2_RANK[m.health or ""], -m.ordinal))
        return Decision(deletions=(Deletion(member=pick, step=2,
                                            message=f"step 2: {pick.name} is not participating ({pick.state})"),))

    # Step 3: never remove a participating member while an updated one has not rejoined the quorum.
    lagging = [m for m in roster.updated if not m.participating]
    if lagging:
        return Decision(waits=tuple(Blocked(pod=m.name, cause=f"updated but not participating ({m.state})")
                                    for m in lagging))
    # ...nor before it has been Ready for the set's minReadySeconds: a member that turned Ready at a probe tick
    # is not yet available (reference §5.7), and the next deletion would take the quorum's margin with it.
    settling = [m for m in roster.updated if not m.settled]
    if settling:
        wakes = [m.available_at for m in settling if m.available_at is not None]
        return Decision(waits=tuple(Blocked(pod=m.name, cause="updated and participating, not yet available for "
                                                             "minReadySeconds") for m in settling),
                        wake_at=min(wakes) if wakes else None)

    # Step 4: every outdated pod left is participating, except Unknown ones step 2 skipped.
    ready = [m for m in outdated if m.participating]
    if not ready:
        return Decision(waits=tuple(Blocked(pod=m.name, cause=f"outdated, state unknown ({m.state})")
                                    for m in outdated))
    if roster.replicas == 1:
        # seed 001 "Single-Node Clusters": no quorum to keep and no election to avoid; delete it and wait.
        only = ready[0]
        return Decision(deletions=(Deletion(member=only, step=4,
                                            message=f"step 4: {only.name} is the only member of the set"),))
    followers = sorted((m for m in ready if not m.leader), key=lambda m: -m.ordinal)
    if not followers:
        leader = max(ready, key=lambda m: m.ordinal)
        return Decision(deletions=(Deletion(
            member=leader, step=4, message=f"step 4: {leader.name} is the leader, updated last ({leader.role})"),))
    n = min(batch_size(roster, settings), len(followers))
    batch = f"; batch of {n} (max-unavailable-members {settings.max_unavailable})" if n > 1 else ""
    return Decision(deletions=tuple(
        Deletion(member=m, step=4, unless_leader=m.lease,
                 message=f"step 4: {m.name} is a participating follower ({m.role}){batch}")
        for m in followers[:n]
    ))


def batch_size(roster: Roster, settings: Settings) -> int:
    """How many participating followers step 4 may delete at once.

    Without the annotation: 1 (DEP-07). ``auto``: participating - quorum. An int: that many. Either way capped so
    participating members stay at or above quorum, but never below 1: one deletion is DEP-07's baseline, which a
    set without headroom (2 members, say) takes anyway since its rollout could not finish otherwise. So ``auto``
    with no headroom means 1.
    """
    if settings.max_unavailable is None:
        return 1
    headroom = roster.participating - roster.quorum
    wanted = headroom if settings.max_unavailable == AUTO else int(settings.max_unavailable)
    return max(1, min(wanted, headroom))
