"""A Patroni set's hand-over (``rollwise.dev/leader-transfer: patroni``): the driver that runs the quorum-aware
controller answers the controller's own request with Patroni's ``POST /switchover`` to the leader's pod, once per
request, and nothing for a set whose hand-over is an agent's. Fake Patroni REST APIs on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from member_servers import MemberServers

from rollwise.api.leader_transfer import REQUESTED_AT_ANNOTATION, TRANSFER_TO_ANNOTATION
from rollwise.api.meta import Obj
from rollwise.controllers.quorum.settings import LEADER_TRANSFER, read_settings
from rollwise.controllers.view import SetView
from rollwise.runtime.hand_overs import HandOvers


class Patroni(MemberServers):
    """Each pod's REST API: records every POST (pod, path, body) and answers ``code``."""

    def __init__(self, code: int = 200) -> None:
        super().__init__()
        self.code = code
        self.posts: list[tuple[str, str, Any]] = []
        self._lock = threading.Lock()

    def handler(self, name: str) -> type[BaseHTTPRequestHandler]:
        patroni = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
                with patroni._lock:
                    patroni.posts.append((name, self.path, body))
                answer = b'Successfully switched over to "pg-0"'
                self.send_response(patroni.code)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def patroni() -> Iterator[Patroni]:
    servers = Patroni()
    try:
        yield servers
    finally:
        servers.close()


def _set(transfer: str = "patroni", probe: bool = True) -> Obj:
    notes = {"rollwise.dev/update-policy": "QuorumAware", LEADER_TRANSFER: transfer}
    if probe:
        notes |= {"rollwise.dev/role-probe-port": "8008", "rollwise.dev/role-probe-path": "/leader",
                  "rollwise.dev/role-probe-leader-status-code": "200"}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "pg", "namespace": "default", "uid": "set-uid", "annotations": notes},
            "spec": {"replicas": 3, "updateStrategy": {"type": "OnDelete"}, "selector": {"matchLabels": {"app": "pg"}},
                     "template": {"metadata": {"labels": {"app": "pg"}},
                                  "spec": {"containers": [{"name": "postgres", "image": "patroni:3.0"}]}}}}


def _pod(ordinal: int, *, to: str | None = None, at: str = "100.000", terminating: bool = False) -> Obj:
    meta: dict[str, Any] = {"name": f"pg-{ordinal}", "namespace": "default", "uid": f"uid-{ordinal}"}
    if to is not None:
        meta["annotations"] = {TRANSFER_TO_ANNOTATION: to, REQUESTED_AT_ANNOTATION: at}
    if terminating:
        meta["deletionTimestamp"] = 200.0
    return {"metadata": meta, "status": {"podIP": f"10.0.0.{ordinal + 1}"}}


def _answer(hand_overs: HandOvers, sts: Obj, *pods: Obj) -> int:
    started = hand_overs.answer(SetView(set=sts, pods=pods, now=150.0))
    hand_overs.wait(10)
    return started


def test_a_hand_over_request_on_the_primary_is_sent_to_patroni_as_one_switchover(patroni: Patroni) -> None:
    hand_overs = HandOvers(address=patroni.address)
    pods = (_pod(0), _pod(1), _pod(2, to="pg-0"))
    assert _answer(hand_overs, _set(), *pods) == 1
    assert patroni.posts == [("pg-2", "/switchover", {"leader": "pg-2", "candidate": "pg-0"})]
    assert [(s.leader, s.candidate, s.status) for s in hand_overs.sent] == [("pg-2", "pg-0", 200)]
    # The same request seen again (every reconcile until the old primary goes) is not sent again.
    assert _answer(hand_overs, _set(), *pods) == 0
    assert len(patroni.posts) == 1
    # A new request (another time) is.
    assert _answer(hand_overs, _set(), _pod(0), _pod(1), _pod(2, to="pg-1", at="160.000")) == 1
    assert patroni.posts[-1] == ("pg-2", "/switchover", {"leader": "pg-2", "candidate": "pg-1"})


def test_a_refused_switchover_is_kept_with_its_answer_and_not_retried_for_the_same_request(patroni: Patroni) -> None:
    patroni.code = 412
    hand_overs = HandOvers(address=patroni.address)
    assert _answer(hand_overs, _set(), _pod(0), _pod(2, to="pg-0")) == 1
    assert _answer(hand_overs, _set(), _pod(0), _pod(2, to="pg-0")) == 0
    assert [(s.status, s.error) for s in hand_overs.sent] == [(412, None)]


@pytest.mark.parametrize(("sts", "pods"), [
    pytest.param(_set("true"), (_pod(0), _pod(2, to="pg-0")), id="an agent answers leader-transfer true"),
    pytest.param(_set("false"), (_pod(0), _pod(2, to="pg-0")), id="no hand-over asked for"),
    pytest.param(_set(), (_pod(0), _pod(2, to="pg-0", terminating=True)), id="the old primary already goes"),
    pytest.param(_set(), (_pod(0), _pod(2)), id="no request on any pod"),
    pytest.param(_set(probe=False), (_pod(0), _pod(2, to="pg-0")), id="no probe, so no REST API port"),
])
def test_nothing_is_sent_where_the_driver_has_no_switchover_to_send(patroni: Patroni, sts: Obj,
                                                                    pods: tuple[Obj, ...]) -> None:
    hand_overs = HandOvers(address=patroni.address)
    assert _answer(hand_overs, sts, *pods) == 0
    assert patroni.posts == []


def test_patroni_hand_over_needs_a_role_probe_and_other_values_are_refused_with_the_field_path() -> None:
    settings, errors = read_settings(_set())
    assert (settings.leader_transfer, settings.hand_over, errors) == (True, "patroni", [])
    settings, errors = read_settings(_set(probe=False))
    assert settings.hand_over is None
    assert [str(e) for e in errors] == [
        'metadata.annotations[rollwise.dev/leader-transfer]: Invalid value: "patroni": needs a role probe on '
        "Patroni's REST API (spec.roleProbe, or the rollwise.dev/role-probe-* annotations on apps/v1)"]
    _, errors = read_settings(_set("etcd"))
    assert [str(e) for e in errors] == [
        'metadata.annotations[rollwise.dev/leader-transfer]: Unsupported value: "etcd": must be "true", "false" or '
        '"patroni"']
