"""The in-memory store: ``MemoryCluster`` (``memory``, with its ``memory_watches`` and ``memory_deletion`` verbs)
over object storage (``storage``), per-resource watches (``watch``), the change feed and its pump (``feed``,
``pump``), admission (``admission``, ``volumes``), the API server's rules for writes (``preconditions``,
``server_fields``, ``deletion``, ``patching``, ``selectors``), owner-reference garbage collection (``gc``),
SQLite persistence for ``up`` (``persistence``) and injected failures (``faults``).

The simulator, the explorer and ``rollwise up`` (behind ``apiserver``) run on it. Import the modules themselves;
this package re-exports nothing."""
