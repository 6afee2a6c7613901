"""What the process runtime needs to know of a store to run its members as real processes: one ``Store`` per kind.

A store says which images it runs (``zookeeper:*``), where its program is, how many loopback ports each member
takes beyond the client and peer ports every store has, which container ports those stand for (so a role probe sent
to a pod's ``8080`` reaches the member's AdminServer on its own port), the command line of one member (it may write
a config file into the member's directory first), and three questions asked of a running member: is it ready (in a
quorum that serves), what does its member Lease say (only stores whose agent writes one: etcd), and who leads as it
sees it (``RoleSample``, for the lab's status poller). ``move_leader`` is the store's own hand-over, where it has one.
"""

from __future__ import annotations

import fnmatch
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rollwise.kubelet.process.identity import ClusterLayout, MemberAddress

__all__ = ["MemberTimings", "RoleSample", "Store", "StoreError"]


class StoreError(Exception):
    """A call to a member that did not succeed: refused, reset, timed out, or answered with an error."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberTimings:
    """The consensus timings a member is started with (each store maps them onto its own settings)."""

    election_ms: int = 1000
    heartbeat_ms: int = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class RoleSample:
    """One member's answer to "who leads": ``member`` and ``leader`` as small integers (0: it knows none), and the
    term (raft term, ZooKeeper's epoch) it answered in."""

    member: int
    leader: int
    term: int


class Store(ABC):
    name: ClassVar[str]
    image: ClassVar[str]  # the image glob whose pods run as this store's members
    extra_ports: ClassVar[int] = 0  # loopback ports per member beyond client and peer
    container_ports: ClassVar[Mapping[int, int]] = {}  # a container port -> index into ``MemberAddress.ports``
    can_transfer: ClassVar[bool] = False

    def runs(self, image: str) -> bool:
        return fnmatch.fnmatchcase(image, self.image)

    @abstractmethod
    def binary(self) -> str | None:
        """The program's path, or None where it is not installed."""

    @abstractmethod
    def command(self, binary: str, layout: ClusterLayout, ordinal: int, member_dir: Path,
                timings: MemberTimings) -> list[str]:
        """The member's command line; may create ``member_dir`` and write its config there first."""

    @abstractmethod
    def ready(self, member: MemberAddress, timeout: float) -> bool:
        """The member's readiness check: it serves as part of a quorum."""

    def holder(self, member: MemberAddress, timeout: float) -> str | None:
        """The member Lease's holderIdentity its agent would write; None: this store has no such agent."""
        return None

    @abstractmethod
    def role(self, member: MemberAddress, timeout: float) -> RoleSample:
        """Who leads, as the member sees it. StoreError when it does not answer."""

    def move_leader(self, layout: ClusterLayout, leader: int, target: int, *, timeout: float) -> None:
        """Hand leadership from ordinal ``leader`` to ordinal ``target``. StoreError when the store refuses."""
        raise StoreError(f"{self.name} has no leader transfer")

    def probe_port(self, member: MemberAddress, container_port: int) -> int | None:
        index = self.container_ports.get(container_port)
        return None if index is None else member.ports[index]
