"""The other kinds ``kubectl create <generator>`` sends as protobuf, as field tables (``generated.proto`` numbers of
k8s.io/api): deployment, job, cronjob, serviceaccount, priorityclass, role, clusterrole, rolebinding,
clusterrolebinding, poddisruptionbudget, quota and ingress, and the TokenRequest of ``kubectl create token``. A table
maps a field number to its JSON name and type; a nested table is a message, and a message with the name "" is
inlined into its parent (Go's ``json:",inline"``). Only the fields those generators fill are listed; the rest are
skipped.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MESSAGES"]

Table = dict[int, tuple[str, Any, bool]]
"""field number -> (JSON name, type, repeated). A type is "str", "int", "bool", "map" (string to string),
"qmap" (string to Quantity), "ios" (IntOrString), "meta" (ObjectMeta) or a nested Table."""

_REQUIREMENT: Table = {1: ("key", "str", False), 2: ("operator", "str", False), 3: ("values", "str", True)}
_SELECTOR: Table = {1: ("matchLabels", "map", False), 2: ("matchExpressions", _REQUIREMENT, True)}
_PORT: Table = {1: ("name", "str", False), 2: ("hostPort", "int", False), 3: ("containerPort", "int", False),
                4: ("protocol", "str", False)}
_ENV: Table = {1: ("name", "str", False), 2: ("value", "str", False)}
_RESOURCES: Table = {1: ("limits", "qmap", False), 2: ("requests", "qmap", False)}
_CONTAINER: Table = {1: ("name", "str", False), 2: ("image", "str", False), 3: ("command", "str", True),
                     4: ("args", "str", True), 5: ("workingDir", "str", False), 6: ("ports", _PORT, True),
                     7: ("env", _ENV, True), 8: ("resources", _RESOURCES, False),
                     14: ("imagePullPolicy", "str", False)}
_POD_SPEC: Table = {2: ("containers", _CONTAINER, True), 3: ("restartPolicy", "str", False),
                    4: ("terminationGracePeriodSeconds", "int", False), 6: ("dnsPolicy", "str", False),
                    7: ("nodeSelector", "map", False), 8: ("serviceAccountName", "str", False),
                    20: ("initContainers", _CONTAINER, True)}
_TEMPLATE: Table = {1: ("metadata", "meta", False), 2: ("spec", _POD_SPEC, False)}
_STRATEGY: Table = {1: ("type", "str", False)}
_DEPLOYMENT_SPEC: Table = {1: ("replicas", "int", False), 2: ("selector", _SELECTOR, False),
                           3: ("template", _TEMPLATE, False), 4: ("strategy", _STRATEGY, False),
                           5: ("minReadySeconds", "int", False)}
_JOB_SPEC: Table = {1: ("parallelism", "int", False), 2: ("completions", "int", False),
                    3: ("activeDeadlineSeconds", "int", False), 4: ("selector", _SELECTOR, False),
                    6: ("template", _TEMPLATE, False), 7: ("backoffLimit", "int", False)}
_JOB_TEMPLATE: Table = {1: ("metadata", "meta", False), 2: ("spec", _JOB_SPEC, False)}
_CRONJOB_SPEC: Table = {1: ("schedule", "str", False), 3: ("concurrencyPolicy", "str", False),
                        4: ("suspend", "bool", False), 5: ("jobTemplate", _JOB_TEMPLATE, False),
                        8: ("timeZone", "str", False)}
_RULE: Table = {1: ("verbs", "str", True), 2: ("apiGroups", "str", True), 3: ("resources", "str", True),
                4: ("resourceNames", "str", True), 5: ("nonResourceURLs", "str", True)}
_SUBJECT: Table = {1: ("kind", "str", False), 2: ("apiGroup", "str", False), 3: ("name", "str", False),
                   4: ("namespace", "str", False)}
_ROLE_REF: Table = {1: ("apiGroup", "str", False), 2: ("kind", "str", False), 3: ("name", "str", False)}
_PDB_SPEC: Table = {1: ("minAvailable", "ios", False), 2: ("selector", _SELECTOR, False),
                    3: ("maxUnavailable", "ios", False)}
_QUOTA_SPEC: Table = {1: ("hard", "qmap", False), 2: ("scopes", "str", True)}

_SERVICE_PORT: Table = {1: ("name", "str", False), 2: ("number", "int", False)}
_SERVICE_BACKEND: Table = {1: ("name", "str", False), 2: ("port", _SERVICE_PORT, False)}
_BACKEND: Table = {4: ("service", _SERVICE_BACKEND, False)}
_HTTP_PATH: Table = {1: ("path", "str", False), 2: ("backend", _BACKEND, False), 3: ("pathType", "str", False)}
_RULE_VALUE: Table = {1: ("http", {1: ("paths", _HTTP_PATH, True)}, False)}
_INGRESS_RULE: Table = {1: ("host", "str", False), 2: ("", _RULE_VALUE, False)}  # "": inline in JSON
_INGRESS_SPEC: Table = {1: ("defaultBackend", _BACKEND, False),
                        2: ("tls", {1: ("hosts", "str", True), 2: ("secretName", "str", False)}, True),
                        3: ("rules", _INGRESS_RULE, True), 4: ("ingressClassName", "str", False)}

_BOUND_OBJECT: Table = {1: ("kind", "str", False), 2: ("apiVersion", "str", False), 3: ("name", "str", False),
                        4: ("uid", "str", False)}
_TOKEN_REQUEST_SPEC: Table = {1: ("audiences", "str", True), 3: ("boundObjectRef", _BOUND_OBJECT, False),
                              4: ("expirationSeconds", "int", False)}
_ROLE: Table = {2: ("rules", _RULE, True)}
_BINDING: Table = {2: ("subjects", _SUBJECT, True), 3: ("roleRef", _ROLE_REF, False)}

MESSAGES: dict[tuple[str, str], Table] = {
    ("apps/v1", "Deployment"): {2: ("spec", _DEPLOYMENT_SPEC, False)},
    ("batch/v1", "Job"): {2: ("spec", _JOB_SPEC, False)},
    ("batch/v1", "CronJob"): {2: ("spec", _CRONJOB_SPEC, False)},
    ("v1", "ServiceAccount"): {3: ("automountServiceAccountToken", "bool", False)},
    ("v1", "ResourceQuota"): {2: ("spec", _QUOTA_SPEC, False)},
    ("scheduling.k8s.io/v1", "PriorityClass"): {2: ("value", "int", False), 3: ("globalDefault", "bool", False),
                                                4: ("description", "str", False),
                                                5: ("preemptionPolicy", "str", False)},
    ("rbac.authorization.k8s.io/v1", "Role"): _ROLE,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): _ROLE,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): _BINDING,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): _BINDING,
    ("policy/v1", "PodDisruptionBudget"): {2: ("spec", _PDB_SPEC, False)},
    ("networking.k8s.io/v1", "Ingress"): {2: ("spec", _INGRESS_SPEC, False)},
    # kubectl create token (authentication/v1 generated.proto)
    ("authentication.k8s.io/v1", "TokenRequest"): {2: ("spec", _TOKEN_REQUEST_SPEC, False)},
}
