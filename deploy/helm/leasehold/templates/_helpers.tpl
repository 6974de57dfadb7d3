{{/*
Helpers. The sidecar helpers use only .Values, .Release and .Capabilities, so a parent chart can
call them with its own context for this chart's values:
  {{ include "leasehold.sidecar" (dict "Values" .Values.leasehold "Release" .Release "Capabilities" .Capabilities) }}
*/}}

{{- define "leasehold.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains "leasehold" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-leasehold" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "leasehold.labels" -}}
app.kubernetes.io/name: leasehold
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 }}
{{- end -}}

{{- define "leasehold.lockName" -}}
{{- .Values.leaderElection.lockName | default (include "leasehold.fullname" .) -}}
{{- end -}}

{{- define "leasehold.lockNamespace" -}}
{{- .Values.leaderElection.namespace | default .Release.Namespace -}}
{{- end -}}

{{- define "leasehold.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "leasehold.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* "true" when the cluster serves coordination.k8s.io/v1 (always, offline). */}}
{{- define "leasehold.leaseApi" -}}
{{- if .Capabilities.APIVersions.Has "coordination.k8s.io/v1" -}}true{{- end -}}
{{- end -}}

{{/* "true" for a native sidecar: sidecar.mode native, or auto on Kubernetes >= 1.29. */}}
{{- define "leasehold.native" -}}
{{- $mode := .Values.sidecar.mode -}}
{{- if eq $mode "native" -}}true
{{- else if eq $mode "classic" -}}
{{- else if eq $mode "auto" -}}
{{- if semverCompare ">=1.29.0-0" .Capabilities.KubeVersion.Version -}}true{{- end -}}
{{- else -}}
{{- fail (printf "sidecar.mode must be auto, native or classic, not %q" $mode) -}}
{{- end -}}
{{- end -}}

{{/* The --lock-type the sidecar gets. */}}
{{- define "leasehold.lockType" -}}
{{- if .Values.leaderElection.enabled -}}{{ .Values.leaderElection.lockType }}{{- else -}}none{{- end -}}
{{- end -}}

{{/* safe unless set, native sidecar or classic, gate or not: a native sidecar is also stopped
alone while the main container runs on (a liveness failure, `crictl stop`, an in-place resize
restart), and immediate would then release while that container may still act on a "yes" whose
validUntil has not passed. At pod shutdown the main container POSTs /release once its work
stopped (the example's SIGTERM trap, a classic preStop hook, the gate), and the sidecar releases
at once. */}}
{{- define "leasehold.releaseOnShutdown" -}}
{{- .Values.leaderElection.releaseOnShutdown | default "safe" -}}
{{- end -}}

{{/*
The lock kinds the sidecar reads and updates (by name), and those it may have to create, as
"leases,configmaps" strings. auto with the Lease API reads both (it honours an older ConfigMap lock
of the same name and writes it too while it exists) but only ever creates the Lease; without the
Lease API it is the ConfigMap lock.
*/}}
{{- define "leasehold.namedKinds" -}}
{{- $t := .Values.leaderElection.lockType -}}
{{- if eq $t "auto" -}}{{ ternary "leases,configmaps" "configmaps" (eq (include "leasehold.leaseApi" .) "true") }}
{{- else if eq $t "configmapsleases" -}}configmaps,leases
{{- else if eq $t "endpointsleases" -}}endpoints,leases
{{- else -}}{{ $t }}
{{- end -}}
{{- end -}}

{{- define "leasehold.createdKinds" -}}
{{- $t := .Values.leaderElection.lockType -}}
{{- if eq $t "auto" -}}{{ ternary "leases" "configmaps" (eq (include "leasehold.leaseApi" .) "true") }}
{{- else -}}{{ include "leasehold.namedKinds" . }}
{{- end -}}
{{- end -}}

{{/* "true" in observe mode (agentMode observe). */}}
{{- define "leasehold.observe" -}}
{{- if eq (.Values.agentMode | default "elect") "observe" -}}true{{- end -}}
{{- end -}}

{{/* "true" when the watcher Deployment renders: observe mode and observe.watcher.enabled. */}}
{{- define "leasehold.watcher" -}}
{{- if and (include "leasehold.observe" .) .Values.observe .Values.observe.watcher.enabled -}}true{{- end -}}
{{- end -}}

{{/* The verbs on the named lock: an observer reads it only. */}}
{{- define "leasehold.lockVerbs" -}}
{{- if include "leasehold.observe" . -}}["get", "watch"]{{- else -}}["get", "update", "watch"]{{- end -}}
{{- end -}}

