"""``rollwise run``: the operator on a real cluster. Informers over the API (lightkube), Lease leader election,
the Kubernetes event recorder, metrics and probes, driving the runtime's controllers (operator-plan §1.3)."""
