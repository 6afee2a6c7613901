"""The quorum model's parameters and its readiness-probe arithmetic, as pure functions of virtual time.

The probe is etcd-druid's readiness probe on etcd-wrapper's ``/readyz`` (reference §1.7): ``initialDelaySeconds 15``,
``periodSeconds 5``, ``failureThreshold 5``, success threshold 1. A member's ticks are at
``anchor + initial_delay + k * period`` (k = 0, 1, ...), where the anchor is its container's start time. At a tick
a participating member becomes (or stays) Ready and its failure count resets; a non-participating Ready member
counts one failure and turns unready at the ``failure_threshold``-th consecutive one.

Simplifications (deterministic on purpose): ``/readyz`` answers from the wrapper's cached linearizable read, which
the model takes to be fresh at every tick (the real cache adds up to 2 s, §1.7); a read during a leader election
fails, as a linearizable read needs a leader (the model's caller passes ``participating`` = quorum and a leader;
``rollwise lab etcd`` measured real members turning unready while they elect); the probe's own timeout is ignored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.errors import FieldError

__all__ = [
    "QuorumParams",
    "first_tick_index",
    "parse_quorum_params",
    "probe_tick",
    "quorum_options",
    "tick_at",
    "tick_matters",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class QuorumParams:
    """The timings of one quorum set (scenario ``kubelet.apps.<set>``); defaults are etcd's and etcd-druid's."""

    election_seconds: float = 1.0  # reference §0: a SIGKILLed leader is replaced after 0.96-1.58 s
    # once quorum forms (bootstrap, or a restarted member restores it); None: ``election_seconds``
    join_election_seconds: float | None = None
    lease_lag_seconds: float = 0.0  # reference §1.4: the heartbeat can leave the role up to 10 s stale
    probe_initial_delay_seconds: float = 15.0  # reference §1.7
    probe_period_seconds: float = 5.0
    probe_failure_threshold: int = 5
    transfer_seconds: float = 0.1  # reference §2: a requested hand-over (move-leader) takes about one heartbeat
    shutdown_transfer: bool = True  # reference §2: etcd hands leadership over on SIGTERM; many stores do not
    # Writes need a majority of the members up (raft, ZAB). Off for PostgreSQL under Patroni: the DCS holds the leader
    # key, and a primary with every replica down still commits (asynchronous replication).
    majority_writes: bool = True
    # The leader stops serving at its deletion request, not when its process exits (ZooKeeper's leader shuts its
    # request processors down at SIGTERM; its followers notice only at the exit, and elect from then).
    leader_stops_at_sigterm: bool = False
    # With ``leader_stops_at_sigterm``, the followers' election starts at the deletion request rather than at the
    # leader's exit: Patroni's primary stops PostgreSQL and releases the leader key on SIGTERM, and its replicas race
    # for the key while Patroni itself may take seconds more to exit.
    election_at_sigterm: bool = False
    # While the leader syncs a member that rejoins (``join_seconds`` after its process starts), it commits nothing:
    # ZooKeeper's leader sends a rejoining follower a DIFF/SNAP before proposals resume (0.2-0.4 s measured here).
    rejoin_sync_seconds: float = 0.0
    # The hand-over on SIGTERM leads only when the members left without the leader still make a quorum: NATS' meta
    # leader proposes its successor as a raft entry (raft.go, StepDown's EntryLeaderTransfer), which it and the
    # successor commit, and then stops; the successor campaigns at once in a new term (its term file shows it 0.05-0.1
    # s after the deletion under ``rollwise lab nats``), but with the rest short of a quorum it wins no votes, and
    # the next leader is elected once quorum returns, in a later term. etcd's leader votes for its successor before
    # it leaves, so there the successor leads for an instant either way (off).
    shutdown_transfer_needs_quorum: bool = False
    # A leader that stays up while its quorum is lost keeps leading in its term for this long (0: it is lost with the
    # quorum at once). NATS' raft leader steps down only after lostQuorumInterval, 10 s (raft.go): a quorum back
    # sooner finds the leader still there, so writes resume without an election.
    leader_holds_quorum_loss_seconds: float = 0.0

    @property
    def join_seconds(self) -> float:
        """The election delay once quorum has just formed."""
        return self.election_seconds if self.join_election_seconds is None else self.join_election_seconds

    def __post_init__(self) -> None:
        for name in ("election_seconds", "lease_lag_seconds", "probe_initial_delay_seconds", "transfer_seconds",
                     "join_election_seconds", "rejoin_sync_seconds", "leader_holds_quorum_loss_seconds"):
            value = getattr(self, name)
            if value is None and name == "join_election_seconds":
                continue
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if not math.isfinite(self.probe_period_seconds) or self.probe_period_seconds <= 0:
            raise ValueError(f"probe_period_seconds must be a finite number > 0, got {self.probe_period_seconds!r}")
        if self.probe_failure_threshold < 1:
            raise ValueError(f"probe_failure_threshold must be >= 1, got {self.probe_failure_threshold!r}")


# scenario key → (field, whether 0 is allowed); the period must be positive or the ticks would never advance
_SECONDS = {
    "electionSeconds": ("election_seconds", True),
    "joinElectionSeconds": ("join_election_seconds", True),
    "leaseLagSeconds": ("lease_lag_seconds", True),
    "probeInitialDelaySeconds": ("probe_initial_delay_seconds", True),
    "probePeriodSeconds": ("probe_period_seconds", False),
    "transferSeconds": ("transfer_seconds", True),
    "rejoinSyncSeconds": ("rejoin_sync_seconds", True),
    "leaderHoldsQuorumLossSeconds": ("leader_holds_quorum_loss_seconds", True),
}
# scenario key → boolean field
_SWITCHES = {"shutdownTransfer": "shutdown_transfer", "majorityWrites": "majority_writes",
             "leaderStopsAtSigterm": "leader_stops_at_sigterm", "electionAtSigterm": "election_at_sigterm",
             "shutdownTransferNeedsQuorum": "shutdown_transfer_needs_quorum"}
_ALLOWED = (*sorted([*_SECONDS, *_SWITCHES, "model", "probeFailureThreshold"]),)


def quorum_options(params: QuorumParams) -> dict[str, Any]:
    """The scenario options (``kubelet.apps.<set>``, without ``model``) that ``parse_quorum_params`` reads back as
    ``params``: the one table of keys, rendered."""
    out: dict[str, Any] = {key: getattr(params, field) for key, (field, _) in _SECONDS.items()}
    if out["joinElectionSeconds"] is None:
        del out["joinElectionSeconds"]
    out["probeFailureThreshold"] = params.probe_failure_threshold
    return out | {key: getattr(params, field) for key, field in _SWITCHES.items()}


def parse_quorum_params(raw: Mapping[str, Any] | None, *, path: str) -> tuple[QuorumParams, list[FieldError]]:
    """Check a ``kubelet.apps.<set>`` mapping's quorum options; each problem is a FieldError under ``path``.

    ``model`` is accepted and left to the caller; an invalid field falls back to its default so that every error
    can be reported at once.
    """
    if raw is None:
        return QuorumParams(), []
    if not isinstance(raw, Mapping):
        return QuorumParams(), [FieldError(path=path, value=raw, rule="must be a mapping")]
    errors: list[FieldError] = []
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        sub = f"{path}.{key}"
        if key in _SECONDS:
            field, zero_ok = _SECONDS[key]
            if isinstance(value, bool) or not isinstance(value, int | float):
                errors.append(FieldError(path=sub, value=value, rule="must be a number of seconds"))
            elif not math.isfinite(value):
                errors.append(FieldError(path=sub, value=value, rule="must be a finite number"))
            elif value < 0 or (value == 0 and not zero_ok):
                rule = "must be greater than or equal to 0" if zero_ok else "must be greater than 0"
                errors.append(FieldError(path=sub, value=value, rule=rule))
            else:
                kwargs[field] = float(value)
        elif key == "probeFailureThreshold":
            if isinstance(value, bool) or not isinstance(value, int):
                errors.append(FieldError(path=sub, value=value, rule="must be an integer"))
            elif value < 1:
                errors.append(FieldError(path=sub, value=value, rule="must be greater than or equal to 1"))
            else:
                kwargs["probe_failure_threshold"] = value
        elif key in _SWITCHES:
            if not isinstance(value, bool):
                errors.append(FieldError(path=sub, value=value, rule="must be true or false"))
            else:
                kwargs[_SWITCHES[key]] = value
        elif key != "model":
            supported = ", ".join(f'"{k}"' for k in _ALLOWED)
            errors.append(FieldError(path=sub, kind="Unsupported value", value=key,
                                     rule=f"supported values: {supported}"))
    return QuorumParams(**kwargs), errors


def tick_at(anchor: float, k: int, params: QuorumParams) -> float:
    """The k-th probe tick of a container started at ``anchor`` (always the same expression, so a wake time handed
    out earlier is reproduced bit for bit)."""
    return anchor + params.probe_initial_delay_seconds + k * params.probe_period_seconds


def first_tick_index(anchor: float, t: float, params: QuorumParams, *, after: bool = False) -> int:
    """The index of the first tick at or after ``t`` (strictly after when ``after``)."""
    k = max(0, math.floor((t - anchor - params.probe_initial_delay_seconds) / params.probe_period_seconds))
    # The division can land one off either way in floating point; settle on the exact tick expression.
    while tick_at(anchor, k, params) < t or (after and tick_at(anchor, k, params) == t):
        k += 1
    while k > 0 and (tick_at(anchor, k - 1, params) > t or (not after and tick_at(anchor, k - 1, params) == t)):
        k -= 1
    return k


def tick_matters(*, ready: bool, failures: int, participating: bool) -> bool:
    """A tick can change something: it makes a participating member Ready (or resets its failures), or counts a
    failure of a Ready member that no longer participates. Other ticks are skipped, not scheduled."""
    return (participating and (not ready or failures > 0)) or (not participating and ready)


def probe_tick(*, ready: bool, failures: int, participating: bool, params: QuorumParams) -> tuple[bool, int]:
    """One tick: success → (True, 0); failure → one more failure, unready at ``failure_threshold`` (count reset)."""
    if participating:
        return True, 0
    if not ready:
        return False, 0  # the count only matters while Ready: the next success resets it anyway
    failures += 1
    if failures >= params.probe_failure_threshold:
        return False, 0
    return True, failures
