"""The controller runtime every driver shares: one clock protocol, one work queue, the wake rules (which change
wakes which set), the reconcile of one key (view, consistency check, decision, writes, events), the executor,
the event recorder, the census index and views, and the informers and caches a driver over a real API uses.

The simulator, the local control plane, the operator and the explorer are thin drivers over it: each gives the
runtime a world (a store or an API client) and a clock. Import the modules themselves (``rollwise.runtime.queue``
and so on); this package re-exports nothing, so importing one part never drags in the rest.
"""