{{- define "leasehold.apiGroup" -}}
{{- if eq . "leases" -}}coordination.k8s.io{{- end -}}
{{- end -}}

{{/* Fails rendering on contradictory values; renders nothing otherwise. */}}
{{- define "leasehold.validate" -}}
{{- $le := .Values.leaderElection -}}
{{- if and (not $le.enabled) (gt (int .Values.replicas) 1) -}}
{{- fail (printf "leaderElection.enabled=false (--lock-type none) makes every replica the leader, but replicas=%d: set replicas=1, or keep leader election on" (int .Values.replicas)) -}}
{{- end -}}
{{- if $le.enabled -}}
{{- if not (has $le.lockType (list "auto" "leases" "configmaps" "endpoints" "configmapsleases" "endpointsleases")) -}}
{{- fail (printf "leaderElection.lockType must be auto, leases, configmaps, endpoints, configmapsleases or endpointsleases, not %q (to turn leader election off: leaderElection.enabled=false)" $le.lockType) -}}
{{- end -}}
{{- if and (has $le.lockType (list "leases" "configmapsleases" "endpointsleases")) (ne (include "leasehold.leaseApi" .) "true") -}}
{{- fail (printf "leaderElection.lockType=%s needs coordination.k8s.io/v1 Leases, which this cluster does not serve: use auto or configmaps" $le.lockType) -}}
{{- end -}}
{{- if and $le.precreateLock (not (has $le.lockType (list "auto" "leases" "configmaps"))) -}}
{{- fail "leaderElection.precreateLock works with lockType auto, leases or configmaps" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.gate .Values.gate.enabled (eq (include "leasehold.releaseOnShutdown" .) "immediate") -}}
{{- fail "gate.enabled needs leaderElection.releaseOnShutdown safe (or empty): with immediate, a sidecar restarted alone releases at once while the gated program may still run" -}}
{{- end -}}
{{- $mode := .Values.agentMode | default "elect" -}}
{{- if not (has $mode (list "elect" "observe")) -}}
{{- fail (printf "agentMode must be elect or observe, not %q" $mode) -}}
{{- end -}}
{{- if include "leasehold.observe" . -}}
{{- if not $le.enabled -}}
{{- fail "agentMode=observe reads the operator's lock: it needs leaderElection.enabled=true (and no --lock-type none)" -}}
{{- end -}}
{{- if not $le.lockName -}}
{{- fail "agentMode=observe needs leaderElection.lockName: the name of the Lease the operator elects with (K8up v2: d2ab61da.syn.tools)" -}}
{{- end -}}
{{- if and .Values.gate .Values.gate.enabled -}}
{{- fail "agentMode=observe with gate.enabled: the gated program would be the operator, which leads only once it runs; observe mode stands beside an operator that elects itself" -}}
{{- end -}}
{{- if $le.precreateLock -}}
{{- fail "agentMode=observe with leaderElection.precreateLock: the operator creates its own lock, and the observer may not write it" -}}
{{- end -}}
{{- if $le.releaseOnShutdown -}}
{{- fail "agentMode=observe with leaderElection.releaseOnShutdown: an observer never writes the lock, so there is nothing to release (leave it empty)" -}}
{{- end -}}
{{- $rule := (.Values.observe | default dict).identity | default "pod" -}}
{{- if not (has $rule (list "pod" "exact")) -}}
{{- fail (printf "observe.identity must be pod or exact, not %q" $rule) -}}
{{- end -}}
{{- if and (include "leasehold.watcher" .) (not .Values.sidecar.probes.enabled) -}}
{{- fail "observe.watcher.enabled needs sidecar.probes.enabled: the watcher exists to be scraped, and /metrics is served on the probe listener" -}}
{{- end -}}
{{- end -}}
{{- if and (eq (include "leasehold.native" .) "true") (semverCompare "<1.29.0-0" .Capabilities.KubeVersion.Version) -}}
{{- fail (printf "sidecar.mode=native needs Kubernetes >= 1.29 (this is %s): the pod would hang in Init; use mode auto or classic" .Capabilities.KubeVersion.Version) -}}
{{- end -}}
{{- end -}}

{{- define "leasehold.image" -}}
{{- printf "%s:%s" .Values.image.repository (toString .Values.image.tag) -}}
{{- end -}}

