"""What a write must pass before the store keeps it: the server's admission chain (``chain``), the built-in
kinds' defaults, the default admission plugins, CRD schemas with their CEL rules, ValidatingAdmissionPolicies,
``fieldValidation``, names and the per-release judgement of ``--kube-version``. Reads ``kinds``, nothing above."""
