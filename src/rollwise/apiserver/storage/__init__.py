"""The API semantics over the memory store (``ApiStore``): the verbs, what a fresh store holds, field ownership
and the four patch types. Reads ``admission`` and ``kinds``; the HTTP side is ``serving``'s."""
