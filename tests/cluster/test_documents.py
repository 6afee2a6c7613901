"""The one loader every door uses: limits, encodings, duplicate keys, numbers, aliases, tags."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
import yaml

from rollwise.api.errors import InvalidObject
from rollwise.cluster import documents
from rollwise.cluster.documents import (
    MAX_DOCUMENT_BYTES,
    MAX_NESTING_DEPTH,
    load_documents,
    read_documents,
    read_one_document,
)


def _alias_bomb(levels: int = 9) -> bytes:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return ("\n".join(lines) + f"\nname: *a{levels - 1}\n").encode()


def _refusal(data: bytes, syntax: documents.Syntax = "yaml") -> str:
    with pytest.raises(InvalidObject) as info:
        load_documents(data, source="f.yaml", syntax=syntax)
    assert info.value.source == "f.yaml"
    return str(info.value)


REFUSED = [
    # (case, bytes, syntax, words the message must contain)
    ("utf16 with a byte-order mark", b"\xff\xfe\x00b\x00a\x00d", "yaml", "UTF-16"),
    ("latin-1", "café: 1\n".encode("latin-1"), "yaml", "not UTF-8: byte 0xe9 at offset 3"),
    ("binary with NUL", b"a: \x00\x01\x02", "yaml", "NUL"),
    ("yaml nested thousands deep", ("a: " + "[" * 3000 + "]" * 3000).encode(), "yaml", "MAX_NESTING_DEPTH"),
    ("json nested thousands deep", ("[" * 100000 + "]" * 100000).encode(), "json", "MAX_NESTING_DEPTH"),
    ("alias bomb", _alias_bomb(), "yaml", "YAML aliases are not accepted"),
    ("self-referencing alias", b"a: &x {b: *x}\n", "yaml", "YAML aliases are not accepted"),
    ("merge key", b"a: {<<: {b: 1}}\n", "yaml", "merge keys"),
    ("yaml duplicate key", b"spec:\n  replicas: 1\n  replicas: 2\n", "yaml", 'spec.replicas: Duplicate value'),
    ("json duplicate key", b'{"spec": {"replicas": 1, "replicas": 2}}', "json", 'duplicate key "replicas"'),
    ("yaml .nan", b"limitSeconds: .nan\n", "yaml", "limitSeconds: Invalid value"),
    ("yaml .inf", b"after: -.inf\n", "yaml", "must be a finite number"),
    ("yaml float overflow", b"after: 1.0e+999\n", "yaml", "must be a finite number"),
    ("json NaN", b'{"a": NaN}', "json", "must be finite"),
    ("json Infinity", b'{"a": -Infinity}', "json", "must be finite"),
    ("json 1e999", b'{"a": 1e999}', "json", "must be finite"),
    ("yaml huge int", b"replicas: " + b"9" * 5000 + b"\n", "yaml", "64 bits"),
    ("json huge int", b'{"replicas": ' + b"9" * 5000 + b"}", "json", "64 bits"),
    ("non-string key", b"labels: {1: a}\n", "yaml", "keys must be strings"),
    ("binary tag", b"a: !!binary aGVsbG8=\n", "yaml", "tag:yaml.org,2002:binary"),
    ("set tag", b"a: !!set {x, y}\n", "yaml", "tag:yaml.org,2002:set"),
    ("custom tag", b"a: !thing 3\n", "yaml", "the tag !thing"),
    ("explicit bool tag on other text", b"a: !!bool maybe\n", "yaml", "not a valid bool"),
    ("explicit int tag on other text", b"a: !!int abc\n", "yaml", "not a valid int"),
    ("control character", b'a: "\x07"\n', "yaml", "control characters"),
    ("yaml syntax", b"name: x\nobjects: [\n", "yaml", "not valid YAML"),
    ("json syntax", b'{"a": ', "json", "not valid JSON"),
]


@pytest.mark.parametrize(("data", "syntax", "words"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_hostile_bytes_are_refused_with_the_rule(data: bytes, syntax: documents.Syntax, words: str) -> None:
    assert words in _refusal(data, syntax)


def test_an_alias_bomb_is_refused_before_any_expansion() -> None:
    tracemalloc.start()
    try:
        _refusal(_alias_bomb(levels=12))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000


def test_size_limit_is_checked_before_parsing(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: " + b"x" * (MAX_DOCUMENT_BYTES + 10))
    with pytest.raises(InvalidObject, match="MAX_DOCUMENT_BYTES"):
        read_documents(big)


def test_nesting_up_to_the_limit_is_read() -> None:
    depth = MAX_NESTING_DEPTH - 1
    (doc,) = load_documents(("a: " + "[" * depth + "1" + "]" * depth).encode(), source="f")
    assert isinstance(doc["a"], list)


def test_utf8_with_a_byte_order_mark_and_several_documents() -> None:
    docs = load_documents(b"\xef\xbb\xbfa: [1, 2.5, yes, ~, 'x']\n---\n---\nb: 1\n", source="f")
    assert docs == [{"a": [1, 2.5, True, None, "x"]}, {"b": 1}]


def test_timestamps_stay_strings_as_kubernetes_reads_them() -> None:
    assert load_documents(b"t: 2024-01-02T03:04:05Z\n", source="f") == [{"t": "2024-01-02T03:04:05Z"}]


def test_anchors_without_aliases_are_harmless() -> None:
    assert load_documents(b"a: &x 1\n", source="f") == [{"a": 1}]


def test_json_reads_the_same_values_as_yaml() -> None:
    text = b'{"a": [1, 2.5, true, null, "x"], "b": {"c": -3}}'
    assert load_documents(text, source="f", syntax="json") == load_documents(text, source="f", syntax="yaml")


def test_the_c_loader_is_used_when_pyyaml_has_it() -> None:
    if getattr(yaml, "CSafeLoader", None) is not None:
        assert documents._LOADER is yaml.CSafeLoader


def test_one_document_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("# only a comment\n")
    with pytest.raises(InvalidObject, match="empty document"):
        read_one_document(empty)
    two = tmp_path / "two.yaml"
    two.write_text("a: 1\n---\nb: 2\n")
    with pytest.raises(InvalidObject, match="expected one document, found 2"):
        read_one_document(two)
    with pytest.raises(InvalidObject, match="cannot read"):
        read_one_document(tmp_path)