{{/*
The sidecar container, as one item of a containers or initContainers list (indent it with
nindent). With a native sidecar it carries restartPolicy: Always and belongs in initContainers;
check with include "leasehold.native".
*/}}
{{- define "leasehold.sidecar" -}}
{{- include "leasehold.validate" . -}}
{{- $le := .Values.leaderElection -}}
{{- $sc := .Values.sidecar -}}
- name: {{ $sc.name }}
  image: {{ include "leasehold.image" . | quote }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  {{- if eq (include "leasehold.native" .) "true" }}
  restartPolicy: Always
  {{- end }}
  args:
    - --lock-name={{ include "leasehold.lockName" . }}
    - --lock-type={{ include "leasehold.lockType" . }}
    {{- with $le.namespace }}
    - --namespace={{ . }}
    {{- end }}
    {{- if include "leasehold.observe" . }}
    - --agent-mode=observe
    - --observe-identity={{ (.Values.observe | default dict).identity | default "pod" }}
    {{- end }}
    {{- if $le.enabled }}
    - --lease-duration={{ $le.leaseDuration }}
    - --renew-deadline={{ $le.renewDeadline }}
    - --retry-period={{ $le.retryPeriod }}
    {{- /* The gate stops its program stop-grace before validUntil: it keeps the headroom of a
    renew every retry-period unless renewInterval says otherwise. */}}
    {{- $interval := $le.renewInterval | default "auto" }}
    {{- if and .Values.gate .Values.gate.enabled (eq $interval "auto") }}
    {{- $interval = "retry-period" }}
    {{- end }}
    {{- /* An observer never renews. */}}
    {{- if not (include "leasehold.observe" .) }}
    - --renew-interval={{ $interval }}
    {{- end }}
    {{- if .Values.leaderLabel.enabled }}
    - --leader-label={{ .Values.leaderLabel.key }}
    {{- end }}
    {{- if .Values.deletionCost.enabled }}
    - --deletion-cost={{ int .Values.deletionCost.cost }}
    {{- end }}
    {{- end }}
    {{- if not (include "leasehold.observe" .) }}
    - --release-on-shutdown={{ include "leasehold.releaseOnShutdown" . }}
    {{- end }}
    - --http-address={{ $sc.httpAddress }}
    {{- if $sc.probes.enabled }}
    - --probe-address=:{{ $sc.probes.port }}
    {{- end }}
    - --log-format={{ $sc.logFormat }}
    - --log-level={{ $sc.logLevel }}
    {{- range $sc.extraArgs }}
    - {{ . | quote }}
    {{- end }}
  env:
    - name: POD_NAME
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
    - name: POD_NAMESPACE
      valueFrom:
        fieldRef:
          fieldPath: metadata.namespace
    {{- with $sc.extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- if $sc.probes.enabled }}
  ports:
    - name: lh-probes
      containerPort: {{ $sc.probes.port }}
  startupProbe:
    httpGet:
      path: /healthz
      port: lh-probes
    periodSeconds: {{ $sc.probes.startup.periodSeconds }}
    failureThreshold: {{ $sc.probes.startup.failureThreshold }}
  readinessProbe:
    httpGet:
      path: /readyz
      port: lh-probes
    periodSeconds: {{ $sc.probes.readiness.periodSeconds }}
    failureThreshold: {{ $sc.probes.readiness.failureThreshold }}
  livenessProbe:
    httpGet:
      path: /healthz
      port: lh-probes
    periodSeconds: {{ $sc.probes.liveness.periodSeconds }}
    failureThreshold: {{ $sc.probes.liveness.failureThreshold }}
  {{- end }}
  resources:
    {{- toYaml .Values.resources | nindent 4 }}
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
{{- end -}}


{{/*
The gate's init container (an initContainers item, before the sidecar): copies the binary into
the emptyDir of "leasehold.gateVolume", where the main container runs
/leasehold-bin/leasehold gate -- <command>.
*/}}
{{- define "leasehold.gateInstall" -}}
- name: leasehold-install
  image: {{ include "leasehold.image" . | quote }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  command: ["/leasehold", "install", "/leasehold-bin"]
  volumeMounts:
    - name: leasehold-bin
      mountPath: /leasehold-bin
  resources:
    requests:
      cpu: 10m
      memory: 8Mi
    limits:
      memory: 32Mi
  securityContext:
    {{- toYaml .Values.securityContext | nindent 4 }}
{{- end -}}

{{- define "leasehold.gateVolume" -}}
- name: leasehold-bin
  emptyDir:
    sizeLimit: 64Mi
{{- end -}}
