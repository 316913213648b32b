{{/* Chart name, truncated to 63 characters (a DNS label). */}}
{{- define "redoline.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the objects: RELEASE-redoline, or RELEASE when it already says redoline. */}}
{{- define "redoline.fullname" -}}
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

{{/* The names of the cluster-scoped objects carry the release namespace too: two releases in
     different namespaces must not share a ClusterRole. */}}
{{- define "redoline.clusterName" -}}
{{- printf "%s-%s" .Release.Namespace (include "redoline.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "redoline.selectorLabels" -}}
app.kubernetes.io/name: {{ include "redoline.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "redoline.labels" -}}
{{ include "redoline.selectorLabels" . }}
app.kubernetes.io/part-of: redoline
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "redoline.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "redoline.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* repository@digest when a digest is set, else repository:tag (tag defaults to appVersion). */}}
{{- define "redoline.image" -}}
{{- $image := index . 0 }}
{{- $root := index . 1 }}
{{- if $image.digest }}
{{- printf "%s@%s" $image.repository $image.digest }}
{{- else }}
{{- printf "%s:%s" $image.repository (default $root.Chart.AppVersion $image.tag) }}
{{- end }}
{{- end }}

{{/* The rules of operator/rbac/clusterrole.yaml (copied byte for byte to files/rbac/, checked by
     tests/tests/it/helm_chart.rs): document 0 is the ClusterRole, document 1 the leader-election
     Role. */}}
{{- define "redoline.rbacDocument" -}}
{{- $docs := regexSplit "(?m)^---[ \t]*$" (.root.Files.Get "files/rbac/clusterrole.yaml") -1 }}
{{- $doc := fromYaml (index $docs .index) }}
{{- if hasKey $doc "Error" }}{{ fail (printf "files/rbac/clusterrole.yaml document %d: %s" .index $doc.Error) }}{{ end }}
{{- toYaml $doc.rules }}
{{- end }}
