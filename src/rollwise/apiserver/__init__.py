"""The Kubernetes REST API over rollwise's store: what ``rollwise up`` serves to kubectl and the Python clients.

Sub-packages by concern, each importing only those below it (pyproject.toml's import-linter contract holds it):
``auth`` (RBAC, reviews, tokens, credentials) over ``serving`` (HTTP replies, discovery, watch streams, request
pieces) over ``storage`` (the API verbs over the memory store, field ownership, patches) over ``admission``
(defaults, plugins, schemas, CEL rules, policies) over ``kinds`` (the resource table, printers, kind shapes).
``app`` puts them behind aiohttp. The wire shapes follow ``shared/reference/kubectl-wire.md`` (measured against
kubectl 1.32).
"""
