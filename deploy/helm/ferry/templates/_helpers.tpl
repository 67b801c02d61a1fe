{{/* The name of every object of the release. */}}
{{- define "ferry.fullname" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "ferry.labels" -}}
app.kubernetes.io/name: ferry
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The labels that select the queue manager's pod. */}}
{{- define "ferry.selectorLabels" -}}
app.kubernetes.io/name: ferry
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The Secret holding the passwords. */}}
{{- define "ferry.credentialsSecret" -}}
{{- .Values.credentials.existingSecret | default (printf "%s-credentials" (include "ferry.fullname" .)) -}}
{{- end -}}
