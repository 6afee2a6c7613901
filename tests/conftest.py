"""Fixtures every test folder shares: a running ``rollwise up`` (``up``) and the operator leading against it
(``operator``), as httpx and pytest's own suites keep theirs in one ``conftest.py``.

``up`` is ``rollwise up`` on 127.0.0.1 with a free port and a fresh data directory, its kubeconfig and a kubectl
runner (``kubectl_support.Up``), stopped by pid after the test even when it fails; the test is skipped, saying why,
where no kubectl is installed. A module says which server it needs with one marker, read here and nowhere else::

    pytestmark = pytest.mark.up("--authz", "rbac", for_operator=True)

- positional arguments: extra ``rollwise up`` flags; ``{tmp}`` in one stands for the server's temporary folder;
- ``for_operator``: the custom kind is left to the operator under test and any bearer token is a user, so the
  audit log names each operator process (``companion=False`` leaves the quorum-aware companion to it too);
- ``plugin``: this venv's ``kubectl-rollwise`` first on kubectl's PATH (skipped where it is not installed);
- ``crd`` / ``rollwise``: the custom kind's CRD alone, or all of docs/install.md, applied once the server is up;
- ``setup``: a callable run once on the fresh server (a module's own objects);
- ``shared``: one server for all of the module's tests instead of one each (they must not disturb one another);
  a module-scoped fixture of such a module asks for ``shared_up``, the same server;
- ``real_process``: ``python -m rollwise up`` instead of a fork of the test worker's zygote, whose exit code on
  SIGTERM must then be 0.

``operator`` is ``rollwise run`` as ``op-a`` against ``up`` once it leads, after ``up.install_rollwise()``; it must
stop cleanly on SIGTERM. ``pytest.mark.operator(*flags)`` adds flags (``{tmp}`` as above: the test's tmp_path).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubectl_support import Up, find_kubectl, put_plugin_on_path, require_plugin, running_up, start_up, stop_up
from operator_support import Operator, leading_operator, running_up_for_operator


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "up(*flags, **options): how the `up` fixture starts rollwise up (conftest)")
    config.addinivalue_line("markers", "operator(*flags): flags of the `operator` fixture's rollwise run")


@dataclass(frozen=True, kw_only=True)
class UpOptions:
    """What a module's ``pytest.mark.up`` asks of its server (the module docstring above says each)."""

    flags: tuple[str, ...] = ()
    for_operator: bool = False
    companion: bool = True
    plugin: bool = False
    crd: bool = False
    rollwise: bool = False
    setup: Callable[[Up], Any] | None = None
    shared: bool = False
    real_process: bool = False

    @classmethod
    def of(cls, request: pytest.FixtureRequest) -> UpOptions:
        marker = request.node.get_closest_marker("up")
        if marker is None:
            return cls()
        return cls(flags=tuple(marker.args), **marker.kwargs)


def _flags(flags: tuple[str, ...], tmp: Path) -> tuple[str, ...]:
    return tuple(flag.replace("{tmp}", str(tmp)) for flag in flags)


@contextlib.contextmanager
def _serving(options: UpOptions, tmp: Path) -> Iterator[Up]:
    flags = _flags(options.flags, tmp)
    if options.real_process:
        kubectl = find_kubectl()
        if kubectl is None:
            pytest.skip("kubectl is not installed")
        server = start_up(tmp, kubectl, *flags, real_process=True)
        try:
            yield server
        finally:
            assert stop_up(server.proc) == 0
        return
    if options.plugin:
        require_plugin()
    if options.for_operator:
        context = running_up_for_operator(tmp, *flags, companion=options.companion)
    else:
        context = running_up(tmp, *flags)
    with context as server:
        if options.plugin:
            put_plugin_on_path(server)
        if options.crd:
            server.install_crd()
        if options.rollwise:
            server.install_rollwise()
        if options.setup is not None:
            options.setup(server)
        yield server


@pytest.fixture(scope="module")
def shared_up(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    """The one server of a module marked ``pytest.mark.up(shared=True)``; tests ask for ``up``, not for this."""
    options = UpOptions.of(request)
    with _serving(options, tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])) as server:
        yield server


@pytest.fixture
def up(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Up]:
    """``rollwise up`` as the module's ``pytest.mark.up`` says (the module docstring above)."""
    options = UpOptions.of(request)
    if options.shared:
        yield request.getfixturevalue("shared_up")
        return
    with _serving(options, tmp_path) as server:
        yield server


@pytest.fixture
def operator(request: pytest.FixtureRequest, up: Up, tmp_path: Path) -> Iterator[Operator]:
    """``rollwise run`` as ``op-a``, leading against ``up`` with rollwise installed as docs/install.md says."""
    marker = request.node.get_closest_marker("operator")
    flags = _flags(tuple(marker.args) if marker else (), tmp_path)
    up.install_rollwise()
    with leading_operator(up, tmp_path, "op-a", *flags) as op:
        yield op
