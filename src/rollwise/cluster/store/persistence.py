"""Persistence for the memory store: every committed write kept in SQLite (stdlib ``sqlite3``), as k3s keeps its
state through kine.

The store stays the source of truth while it runs; SQLite is a write-through copy. Each write is one transaction
that replaces (or removes) the object's row and saves the counters (resourceVersion, uid and name sequences), so a
store reopened on the same file has the same objects, resourceVersions and uids, and carries on counting from
where it stopped. The watch history is not kept: a watch from before the restart gets Gone and re-lists, as
after an API server restart.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from rollwise.api.meta import Obj
from rollwise.cluster.resources import GroupKind, ResourceTable
from rollwise.cluster.store.gc import Key

__all__ = ["DB_FILE", "Backing", "SqliteBacking", "uuid_uids"]

DB_FILE = "state.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    grp TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
    resource_version INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (grp, kind, namespace, name)
);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


class Backing(Protocol):
    """Where a store keeps its objects between runs."""

    def load(self, resources: ResourceTable) -> tuple[dict[str, int], list[tuple[Key, Obj]]]:
        """The saved counters and every saved object with its key, in resourceVersion order."""
        ...

    def commit(self, key: Key, obj: Obj | None, counters: Mapping[str, int]) -> None:
        """Save one write durably: the object at ``key`` (None: removed) and the counters after it."""
        ...

    def close(self) -> None: ...


class SqliteBacking:
    """A ``Backing`` in one SQLite file (WAL journal: a commit does not wait for a full sync)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def load(self, resources: ResourceTable) -> tuple[dict[str, int], list[tuple[Key, Obj]]]:
        counters = {name: int(value) for name, value in self._db.execute("SELECT name, value FROM counters")}
        rows = self._db.execute(
            "SELECT grp, kind, namespace, name, body FROM objects ORDER BY resource_version").fetchall()
        out: list[tuple[Key, Obj]] = [((GroupKind(g, k), ns, n), json.loads(body)) for g, k, ns, n, body in rows]
        return counters, out

    def commit(self, key: Key, obj: Obj | None, counters: Mapping[str, int]) -> None:
        gk, ns, name = key
        db = self._db
        db.execute("BEGIN")
        try:
            if obj is None:
                db.execute("DELETE FROM objects WHERE grp=? AND kind=? AND namespace=? AND name=?",
                           (gk.group, gk.kind, ns, name))
            else:
                db.execute("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?, ?)",
                           (gk.group, gk.kind, ns, name, int(obj["metadata"]["resourceVersion"]),
                            json.dumps(obj, separators=(",", ":"))))
            db.executemany("INSERT OR REPLACE INTO counters VALUES (?, ?)", list(counters.items()))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._db.close()


def uuid_uids(_seq: int) -> str:
    """uuid4 uids: a persistent store never hands out a uid twice, across restarts or wiped data dirs."""
    return str(uuid.uuid4())
