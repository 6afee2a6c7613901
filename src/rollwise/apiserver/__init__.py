"""The Kubernetes REST API over rollwise's store: what ``rollwise up`` serves to kubectl and the Python clients.

Pure pieces (patching, printers, discovery, Status bodies) sit in their own modules; ``app`` puts them behind
aiohttp. The wire shapes follow ``shared/reference/kubectl-wire.md`` (measured against kubectl 1.32).
"""
