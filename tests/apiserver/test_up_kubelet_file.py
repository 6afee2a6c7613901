"""``rollwise up --kubelet FILE`` reads the file through the one document loader: a hostile or broken file is exit 2
with the field path and the rule on stderr, nothing on stdout, and no server started."""

from __future__ import annotations

from pathlib import Path

import pytest

from rollwise.cli import main

CASES = [
    ("an alias", b"a: &a [1, 2]\nb: *a\n", "b: Invalid value"),
    ("UTF-16", "startSeconds: 1\n".encode("utf-16"), "UTF-16 is not accepted"),
    ("Latin-1", b"images: {caf\xe9: {fail: ErrImagePull}}\n", "not UTF-8"),
    ("NaN", b"startSeconds: .nan\n", "startSeconds: Invalid value"),
    ("a duplicate key", b"startSeconds: 1\nstartSeconds: 2\n", "duplicate key"),
    ("two documents", b"startSeconds: 1\n---\nstartSeconds: 2\n", "expected one document"),
    ("nesting 10,000 deep", b"images: " + b"[" * 10_000 + b"]" * 10_000, "MAX_NESTING_DEPTH"),
    ("an unknown application model", b"apps: {etcd: {model: raft}}\n", "kubelet.apps.etcd.model: Unsupported"),
    ("a quorum model's bad timing", b"apps: {etcd: {model: quorum, probePeriodSeconds: 0}}\n",
     "kubelet.apps.etcd.probePeriodSeconds: Invalid value"),
]


@pytest.mark.parametrize(("data", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_hostile_kubelet_file_is_exit_2_before_anything_serves(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 data: bytes, words: str) -> None:
    path = tmp_path / "kubelet.yaml"
    path.write_bytes(data)
    assert main(["up", "--ephemeral", "--port", "0", "--kubelet", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "rollwise up: --kubelet:" in err and words in err, err


def test_a_missing_kubelet_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["up", "--ephemeral", "--port", "0", "--kubelet", str(tmp_path / "nope.yaml")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "cannot read" in err
