"""What ``rollwise up`` runs beside its API server: the controllers and the simulated kubelet on the wall clock,
real processes for the pods that ask for them, and the audit of the controllers' writes."""
