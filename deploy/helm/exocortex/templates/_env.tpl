{{/* EXO_DATABASE_URL: the CloudNativePG application Secret, or the existing Secret. */}}
{{- define "exocortex.databaseEnv" -}}
- name: EXO_DATABASE_URL
  valueFrom:
    {{- if .Values.postgres.cnpg.enabled }}
    secretKeyRef: {name: {{ include "exocortex.cnpgName" . }}-app, key: uri}
    {{- else }}
    secretKeyRef: {name: {{ include "exocortex.secretName" . }}, key: {{ .Values.secrets.keys.databaseUrl }}}
    {{- end }}
{{- end -}}

{{/* The settings of one part (call with dict "root" "part"); secrets only by reference. */}}
{{- define "exocortex.env" -}}
{{- $root := .root -}}
{{- $part := .part -}}
{{- $values := index $root.Values.services $part.key -}}
{{- $secret := include "exocortex.secretName" $root -}}
- {name: EXO_DATA_DIR, value: /data}
- {name: EXO_LOG_FORMAT, value: {{ $root.Values.config.logFormat | quote }}}
- {name: EXO_LOG_LEVEL, value: {{ $root.Values.config.logLevel | quote }}}
# Libraries that cache under $HOME write to the scratch volume (the root filesystem is read-only).
- {name: HOME, value: /tmp}
- {name: XDG_CACHE_HOME, value: /tmp/.cache}
{{- range $other := include "exocortex.parts" $root | fromYamlArray }}
{{- if $other.grpc }}
- {name: EXO_{{ $other.env }}_ADDR, value: {{ include "exocortex.grpcAddr" (dict "root" $root "part" $other) | quote }}}
{{- end }}
{{- end }}
{{- if $part.grpc }}
- {name: EXO_{{ $part.env }}_LISTEN, value: "0.0.0.0:{{ $part.port }}"}
- {name: EXO_{{ $part.env }}_METRICS_PORT, value: {{ $part.metrics | quote }}}
# Prometheus scrapes from another pod (the embedded default keeps loopback).
- {name: EXO_METRICS_HOST, value: 0.0.0.0}
{{- end }}
{{- if eq $part.key "gateway" }}
- {name: EXO_GATEWAY_HOST, value: 0.0.0.0}
- {name: EXO_GATEWAY_PORT, value: {{ $part.port | quote }}}
- {name: EXO_CORS_ORIGINS, value: {{ $values.corsOrigins | quote }}}
- name: EXO_API_KEYS
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: {{ $root.Values.secrets.keys.apiKeys }}}
{{- end }}
{{- if eq $part.key "mcpAdapter" }}
- {name: EXO_MCP_HOST, value: 0.0.0.0}
- {name: EXO_MCP_PORT, value: {{ $part.port | quote }}}
- {name: EXO_MCP_GATEWAY_URL, value: "http://{{ include "exocortex.fullname" $root }}-gateway:3210"}
- {name: EXO_MCP_ALLOWED_HOSTS, value: {{ $values.allowedHosts | quote }}}
{{- end }}
{{- if and (eq $part.key "retrieval") (eq $root.Values.indexes.mode "server") }}
- {name: EXO_QDRANT_URL, value: {{ $root.Values.indexes.qdrant.url | quote }}}
- name: EXO_QDRANT_API_KEY
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: {{ $root.Values.secrets.keys.qdrantApiKey }}}
- {name: EXO_MEILI_URL, value: {{ $root.Values.indexes.meilisearch.url | quote }}}
- name: EXO_MEILI_MASTER_KEY
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: {{ $root.Values.secrets.keys.meiliMasterKey }}}
{{- end }}
{{- if eq $part.key "retrieval" }}
# The retrieval image carries neither the model nor ONNX Runtime: queries go to embedding.
- {name: EXO_RETRIEVAL_QUERY_ENCODER, value: remote}
{{- end }}
{{- range $name, $value := $root.Values.config.extraEnv }}
- {name: {{ $name }}, value: {{ $value | quote }}}
{{- end }}
{{- end -}}
