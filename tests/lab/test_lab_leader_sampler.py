"""The lab's sampler of a group's leader that no member's role answer names (NATS: the writer's stream): it asks
the members in turn until one answers, and records what that one says."""

from __future__ import annotations

import threading
import time

from rollwise.kubelet.process.stores import StoreError
from rollwise.lab.meter import LeaderSampler


def test_the_sampler_skips_a_member_that_does_not_answer_and_records_the_next_one_s_answer() -> None:
    asked: list[str] = []
    enough = threading.Event()

    def read(endpoint: str, _timeout: float) -> str:
        asked.append(endpoint)
        if endpoint == "a:1":
            raise StoreError("refused")
        if len(asked) >= 6:
            enough.set()
        return "nats-2"

    sampler = LeaderSampler(["a:1", "b:2"], clock=time.monotonic, read=read, period=0.001).start()
    enough.wait()
    samples = sampler.stop()
    assert samples and all(pod == "nats-2" for _, pod in samples)
    assert asked[:2] == ["a:1", "b:2"] and asked[2] == "b:2"  # it stays with the member that answered
