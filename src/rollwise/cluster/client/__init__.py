"""The client of a real Kubernetes API server, for the operator and the commands that talk to a cluster:
``KubeCluster`` (``kube``, over lightkube or plain aiohttp requests: ``kube_api``, ``rest``,
``aiohttp_transport``), the list/watch protocol informers run over (``listwatch``, and ``namespaces`` for several
namespaces at once) and what the operator watches (``scope``).

It never imports the in-memory store (an import-linter contract). Import the modules themselves; this package
re-exports nothing."""
