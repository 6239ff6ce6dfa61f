{{/* The objects' base name: the release name, with the chart's unless the release already carries it. */}}
{{- define "svc.fullname" -}}
{{- if eq .Release.Name .Chart.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The labels every object carries. */}}
{{- define "svc.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The selector of the chart's pods (a component label is added per Deployment). */}}
{{- define "svc.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "svc.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{- define "svc.secretName" -}}
{{- .Values.auth.existingSecret | default (include "svc.fullname" .) -}}
{{- end -}}

{{- define "svc.claimName" -}}
{{- .Values.persistence.existingClaim | default (printf "%s-data" (include "svc.fullname" .)) -}}
{{- end -}}

{{/* The path prefix the server itself serves under: the ingress path when the ingress keeps it. */}}
{{- define "svc.basePath" -}}
{{- if and .Values.ingress.enabled (ne .Values.ingress.path "/") (not .Values.ingress.stripPrefix) -}}
{{- .Values.ingress.path | trimSuffix "/" -}}
{{- end -}}
{{- end -}}
