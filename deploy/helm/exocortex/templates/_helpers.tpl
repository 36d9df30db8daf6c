{{/*
The parts of Exocortex, declared once: every template ranges over this list.
  key        the key under .Values.services
  name       the component name (labels, Service and Deployment names, Prometheus job)
  package    the image suffix and EXO_PACKAGE (deploy/docker/Dockerfile)
  port       what the part serves (gRPC, REST or MCP over HTTP)
  metrics    the port Prometheus scrapes (0: none)
  grpc       serves gRPC (probed with the gRPC health service)
  db, nats   needs Postgres / NATS
  env        prefix of its own settings (EXO_<ENV>_LISTEN, EXO_<ENV>_METRICS_PORT)
Ports match libs/core/src/exocortex/core/config.py (DEFAULT_GRPC_PORTS, DEFAULT_METRICS_PORTS).
*/}}
{{- define "exocortex.parts" -}}
- {key: gateway, name: gateway, package: gateway, port: 3210, metrics: 3210, grpc: false, db: true, nats: true, env: GATEWAY}
- {key: mcpAdapter, name: mcp-adapter, package: mcp-adapter, port: 3211, metrics: 0, grpc: false, db: false, nats: false, env: MCP}
- {key: embedding, name: embedding, package: embedding, port: 50051, metrics: 9101, grpc: true, db: false, nats: false, env: EMBEDDING}
- {key: ingest, name: ingest, package: ingest, port: 50052, metrics: 9102, grpc: true, db: true, nats: true, env: INGEST}
- {key: retrieval, name: retrieval, package: retrieval, port: 50053, metrics: 9103, grpc: true, db: true, nats: true, env: RETRIEVAL}
- {key: enrichment, name: enrichment, package: enrichment, port: 50054, metrics: 9104, grpc: true, db: true, nats: true, env: ENRICHMENT}
- {key: maintenance, name: maintenance, package: maintenance, port: 50055, metrics: 9105, grpc: true, db: true, nats: true, env: MAINTENANCE}
{{- end -}}

{{- define "exocortex.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "exocortex.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "exocortex.labels" -}}
{{ include "exocortex.selectorLabels" . }}
app.kubernetes.io/part-of: exocortex
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Labels of one part; call with (dict "root" $ "part" $part). */}}
{{- define "exocortex.partLabels" -}}
{{ include "exocortex.labels" .root }}
app.kubernetes.io/component: {{ .part.name }}
{{- end -}}

{{- define "exocortex.partSelector" -}}
{{ include "exocortex.selectorLabels" .root }}
app.kubernetes.io/component: {{ .part.name }}
{{- end -}}

{{- define "exocortex.image" -}}
{{- $values := index .root.Values.services .part.key -}}
{{- $repo := printf "%s-%s" .root.Values.image.repository .part.package -}}
{{- $digest := dig "image" "digest" "" $values -}}
{{- if $digest -}}
{{- printf "%s@%s" $repo $digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (default .root.Chart.AppVersion .root.Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "exocortex.secretName" -}}
{{- if and (not .Values.secrets.existingSecret) (not .Values.externalSecrets.enabled) -}}
{{- fail "secrets.existingSecret must name a Secret with the database, NATS and API key values (or enable externalSecrets)" -}}
{{- end -}}
{{- default (printf "%s-secrets" (include "exocortex.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "exocortex.cnpgName" -}}
{{- printf "%s-pg" (include "exocortex.fullname" .) -}}
{{- end -}}

{{/* Replicas a part runs with; retrieval on embedded engines is single-process. */}}
{{- define "exocortex.replicas" -}}
{{- $values := index .root.Values.services .part.key -}}
{{- if and (eq .part.key "retrieval") (eq .root.Values.indexes.mode "embedded") -}}
1
{{- else -}}
{{- $values.replicas -}}
{{- end -}}
{{- end -}}

{{- define "exocortex.autoscaled" -}}
{{- $values := index .root.Values.services .part.key -}}
{{- if and $values.autoscaling.enabled (not (and (eq .part.key "retrieval") (eq .root.Values.indexes.mode "embedded"))) -}}
true
{{- end -}}
{{- end -}}

{{/* gRPC address of a part for the others: the headless Service, so that the client sees
every replica and balances calls over them (not one long connection to one pod). */}}
{{- define "exocortex.grpcAddr" -}}
{{- printf "dns:///%s-%s-headless.%s.svc:%v" (include "exocortex.fullname" .root) .part.name .root.Release.Namespace .part.port -}}
{{- end -}}
