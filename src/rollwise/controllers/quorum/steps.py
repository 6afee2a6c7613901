"""DEP-07's update procedure: which member to delete now, or what to wait for (seed 001 "Pod Update Procedure").

Order per reconcile, after etcd-druid (reference §1.2): a status the StatefulSet controller has not written for the
set's current generation → hold; step 1 (nothing outdated → done); a pod terminating → hold; step 2 (an outdated
non-participating pod: Dead, Transient, then Alive); a missing ordinal → hold; step 3 (an updated pod not
participating → hold); step 4 (an outdated participating pod: followers, then the leader), only while the members
left participating are still a quorum. Step 5 is the next reconcile. Step 2 runs before step 3 on purpose: a member
that contributes nothing can be replaced while an updated one is still rejoining.

Deviations from etcd-druid, each because it can stall or break quorum: the top gate's "fewer pods than replicas"
half holds only participating deletions (step 2 may go on), and step 4 checks quorum itself rather than trusting
that every member it cannot classify (Unknown) will participate.
"""

from __future__ import annotations

from dataclasses import dataclass

from rollwise.api.leader_transfer import requested_at, transfer_target
from rollwise.api.predicates import CONTAINER_ALIVE, CONTAINER_DEAD, CONTAINER_TRANSIENT, is_terminating
from rollwise.controllers.plan import Blocked
from rollwise.controllers.quorum.members import Member, Roster
from rollwise.controllers.quorum.settings import AUTO, Settings

__all__ = ["Decision", "Deletion", "TransferRequest", "batch_size", "decide", "quorum_floor", "within_canary"]

# seed 001 step 2 table: the most broken first; a live process is kept longest to help restore quorum.
_STEP2_RANK = {CONTAINER_DEAD: 0, CONTAINER_TRANSIENT: 1, CONTAINER_ALIVE: 2}


