{{/* The chart's name, overridable. */}}
{{- define "rollwise.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name: the prefix of every object, cluster-scoped ones included, so releases never collide.
"<release>" when the release name already holds the chart's name, else "<release>-<chart>".
*/}}
{{- define "rollwise.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "rollwise.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* What selects this release's operator pods (and only this release's). */}}
{{- define "rollwise.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rollwise.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "rollwise.labels" -}}
helm.sh/chart: {{ include "rollwise.chart" . }}
{{ include "rollwise.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "rollwise.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "rollwise.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The operator's rights on what it manages: a ClusterRole's rules, or a Role's in each watched namespace. */}}
{{- define "rollwise.rules" -}}
- apiGroups: [apps.rollwise.dev]
  resources: [statefulsets]
  verbs: [get, list, watch, patch, update]
- apiGroups: [apps.rollwise.dev]
  resources: [statefulsets/status]
  verbs: [get, update, patch]
- apiGroups: [apps.rollwise.dev]
  resources: [statefulsets/finalizers]
  verbs: [update]
- apiGroups: [apps.rollwise.dev]
  resources: [analysistemplates]
  verbs: [get, list, watch]
- apiGroups: [apps.rollwise.dev]
  resources: [analysisruns]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [apps.rollwise.dev]
  resources: [analysisruns/status]
  verbs: [get, update, patch]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch, update]
- apiGroups: [apps]
  resources: [controllerrevisions]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [apps]
  resources: [statefulsets]
  verbs: [get, list, watch, patch]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, list, watch]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, list, watch]
{{- end }}

{{/*
"true" when the arguments (list extraArgs "--flag") set the flag, as "--flag=value" or as "--flag" followed by its
value; else empty.
*/}}
{{- define "rollwise.setsFlag" -}}
{{- $flag := index . 1 }}
{{- range index . 0 }}
{{- $arg := toString . }}
{{- if or (eq $arg $flag) (hasPrefix (printf "%s=" $flag) $arg) }}true{{ end }}
{{- end }}
{{- end }}
