"""The API semantics over the memory store (``ApiStore``): the verbs, what a fresh store holds, the change feed
pump, field ownership and the four patch types. Reads ``admission`` and ``kinds``; the HTTP side is ``serving``'s."""
