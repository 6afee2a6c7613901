"""Who may do what: RBAC-lite, the reviews (``kubectl auth whoami`` / ``can-i``), bound service-account tokens
and the credentials ``up`` serves with (CA, certificates, kubeconfig). Reads ``serving`` and below."""
