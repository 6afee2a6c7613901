"""The CustomResourceDefinitions rollwise ships, generated from its API: the StatefulSet CRD (``statefulset``, with
its parts for canary steps, claim templates, containers, pre-delete hooks and role probes), the analysis CRDs
(``analysis``) and the ValidatingAdmissionPolicy beside them (``policy``). ``rollwise manifests`` writes them and
``rollwise up`` installs them.

Pure: builds documents, reads and writes nothing. Import the modules themselves; this package re-exports nothing."""
