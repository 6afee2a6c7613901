"""A file a long-running command appends to (``up --audit-log``, ``run --trace``): checked before anything starts,
so a path that cannot be opened is exit 2 naming the flag rather than a bare ``[Errno 2]`` once the server is up.
(The plot and output-directory flags create their directories: ``cli/options.py``; these files are opened as
given, as kube-apiserver opens ``--audit-log-path``.)"""

from __future__ import annotations

from pathlib import Path

__all__ = ["append_problem"]


def append_problem(path: Path) -> str | None:
    """Why ``path`` cannot be opened for appending, or None."""
    if path.is_dir():
        return "a directory, not a file"
    if not path.parent.is_dir():
        return "its directory does not exist"
    return None
