"""``rollwise dashboard``: a local, read-only web page of every set's rollout, live."""

from rollwise.cli.dashboard.command import add_dashboard

__all__ = ["add_dashboard"]