@dataclass(frozen=True, slots=True, kw_only=True)
class Deletion:
    """One member to delete, the step that chose it and why; ``unless_leader`` is the Lease to re-check."""

    member: Member
    step: int
    message: str
    unless_leader: str | None = None
    transfer_timed_out: bool = False
    """The leader is deleted because the hand-over it was asked for did not happen in time."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TransferRequest:
    """Ask the leader ``member`` to hand leadership to ``target`` (``rollwise.api.leader_transfer``)."""

    member: Member
    target: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """Either deletions, or waits, or done (nothing outdated)."""

    deletions: tuple[Deletion, ...] = ()
    requests: tuple[TransferRequest, ...] = ()
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
    if roster.observed_generation < roster.generation:
        # status.updateRevision is the StatefulSet controller's word on which revision is current; until its status
        # has observed this generation, an outdated-looking pod may be one it has just created at the new revision
        # (it crashed before its status write). Controllers that read another's status wait for it, as
        # kubectl rollout status does; the status write wakes this controller.
        return Decision(waits=(Blocked(pod="", cause=(
            f"status is for generation {roster.observed_generation}, the set is at generation {roster.generation} "
            "(the StatefulSet controller has not observed it yet)")),))
    outdated = roster.outdated
    if not outdated:
        return Decision(done=True)  # step 1

    # Top gate (reference §1.2, etcd-druid b6bbedc3): one deletion (or batch) in flight at a time. A terminating
    # pod means the last deletion has not played out.
    if roster.terminating:
        return Decision(waits=tuple(Blocked(pod=name, cause="terminating") for name in roster.terminating)
                        + _not_recreated(roster))

    # Step 2. Unknown (no container status) is skipped, as etcd-druid does. Ties: highest ordinal first, so the
    # choice does not depend on list order (etcd-druid takes the first pod in list order). Not held by a missing
    # ordinal, unlike etcd-druid's gate: deleting a member that does not participate cannot lower the participating
    # count, and under OrderedReady the StatefulSet controller creates the next ordinal only once this one is
    # Ready, which a member on a broken, now outdated template never is: waiting would wait for ever.
    # A member that is not Ready but answers the role probe that it leads is no member that contributes nothing:
    # replacing it first would be the very election the order avoids. It goes last, as the leader (below).
    candidates = [m for m in outdated if not m.participating and not m.claims_leadership and m.health in _STEP2_RANK]
    if candidates:
        pick = min(candidates, key=lambda m: (_STEP2_RANK[m.health or ""], -m.ordinal))
        return Decision(deletions=(Deletion(member=pick, step=2,
                                            message=f"step 2: {pick.name} is not participating ({pick.state})"),))

    # The gate's other half (reference §1.2), kept for participating members: an ordinal not yet recreated is
    # the last deletion still playing out, or a scale-up under way.
    if roster.missing:
        return Decision(waits=_not_recreated(roster))

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
    if not ready and len(outdated) == 1 and outdated[0].claims_leadership:
        # The leader, last, though not Ready: its deletion takes no Ready member from the quorum.
        if settings.leader_transfer:
            return _hand_over(roster, settings, outdated[0])
        return Decision(deletions=(Deletion(member=outdated[0], step=4, message=(
            f"step 4: {outdated[0].name} is the leader, updated last ({outdated[0].role}; not Ready)")),))
    if not ready:
        return Decision(waits=tuple(Blocked(pod=m.name, cause=f"outdated, state unknown ({m.state})")
                                    for m in outdated))
    # A probed member is a follower only by its own clear, fresh answer; one whose role is unknown might lead. And
    # only while some member says it leads: a probe at the wrong path answers every member alike ("not me").
    followers = sorted((m for m in ready if not m.leader and m.role_known), key=lambda m: -m.ordinal)
    if roster.roles_untold is not None and not roster.leader_claimed:
        followers = []
    n = batch_size(roster, settings)
    if n < 1:
        return _below_quorum(roster, followers[0] if followers else max(ready, key=lambda m: m.ordinal))
    if roster.replicas == 1:
        # seed 001 "Single-Node Clusters": no quorum to keep and no election to avoid; delete it and wait.
        only = ready[0]
        return Decision(deletions=(Deletion(member=only, step=4,
                                            message=f"step 4: {only.name} is the only member of the set"),))
    if not followers and roster.roles_untold is not None:
        # DEP-07 step 4, follower before leader, when roles are probed (api/role_probe.py): the outdated members
        # left might be the leader and the leader cannot be told, so none of them goes; never a guess.
        return Decision(waits=tuple(Blocked(pod=m.name, cause=f"might be the leader, which cannot be told "
                                                              f"({roster.roles_untold})") for m in ready))
    if not followers:
        leader = max(ready, key=lambda m: m.ordinal)
        if settings.leader_transfer:
            return _hand_over(roster, settings, leader)
        return Decision(deletions=(Deletion(
            member=leader, step=4, message=f"step 4: {leader.name} is the leader, updated last ({leader.role})"),))
    if settings.leader_transfer and (moving := _moving(roster, followers, settings)) is not None:
        return moving
    n = min(n, len(followers))
    batch = f"; batch of {n} (max-unavailable-members {settings.max_unavailable})" if n > 1 else ""
    return Decision(deletions=tuple(
        Deletion(member=m, step=4, unless_leader=m.lease,
                 message=f"step 4: {m.name} is a participating follower ({m.role}){batch}")
        for m in followers[:n]
    ))


def within_canary(decision: Decision, roster: Roster, limit: int | None) -> Decision:
    """The decision, held to a canary step's count (``api/steps.canary_limit``: None caps nothing): no deletion nor
    hand-over request once ``limit`` members are at the update revision, and a batch cut to the room left. The
    order stays DEP-07's, so the canary is followers, the leader last: a canary of one is never the leader while a
    follower is outdated. Members not yet recreated count as updated (the StatefulSet controller creates them at
    the update revision)."""
    if limit is None or not (decision.deletions or decision.requests):
        return decision
    at_update = len(roster.updated) + len(roster.missing)
    room = limit - at_update
    if room <= 0:
        return Decision(waits=(Blocked(pod="", cause=(
            f"canary step: {at_update} of {roster.replicas} members at the update revision, as many as the step "
            "allows, until `rollwise rollout promote` or the next step")),))
    return Decision(deletions=decision.deletions[:room], requests=decision.requests, waits=decision.waits,
                    wake_at=decision.wake_at)


def _hand_over(roster: Roster, settings: Settings, leader: Member) -> Decision:
    """The leader goes last (DEP-07 step 4); with ``rollwise.dev/leader-transfer`` it is first asked to hand
    leadership to an updated follower, as role-aware operators do before restarting a leader, so the cluster moves
    leadership in one heartbeat instead of an election timeout. Once the Leases name another leader, this member is
    a follower and step 4 deletes it as one. Bounded: after the set's timeout the leader is deleted as without the
    hook, and the deletion says so."""
    # Every updated member is participating and available here (step 3 held otherwise). The longest-running one
    # (the first updated: followers go highest ordinal first) is the target, as etcd picks the longest-connected
    # voter when it hands over on its own.
    targets = [m for m in roster.updated if m.settled and not is_terminating(m.pod)]
    if not targets:
        return Decision(deletions=(Deletion(member=leader, step=4, message=(
            f"step 4: {leader.name} is the leader, updated last ({leader.role}); no updated member to hand "
            "leadership to")),))
    asked, at = transfer_target(leader.pod), requested_at(leader.pod)
    limit = f"{settings.transfer_timeout:g}s"
    if asked in {m.name for m in targets} and at is not None:
        deadline = at + settings.transfer_timeout
        if roster.now >= deadline:
            return Decision(deletions=(Deletion(member=leader, step=4, transfer_timed_out=True, message=(
                f"step 4: {leader.name} is still the leader {limit} after it was asked to hand leadership to "
                f"{asked} ({leader.role}); deleted without a hand-over")),))
        return Decision(waits=(_transfer_wait(leader, asked, limit),), wake_at=deadline)
    target = max(targets, key=lambda m: m.ordinal)
    return Decision(requests=(TransferRequest(member=leader, target=target.name, message=(
        f"step 4: {leader.name} is the leader, updated last ({leader.role}); asked to hand leadership to "
        f"{target.name} first")),), waits=(_transfer_wait(leader, target.name, limit),),
        wake_at=roster.now + settings.transfer_timeout)


def _moving(roster: Roster, followers: list[Member], settings: Settings) -> Decision | None:
    """A leader that was asked to hand over no longer reads as leader, but no member reads as leader yet: the
    hand-over is under way (or the Leases lag). Deleting it now would stop the member that is handing over, so the
    wait goes on until a Lease names the new leader, bounded by the same deadline."""
    if any(m.leader for m in roster.members):
        return None
    for m in followers:
        asked, at = transfer_target(m.pod), requested_at(m.pod)
        if asked is not None and at is not None and roster.now < at + settings.transfer_timeout:
            return Decision(waits=(Blocked(pod=m.name, cause=(
                f"handing leadership to {asked}: no member Lease names a leader yet ({m.role}; deleted anyway "
                f"after {settings.transfer_timeout:g}s)")),), wake_at=at + settings.transfer_timeout)
    return None


def _transfer_wait(leader: Member, target: str, limit: str) -> Blocked:
    # No times in the words: the condition quoting them stays put while the wait lasts.
    return Blocked(pod=leader.name, cause=f"to hand leadership to {target} before it is deleted ({leader.role}; "
                                          f"deleted anyway after {limit})")


def _not_recreated(roster: Roster) -> tuple[Blocked, ...]:
    have = len(roster.members)
    return tuple(Blocked(pod=name, cause=f"not yet recreated ({have} of {roster.replicas} members exist)")
                 for name in roster.missing)


def quorum_floor(roster: Roster) -> int:
    """The fewest participating members a deletion may leave: a quorum, floor(n/2)+1 (reference §2).

    A set of 1 or 2 members has no headroom at all: DEP-07 ("Single-Node Clusters", and a 2-member set likewise)
    takes its one deletion anyway, since its rollout could not finish otherwise. There the floor is every other
    member, n-1: the deletion happens only when all the rest participate.
    """
    return min(roster.quorum, roster.replicas - 1)


def _below_quorum(roster: Roster, next_up: Member) -> Decision:
    """Hold step 4: one more deletion would leave fewer participating members than the floor."""
    idle = [m.name for m in roster.members if not m.participating]
    why = f" ({', '.join(idle)} not participating)" if idle else ""
    return Decision(waits=(Blocked(pod=next_up.name, cause=(
        f"to be deleted when quorum allows: {roster.participating} of {roster.replicas} members participate{why}, "
        f"one deletion would leave {roster.participating - 1}, below {quorum_floor(roster)}")),))


def batch_size(roster: Roster, settings: Settings) -> int:
    """How many participating members step 4 may delete at once; 0 or less means none (hold).

    Without the annotation: 1 (DEP-07). ``auto``: as many as the headroom. An int: that many. Always capped by the
    headroom, participating - quorum_floor, so the members left participating are still a quorum: a member whose
    state is Unknown may never join, and "never below quorum" is rollwise's promise, not a likelihood.
    """
    headroom = roster.participating - quorum_floor(roster)
    if settings.max_unavailable is None:
        return min(1, headroom)
    wanted = headroom if settings.max_unavailable == AUTO else int(settings.max_unavailable)
    return min(wanted, headroom)
