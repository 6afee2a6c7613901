"""Lost writes, measured: the lab's writer reads every acknowledged write back after the rollout, and an
acknowledged write the store no longer has is reported lost (a refused one is not: the client knew it failed)."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Sequence

import pytest

from rollwise.kubelet.process.stores import StoreError
from rollwise.lab.figures import WriteRecord, lost_writes, refused_writes
from rollwise.lab.meter import WriteMeter
from rollwise.lab.stores import read_from_any, stream_numbers


class _Store:
    """An in-memory store: writes to ``refusing`` endpoints are refused; ``drop`` forgets an acknowledged one."""

    def __init__(self, refusing: frozenset[str] = frozenset()) -> None:
        self.keys: dict[int, str] = {}
        self.refusing = refusing
        self.acked = threading.Event()
        self.reads: list[list[int]] = []

    def write(self, endpoint: str, seq: int, _timeout: float) -> int:
        if endpoint in self.refusing:
            raise StoreError(f"{endpoint}: refused")
        self.keys[seq] = endpoint
        if len(self.keys) >= 6:
            self.acked.set()
        return 0

    def read(self, _endpoints: Sequence[str], acked: Sequence[WriteRecord], _timeout: float) -> set[int]:
        self.reads.append([r.seq for r in acked])
        return set(self.keys)


def _metered(store: _Store, endpoints: list[str]) -> WriteMeter:
    meter = WriteMeter(endpoints, clock=time.monotonic, rate=200.0, write=store.write).start()
    store.acked.wait()
    meter.stop()
    return meter


def test_a_meter_fed_a_store_answer_with_a_write_missing_reports_it_lost() -> None:
    store = _Store()
    meter = _metered(store, ["a:1"])
    gone = sorted(store.keys)[2]
    del store.keys[gone]
    assert meter.lost(store.read, timeout=1.0) == [gone]
    assert store.reads[-1] == sorted(store.reads[-1]) and gone in store.reads[-1]  # every acknowledged write asked


def test_a_meter_whose_store_kept_every_acknowledged_write_reports_none_lost() -> None:
    store = _Store()
    meter = _metered(store, ["a:1"])
    assert meter.lost(store.read, timeout=1.0) == []
    assert len(store.reads[-1]) >= 6


def test_a_refused_write_is_counted_as_refused_and_never_as_lost() -> None:
    """The first endpoint refuses every write: each request fails over to the second, which acknowledges it. A
    write no member acknowledged is refused; it is not looked for afterwards."""
    records = [WriteRecord(start=1.0, end=1.1, ok=True, seq=1), WriteRecord(start=2.0, end=3.0, ok=False, seq=2),
               WriteRecord(start=9.0, end=9.5, ok=False, seq=3)]
    assert lost_writes(records, found={1}) == []
    assert lost_writes(records, found=set()) == [1]
    assert refused_writes(records, since=0.5, until=5.0) == 1  # the one sent after the window is not the rollout's
    store = _Store(refusing=frozenset({"a:1"}))
    meter = _metered(store, ["a:1", "b:2"])
    assert all(r.ok and r.endpoint == "b:2" for r in meter.records)
    assert meter.lost(store.read, timeout=1.0) == []


def _message(seq: int) -> dict[str, object]:
    return {"message": {"data": base64.b64encode(json.dumps({"seq": seq}).encode()).decode()}}


def test_a_stream_message_gone_or_holding_another_write_is_lost_and_a_stream_that_does_not_answer_is_an_error(
) -> None:
    """nats-server answers a get of a sequence number it no longer has with err_code 10037; a message at the
    receipt that holds another write's number means the acknowledged one is not where its ack said."""
    acked = [WriteRecord(start=0, end=0, ok=True, seq=n, receipt=100 + n) for n in (1, 2, 3)]
    gone = {"error": {"code": 404, "err_code": 10037, "description": "no message found"}}
    found = stream_numbers(acked, [_message(1), gone, _message(99)])
    assert lost_writes(acked, found) == [2, 3]
    with pytest.raises(StoreError):
        stream_numbers(acked, [_message(1), {"error": {"code": 503, "description": "JetStream unavailable"}},
                               _message(3)])


def test_a_read_back_no_member_answers_names_what_each_member_said() -> None:
    def read(endpoint: str) -> set[int]:
        raise StoreError("a replica" if endpoint == "a:1" else "the server closed the connection")

    with pytest.raises(StoreError, match=r"a:1: a replica; b:2: the server closed the connection"):
        read_from_any(["a:1", "b:2"], read)
    assert read_from_any(["a:1", "c:3"], lambda e: {7} if e == "c:3" else read(e)) == {7}
