{{/*
One Deployment per role, from one image (docs/operations.md, "Start and stop"): include with
(dict "root" $ "component" "api" "role" .Values.api).
*/}}
{{- define "svc.deployment" -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "svc.fullname" .root }}-{{ .component }}
  labels:
    {{- include "svc.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  {{- if not .role.autoscaling.enabled }}
  replicas: {{ .role.replicas }}
  {{- end }}
  {{- if eq .component "api" }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
  {{- end }}
  selector:
    matchLabels:
      {{- include "svc.selectorLabels" .root | nindent 6 }}
      app.kubernetes.io/component: {{ .component }}
  template:
    metadata:
      labels:
        {{- include "svc.selectorLabels" .root | nindent 8 }}
        app.kubernetes.io/component: {{ .component }}
      annotations:
        # A new chart version rolls the pods.
        svc-server/chart-version: {{ .root.Chart.Version | quote }}
    spec:
      # SIGTERM drains within 10 s; 15 s leaves room for the preStop pause.
      terminationGracePeriodSeconds: 15
      # A Service named svc-server would inject SVC_SERVER_PORT=tcp://..., read as the port.
      enableServiceLinks: false
      # The assistant's Bash tool runs arbitrary commands: give it no API token.
      automountServiceAccountToken: false
      {{- with .root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml .root.Values.podSecurityContext | nindent 8 }}
      {{- if eq .component "api" }}
      # Not started before the schema matches this version (`main.js wait-for-migrations`): the
      # worker (or the migrations hook) applies them; /readyz keeps checking after.
      initContainers:
        - name: wait-for-migrations
          image: {{ include "svc.image" .root | quote }}
          imagePullPolicy: {{ .root.Values.image.pullPolicy }}
          command: ["node", "dist/server/main.js", "wait-for-migrations"]
          envFrom:
            - configMapRef:
                name: {{ include "svc.fullname" .root }}
            - secretRef:
                name: {{ include "svc.secretName" .root }}
          resources:
            requests:
              cpu: 50m
              memory: 96Mi
            limits:
              memory: 256Mi
          securityContext:
            allowPrivilegeEscalation: false
            capabilities:
              drop: ["ALL"]
      {{- end }}
      containers:
        - name: server
          image: {{ include "svc.image" .root | quote }}
          imagePullPolicy: {{ .root.Values.image.pullPolicy }}
          env:
            - name: SVC_ROLE
              value: {{ .component }}
            {{- if eq .component "api" }}
            # The migrations Job (a Helm hook) applies migrations; api pods never race over the schema.
            # (The worker also migrates at start, under the same lock: a no-op after the Job.)
            - name: SVC_MIGRATIONS
              value: skip
            {{- end }}
          envFrom:
            - configMapRef:
                name: {{ include "svc.fullname" .root }}
            - secretRef:
                name: {{ include "svc.secretName" .root }}
          ports:
            - name: http
              containerPort: 8080
              protocol: TCP
          startupProbe:
            httpGet:
              path: /healthz
              port: http
            periodSeconds: 2
            failureThreshold: 60
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
            periodSeconds: 5
            timeoutSeconds: 3
            failureThreshold: 3
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            periodSeconds: 10
            timeoutSeconds: 3
            failureThreshold: 3
          {{- if eq .component "api" }}
          lifecycle:
            # Keep serving while the endpoint leaves the Service, so a rolling update drops no request.
            preStop:
              exec:
                command: ["sleep", "3"]
          {{- end }}
          resources:
            {{- toYaml .role.resources | nindent 12 }}
          securityContext:
            allowPrivilegeEscalation: false
            capabilities:
              drop: ["ALL"]
          volumeMounts:
            - name: data
              mountPath: /data
      volumes:
        - name: data
          {{- if .root.Values.persistence.enabled }}
          persistentVolumeClaim:
            claimName: {{ include "svc.claimName" .root }}
          {{- else }}
          emptyDir: {}
          {{- end }}
      {{- with .root.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .root.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .root.Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}
