"""The store's change feed pump (``rollwise.cluster.pump``): the API server, the wall-clock driver and the lab share
one."""

from rollwise.cluster.pump import FeedPump

__all__ = ["FeedPump"]
