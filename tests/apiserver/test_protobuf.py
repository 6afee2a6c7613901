"""Protobuf bodies of the kinds ``kubectl create <generator>`` sends, decoded (bytes built by hand from the
generated.proto field numbers, the way kubectl's encoder lays them out)."""

from __future__ import annotations

import pytest

from rollwise.apiserver.serving.protobuf import MAGIC, ProtobufError, decode_object


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _bytes(number: int, data: bytes) -> bytes:
    return _key(number, 2) + _varint(len(data)) + data


def _str(number: int, text: str) -> bytes:
    return _bytes(number, text.encode())


def _int(number: int, value: int) -> bytes:
    return _key(number, 0) + _varint(value)


def _entry(number: int, key: str, value: bytes) -> bytes:
    return _bytes(number, _str(1, key) + _bytes(2, value))


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return MAGIC + _bytes(1, _str(1, api_version) + _str(2, kind)) + _bytes(2, raw) + _str(4, "application/"
                                                                                          "vnd.kubernetes.protobuf")


def test_namespace_configmap_secret_and_service_decode() -> None:
    meta = _bytes(1, _str(1, "demo") + _str(2, "") + _entry(11, "team", b"a"))
    assert decode_object(_envelope("v1", "Namespace", meta)) == {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo", "labels": {"team": "a"}}}
    cm = _bytes(1, _str(1, "cfg")) + _entry(2, "a", b"b") + _entry(3, "bin", b"\x00\x01")
    assert decode_object(_envelope("v1", "ConfigMap", cm))["data"] == {"a": "b"}
    assert decode_object(_envelope("v1", "ConfigMap", cm))["binaryData"] == {"bin": "AAE="}
    secret = _bytes(1, _str(1, "s")) + _entry(2, "k", b"v") + _str(3, "Opaque")
    assert decode_object(_envelope("v1", "Secret", secret))["data"] == {"k": "dg=="}
    port = _str(1, "80-8080") + _str(2, "TCP") + _int(3, 80) + _bytes(4, _int(1, 0) + _int(2, 8080))
    spec = _bytes(1, port) + _entry(2, "app", b"svc") + _str(4, "ClusterIP")
    service = decode_object(_envelope("v1", "Service", _bytes(1, _str(1, "svc")) + _bytes(2, spec)))
    assert service["spec"] == {"ports": [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}],
                               "selector": {"app": "svc"}, "type": "ClusterIP"}


@pytest.mark.parametrize("body", [
    b"not protobuf", MAGIC + b"\x0a\x05", _envelope("apps/v1", "DaemonSet", b""), MAGIC + b"\x0f"],
    ids=["no envelope", "truncated", "a kind not read", "unsupported wire type"])
def test_bodies_that_cannot_be_read_are_refused(body: bytes) -> None:
    with pytest.raises(ProtobufError):
        decode_object(body)
