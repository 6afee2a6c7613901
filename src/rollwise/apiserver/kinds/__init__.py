"""What the server serves, kind by kind: the resource table seen as REST, the ``kubectl get`` printers, the
``Scale`` and ``Node`` shapes, both Event shapes and the built-in kinds' OpenAPI schemas. Imports nothing else of
the server."""
