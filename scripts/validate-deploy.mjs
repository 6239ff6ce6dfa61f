#!/usr/bin/env node
// Offline validation of the deployment files: Dockerfile, docker-compose.yml,
// deploy/kubernetes/ and deploy/nginx/. Needs no Docker engine, cluster or network.
// Prints one line per check (PASS / FAIL / SKIP) and exits 1 if any check fails.
// External tools (docker-compose, kubectl, nginx) are used when installed and
// skipped otherwise; CI installs them with `apt-get install -y docker-compose nginx`.
//
// Usage: npm run validate:deploy    (or: node scripts/validate-deploy.mjs)

import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { validate as validateDockerfileSyntax } from 'dockerfile-utils';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { renderChart } from './helm-template.mjs';
import { parse as parseYaml, parseAllDocuments } from 'yaml';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const K8S_DIR = join(ROOT, 'deploy', 'kubernetes');
const NGINX_DIR = join(ROOT, 'deploy', 'nginx');
const CHART_DIR = join(ROOT, 'deploy', 'helm', 'svc-server');
const DUMMY_PASSWORD = 'validate-deploy-dummy';
const APP_PORT = 8080;

// ---------------------------------------------------------------- harness

let failures = 0;

class Skip {
  constructor(reason) {
    this.reason = reason;
  }
}

async function check(name, fn) {
  try {
    const result = await fn();
    if (result instanceof Skip && process.env.REQUIRE_DEPLOY_TOOLS === '1') {
      failures += 1;
      console.log(`FAIL  ${name}: ${result.reason} (REQUIRE_DEPLOY_TOOLS=1)`);
    } else if (result instanceof Skip) {
      console.log(`SKIP  ${name}: ${result.reason}`);
    } else {
      console.log(`PASS  ${name}${result ? `: ${result}` : ''}`);
    }
  } catch (error) {
    failures += 1;
    const lines = String(error?.message ?? error)
      .trimEnd()
      .split('\n');
    console.log(`FAIL  ${name}: ${lines[0]}`);
    for (const line of lines.slice(1)) console.log(`        ${line}`);
  }
}

/** Throws one error listing every problem, so a run shows them all at once. */
function assertNone(problems) {
  if (problems.length > 0) throw new Error(`${problems.length} problem(s)\n${problems.join('\n')}`);
}

/** Like `which`, but also looks in the sbin folders a non-root PATH lacks (nginx lives in /usr/sbin). */
function findExecutable(name) {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin'];
  for (const dir of dirs.filter(Boolean)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return null;
}

function run(command, args, { env, cwd = ROOT } = {}) {
  const result = spawnSync(command, args, {
    cwd,
    env: { ...process.env, NO_COLOR: '1', ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`
    .split('\n')
    // Noise from this machine's npm config, unrelated to the files checked.
    .filter((line) => !line.includes('Unknown user config'))
    .join('\n')
    .trim();
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  return { status: result.status, output };
}

function runOk(command, args, options) {
  const { status, output } = run(command, args, options);
  if (status !== 0) throw new Error(`${[command, ...args].join(' ')} exited ${status}\n${output}`);
  return output;
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

const read = (...parts) => readFileSync(join(ROOT, ...parts), 'utf8');

// ---------------------------------------------------------------- compose

async function composeChecks() {
  await check('compose: dclint docker-compose.yml', () => {
    runOk('npx', ['--no-install', 'dclint', '--max-warnings', '0', 'docker-compose.yml']);
    return 'no errors, no warnings';
  });

  await check('compose: docker-compose config -q', () => {
    const bin = findExecutable('docker-compose');
    if (!bin) return new Skip('docker-compose not on PATH (CI: apt-get install -y docker-compose)');
    runOk(bin, ['-f', 'docker-compose.yml', 'config', '-q'], { env: { SVC_REMOTE_PASSWORD: DUMMY_PASSWORD } });
    // The password must be mandatory: without it, config has to refuse.
    const env = { ...process.env };
    delete env.SVC_REMOTE_PASSWORD;
    const unset = spawnSync(bin, ['-f', 'docker-compose.yml', 'config', '-q'], { cwd: ROOT, env, encoding: 'utf8' });
    if (unset.status === 0) throw new Error('config succeeded without SVC_REMOTE_PASSWORD; it must be required');
    return `valid (${runOk(bin, ['version', '--short'])}); refuses to resolve without SVC_REMOTE_PASSWORD`;
  });

  await check('compose: services, probes, volumes', () => {
    const compose = parseYaml(read('docker-compose.yml'));
    const problems = [];
    if ('version' in compose) problems.push('top-level `version:` is obsolete in the compose spec');
    const services = compose.services ?? {};
    for (const name of ['postgres', 'redis', 'svc']) {
      if (!services[name]) problems.push(`service "${name}" missing`);
      else if (!services[name].healthcheck) problems.push(`service "${name}" has no healthcheck`);
    }
    const svc = services.svc ?? {};
    const env = svc.environment ?? {};
    if (!/^\$\{SVC_REMOTE_PASSWORD:\?/.test(String(env.SVC_REMOTE_PASSWORD ?? ''))) {
      problems.push('svc: SVC_REMOTE_PASSWORD must be ${SVC_REMOTE_PASSWORD:?...} (required)');
    }
    if (env.SVC_DATA_DIR !== '/data') problems.push('svc: SVC_DATA_DIR must be /data');
    if (!String(env.DATABASE_URL ?? '').startsWith('postgres://'))
      problems.push('svc: DATABASE_URL must be postgres://');
    if (!String(env.REDIS_URL ?? '').startsWith('redis://')) problems.push('svc: REDIS_URL must be redis://');
    if (!(svc.volumes ?? []).some((v) => String(v).endsWith(':/data')))
      problems.push('svc: no volume mounted at /data');
    for (const dep of ['postgres', 'redis']) {
      if (svc.depends_on?.[dep]?.condition !== 'service_healthy') {
        problems.push(`svc: depends_on.${dep}.condition must be service_healthy`);
      }
    }
    if (!JSON.stringify(svc.healthcheck?.test ?? '').includes('/healthz'))
      problems.push('svc: healthcheck must hit /healthz');
    assertNone(problems);
  });
}

// ---------------------------------------------------------------- Dockerfile

/** Splits a Dockerfile into instructions, joining `\` continuations and dropping comments. */
function parseDockerfile(text) {
  const instructions = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!pending && (line === '' || line.startsWith('#'))) continue;
    if (pending && line.startsWith('#')) continue; // comment inside a continuation
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    const match = /^(\S+)\s*(.*)$/s.exec(full);
    if (match) instructions.push({ keyword: match[1].toUpperCase(), args: match[2].trim() });
  }
  return instructions;
}

/** Words of a shell-form argument list, honouring simple quotes. */
function words(args) {
  return [...args.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}

/** Exec-form JSON array if it is one, else null. */
function execForm(args) {
  if (!args.startsWith('[')) return null;
  try {
    return JSON.parse(args);
  } catch {
    return null;
  }
}

async function dockerfileChecks() {
  const text = read('Dockerfile');

  await check('dockerfile: syntax (dockerfile-utils)', () => {
    const diagnostics = validateDockerfileSyntax(text);
    assertNone(diagnostics.map((d) => `line ${d.range.start.line + 1}: ${d.message}`));
  });

  await check('dockerfile: runtime stage', () => {
    const instructions = parseDockerfile(text);
    const problems = [];
    const froms = instructions.filter((i) => i.keyword === 'FROM');
    if (froms.length < 2) problems.push('expected a multi-stage build');
    const argDefaults = Object.fromEntries(
      instructions
        .filter((i) => i.keyword === 'ARG' && i.args.includes('='))
        .map((i) => i.args.split('=').map((s) => s.trim())),
    );
    for (const from of froms) {
      const image = words(from.args)
        .find((w) => !w.startsWith('--'))
        .replace(/^\$\{?(\w+)\}?$/, (_, name) => argDefaults[name] ?? name);
      // A maintained Node LTS (22 or 24); Node 20 reached its end of life in April 2026.
      if (!/^node:(22|24)-bookworm-slim$/.test(image))
        problems.push(`FROM ${image}: expected node:24-bookworm-slim (or node:22-bookworm-slim), a maintained LTS`);
    }

    const runtime = instructions.slice(instructions.lastIndexOf(froms.at(-1)));
    const all = (keyword) => runtime.filter((i) => i.keyword === keyword);

    const user = all('USER').at(-1)?.args.split(':')[0];
    if (!user) problems.push('no USER in the runtime stage (would run as root)');
    else if (user === 'root' || user === '0') problems.push(`USER ${user} is root`);

    const env = {};
    for (const i of all('ENV')) {
      for (const word of words(i.args)) {
        const eq = word.indexOf('=');
        if (eq > 0) env[word.slice(0, eq)] = word.slice(eq + 1);
      }
    }
    const wantEnv = { NODE_ENV: 'production', SVC_DATA_DIR: '/data', PORT: String(APP_PORT) };
    for (const [key, value] of Object.entries(wantEnv)) {
      if (env[key] !== value) problems.push(`ENV ${key}=${value} missing (found ${env[key] ?? 'none'})`);
    }

    const volumes = all('VOLUME').flatMap((i) => execForm(i.args) ?? words(i.args));
    if (!volumes.includes('/data')) problems.push('no VOLUME /data');
    if (!all('RUN').some((i) => /chown\b.*\bnode\b.*\/data/.test(i.args))) {
      problems.push('/data is not chowned to node before VOLUME');
    }

    const exposed = all('EXPOSE').flatMap((i) => words(i.args));
    if (!exposed.some((p) => p.split('/')[0] === String(APP_PORT))) problems.push(`no EXPOSE ${APP_PORT}`);

    const healthcheck = all('HEALTHCHECK').at(-1)?.args ?? '';
    if (!healthcheck.includes('/healthz')) problems.push('HEALTHCHECK must hit /healthz');

    // The image must start exactly what `npm run start:prod` starts. Variables the script sets
    // first (`MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} node ...`) the image's ENV sets alike.
    const cmd = execForm(all('CMD').at(-1)?.args ?? '');
    let startProd = JSON.parse(read('package.json')).scripts?.['start:prod'];
    for (let m; startProd && (m = /^([A-Z_][A-Z0-9_]*)=(?:\$\{\1:-([^}]*)\}|(\S*))\s+/.exec(startProd));) {
      const value = m[2] ?? m[3];
      if (env[m[1]] !== value)
        problems.push(`scripts.start:prod sets ${m[1]}=${value}, the image's ENV ${env[m[1]] ?? 'not'}`);
      startProd = startProd.slice(m[0].length);
    }
    if (!cmd) problems.push('CMD must use exec form');
    else if (startProd && cmd.join(' ') !== startProd) {
      problems.push(`CMD "${cmd.join(' ')}" differs from scripts.start:prod "${startProd}"`);
    }
    assertNone(problems);
    return `FROM x${froms.length}, USER ${user}, VOLUME /data, HEALTHCHECK /healthz`;
  });

  await check('dockerfile: .dockerignore', () => {
    const entries = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim().replace(/^\/|\/$/g, ''));
    assertNone(
      ['node_modules', 'dist', 'data', '.git', '.env']
        .filter((e) => !entries.includes(e))
        .map((e) => `${e} not ignored`),
    );
  });
}

// ---------------------------------------------------------------- Kubernetes

const MODELS = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'v1/Secret': Secret,
  'v1/ConfigMap': ConfigMap,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/Ingress': Ingress,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};
const OVERLAY_DIR = join(ROOT, 'deploy', 'overlays', 'scaled');

function loadManifests() {
  const files = readdirSync(K8S_DIR)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  const objects = [];
  let kustomization = null;
  for (const file of files) {
    for (const doc of parseAllDocuments(readFileSync(join(K8S_DIR, file), 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0].message}`);
      const obj = doc.toJS();
      if (obj == null) continue; // empty document
      if (obj.kind === 'Kustomization') kustomization = { file, obj };
      else objects.push({ file, obj });
    }
  }
  return { files, objects, kustomization };
}

function podProblems(deployment, role, { secrets, configMaps, pvcs }) {
  const problems = [];
  const name = deployment.metadata?.name;
  const pod = deployment.spec?.template?.spec ?? {};
  const containers = pod.containers ?? [];
  if (containers.length !== 1) problems.push(`${name}: expected one container, found ${containers.length}`);
  const c = containers[0] ?? {};

  const roleVar = (c.env ?? []).find((e) => e.name === 'SVC_ROLE');
  if (roleVar?.value !== role) problems.push(`${name}: SVC_ROLE must be "${role}" (found ${roleVar?.value ?? 'none'})`);

  const ports = c.ports ?? [];
  if (!ports.some((p) => p.containerPort === APP_PORT)) problems.push(`${name}: no containerPort ${APP_PORT}`);
  const portOf = (probe) => {
    const port = probe?.httpGet?.port;
    return typeof port === 'string' ? ports.find((p) => p.name === port)?.containerPort : port;
  };
  for (const [kind, path] of [
    ['readinessProbe', '/readyz'],
    ['livenessProbe', '/healthz'],
  ]) {
    const probe = c[kind];
    if (probe?.httpGet?.path !== path)
      problems.push(`${name}: ${kind} must GET ${path} (found ${probe?.httpGet?.path ?? 'none'})`);
    if (portOf(probe) !== APP_PORT) problems.push(`${name}: ${kind} must use port ${APP_PORT}`);
  }

  const envFrom = c.envFrom ?? [];
  const secretRef = envFrom.find((e) => e.secretRef)?.secretRef?.name;
  const configMapRef = envFrom.find((e) => e.configMapRef)?.configMapRef?.name;
  if (!secrets.has(secretRef))
    problems.push(`${name}: envFrom secretRef "${secretRef}" is not a Secret in these manifests`);
  if (!configMaps.has(configMapRef))
    problems.push(`${name}: envFrom configMapRef "${configMapRef}" is not a ConfigMap in these manifests`);

  const mount = (c.volumeMounts ?? []).find((m) => m.mountPath === '/data');
  const volume = (pod.volumes ?? []).find((v) => v.name === mount?.name);
  const pvc = pvcs.get(volume?.persistentVolumeClaim?.claimName);
  if (!mount) problems.push(`${name}: nothing mounted at /data`);
  else if (!pvc) problems.push(`${name}: /data is not backed by a PersistentVolumeClaim from these manifests`);
  else if (!(pvc.spec?.accessModes ?? []).includes('ReadWriteMany'))
    problems.push(`${name}: the /data claim must be ReadWriteMany`);

  const sc = pod.securityContext ?? {};
  if (sc.runAsNonRoot !== true) problems.push(`${name}: securityContext.runAsNonRoot must be true`);
  if (sc.runAsUser !== 1000) problems.push(`${name}: securityContext.runAsUser must be 1000 (node)`);
  if (sc.fsGroup !== 1000) problems.push(`${name}: securityContext.fsGroup must be 1000 so /data is writable`);
  // The server drains within 10 s of SIGTERM; Kubernetes must wait longer than that.
  if (!(pod.terminationGracePeriodSeconds > 10)) problems.push(`${name}: terminationGracePeriodSeconds must exceed 10`);
  // A Service named svc-server injects SVC_SERVER_PORT=tcp://..., which the server reads as its port.
  if (pod.enableServiceLinks !== false) problems.push(`${name}: enableServiceLinks must be false`);
  if (!c.resources?.requests || !c.resources?.limits) problems.push(`${name}: resources.requests and .limits required`);
  return problems;
}

async function kubernetesChecks() {
  let manifests;
  await check('kubernetes: parse deploy/kubernetes/*.yaml', () => {
    manifests = loadManifests();
    if (!manifests.kustomization) throw new Error('no kustomization.yaml');
    return `${manifests.objects.length} objects in ${manifests.files.length} files`;
  });
  if (!manifests) return;
  const { files, objects, kustomization } = manifests;

  await check('kubernetes: schema (kubernetes-models)', () => {
    const problems = [];
    for (const { file, obj } of objects) {
      const key = `${obj.apiVersion}/${obj.kind}`;
      const Model = MODELS[key];
      if (!Model) {
        problems.push(`${file}: no schema wired up for ${key}; add it to MODELS`);
        continue;
      }
      try {
        new Model(obj).validate();
      } catch (error) {
        const details = (error.errors ?? [error]).map((e) => `${e.instancePath ?? ''} ${e.message}`.trim());
        problems.push(`${file}: ${obj.kind} ${obj.metadata?.name}: ${details.join('; ')}`);
      }
    }
    assertNone(problems);
    return objects.map(({ obj }) => obj.kind).join(', ');
  });

  await check('kubernetes: kustomization lists every manifest', () => {
    const resources = kustomization.obj.resources ?? [];
    const manifestFiles = files.filter((f) => f !== kustomization.file);
    assertNone([
      ...manifestFiles.filter((f) => !resources.includes(f)).map((f) => `${f} not in resources`),
      ...resources.filter((r) => !files.includes(r)).map((r) => `resource ${r} does not exist`),
      ...objects.filter(({ obj }) => obj.metadata?.namespace).map(({ file }) => `${file}: sets a namespace`),
    ]);
  });

  const byKind = (kind) => objects.filter(({ obj }) => obj.kind === kind).map(({ obj }) => obj);
  const refs = {
    secrets: new Set(byKind('Secret').map((o) => o.metadata?.name)),
    configMaps: new Set(byKind('ConfigMap').map((o) => o.metadata?.name)),
    pvcs: new Map(byKind('PersistentVolumeClaim').map((o) => [o.metadata?.name, o])),
  };
  const deployments = new Map(byKind('Deployment').map((o) => [o.metadata?.name, o]));

  for (const [name, role] of [
    ['svc-api', 'api'],
    ['svc-worker', 'worker'],
  ]) {
    await check(`kubernetes: Deployment ${name}`, () => {
      const deployment = deployments.get(name);
      if (!deployment) throw new Error('missing');
      const problems = podProblems(deployment, role, refs);
      if (role === 'api' && !(deployment.spec?.replicas >= 2)) problems.push(`${name}: replicas must be at least 2`);
      assertNone(problems);
      return `SVC_ROLE=${role}, readiness /readyz, liveness /healthz, /data on RWX claim`;
    });
  }

  await check('kubernetes: Service, Secret, ConfigMap, PVC', () => {
    const problems = [];
    const services = byKind('Service');
    if (services.length !== 1) problems.push(`expected one Service, found ${services.length}`);
    const service = services[0] ?? {};
    const podLabels = (n) => deployments.get(n)?.spec?.template?.metadata?.labels ?? {};
    const selects = (labels) =>
      Object.entries(service.spec?.selector ?? {}).every(([k, v]) => labels[k] === v) && service.spec?.selector;
    if ((service.spec?.type ?? 'ClusterIP') !== 'ClusterIP') problems.push('Service must be ClusterIP');
    if (!selects(podLabels('svc-api'))) problems.push('Service selector does not match svc-api pods');
    if (selects(podLabels('svc-worker'))) problems.push('Service selector also matches svc-worker pods');
    const port = service.spec?.ports?.[0];
    const apiPorts = deployments.get('svc-api')?.spec?.template?.spec?.containers?.[0]?.ports ?? [];
    const target =
      typeof port?.targetPort === 'string'
        ? apiPorts.find((p) => p.name === port.targetPort)?.containerPort
        : port?.targetPort;
    if (port?.port !== 80 || target !== APP_PORT) problems.push(`Service must map port 80 to ${APP_PORT}`);

    const secret = byKind('Secret')[0] ?? {};
    const secretKeys = Object.keys({ ...secret.data, ...secret.stringData });
    for (const key of ['SVC_REMOTE_PASSWORD', 'DATABASE_URL', 'REDIS_URL']) {
      if (!secretKeys.includes(key)) problems.push(`Secret lacks ${key}`);
    }
    const config = byKind('ConfigMap')[0]?.data ?? {};
    if (config.SVC_DATA_DIR !== '/data') problems.push('ConfigMap SVC_DATA_DIR must be /data');
    if (config.PORT !== undefined && config.PORT !== String(APP_PORT))
      problems.push(`ConfigMap PORT must be "${APP_PORT}"`);
    for (const pvc of refs.pvcs.values()) {
      if (!(pvc.spec?.accessModes ?? []).includes('ReadWriteMany'))
        problems.push(`PVC ${pvc.metadata?.name} must be ReadWriteMany`);
    }
    assertNone(problems);
  });

  await check('kubernetes: migrations Job named for the version; api waits for it, the worker applies them', () => {
    const problems = [];
    const tag = (kustomization.obj.images ?? []).find((i) => i.name === 'svc-server')?.newTag ?? '';
    const jobName = `svc-migrate-${String(tag)
      .replace(/[^a-z0-9]+/gi, '-')
      .toLowerCase()}`;
    const job = byKind('Job').find((o) => o.metadata?.name === jobName);
    if (!job) throw new Error(`no Job ${jobName} (its name carries the image tag ${tag} of kustomization.yaml)`);
    const c = job.spec?.template?.spec?.containers?.[0] ?? {};
    if (!(c.command ?? []).includes('migrate')) problems.push(`${jobName} must run \`main.js migrate\``);
    const envFrom = c.envFrom ?? [];
    if (!refs.secrets.has(envFrom.find((e) => e.secretRef)?.secretRef?.name)) problems.push(`${jobName}: secretRef`);
    if (!refs.configMaps.has(envFrom.find((e) => e.configMapRef)?.configMapRef?.name))
      problems.push(`${jobName}: configMapRef`);
    if (!(job.spec?.ttlSecondsAfterFinished > 0))
      problems.push(`${jobName}: ttlSecondsAfterFinished lets a finished Job go`);
    // The api pods wait for the schema; the worker applies pending migrations itself at start under
    // the Job's advisory lock (so a first `helm install --wait`, whose hook runs after the pods are
    // ready, cannot deadlock), and neither serves on an old schema (/readyz).
    for (const name of ['svc-api', 'svc-worker']) {
      const pod = deployments.get(name)?.spec?.template?.spec ?? {};
      const env = pod.containers?.[0]?.env ?? [];
      const skip = env.find((e) => e.name === 'SVC_MIGRATIONS')?.value === 'skip';
      if (name === 'svc-api' && !skip) problems.push(`${name}: SVC_MIGRATIONS must be skip`);
      if (name === 'svc-worker' && skip)
        problems.push(`${name}: the worker applies migrations (no SVC_MIGRATIONS=skip)`);
      const init = (pod.initContainers ?? []).find((i) => (i.command ?? []).includes('wait-for-migrations'));
      if (name === 'svc-api') {
        if (!init) problems.push(`${name}: an init container must run \`main.js wait-for-migrations\``);
        else if (!refs.secrets.has((init.envFrom ?? []).find((e) => e.secretRef)?.secretRef?.name))
          problems.push(`${name}: the init container needs the Secret (DATABASE_URL)`);
      }
      if (pod.containers?.[0]?.readinessProbe?.httpGet?.path !== '/readyz') problems.push(`${name}: readiness /readyz`);
    }
    assertNone(problems);
    return `Job ${jobName}; api: init container wait-for-migrations, SVC_MIGRATIONS=skip; worker migrates; /readyz`;
  });

  await check('kubernetes: PodDisruptionBudgets and Ingress', () => {
    const problems = [];
    const labelsOf = (n) => deployments.get(n)?.spec?.template?.metadata?.labels ?? {};
    for (const name of ['svc-api', 'svc-worker']) {
      const pdb = byKind('PodDisruptionBudget').find((p) =>
        Object.entries(p.spec?.selector?.matchLabels ?? {}).every(([k, v]) => labelsOf(name)[k] === v),
      );
      if (!pdb) problems.push(`no PodDisruptionBudget selects ${name} pods`);
    }
    const ingress = byKind('Ingress')[0];
    if (!ingress) throw new Error('no Ingress');
    const annotations = ingress.metadata?.annotations ?? {};
    for (const key of ['proxy-read-timeout', 'proxy-send-timeout']) {
      if (!(Number(annotations[`nginx.ingress.kubernetes.io/${key}`]) >= 3600))
        problems.push(`Ingress: nginx.ingress.kubernetes.io/${key} must be at least 3600 (WebSocket)`);
    }
    const service = byKind('Service')[0]?.metadata?.name;
    const backends = (ingress.spec?.rules ?? [])
      .flatMap((r) => r.http?.paths ?? [])
      .map((p) => p.backend?.service?.name);
    if (backends.length === 0 || backends.some((b) => b !== service))
      problems.push(`Ingress backends must be the Service ${service}`);
    assertNone(problems);
  });

  await check('kubernetes: overlay deploy/overlays/scaled (kubectl kustomize)', () => {
    const bin = findExecutable('kubectl');
    if (!bin) return new Skip('kubectl not on PATH');
    const rendered = parseAllDocuments(runOk(bin, ['kustomize', OVERLAY_DIR]))
      .filter((d) => d.contents)
      .map((d) => d.toJS());
    const replicas = (n) => rendered.find((o) => o.kind === 'Deployment' && o.metadata?.name === n)?.spec?.replicas;
    const api = replicas('svc-api');
    const worker = replicas('svc-worker');
    if (!(api >= 2) || !(worker >= 1) || api === worker) {
      throw new Error(`api and worker must scale separately (api ${api}, worker ${worker})`);
    }
    for (const obj of rendered) {
      const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
      if (Model) new Model(obj).validate();
    }
    return `api ${api}, worker ${worker} replicas`;
  });

  await check('kubernetes: kubectl kustomize', () => {
    const bin = findExecutable('kubectl');
    if (!bin) return new Skip('kubectl not on PATH');
    const rendered = parseAllDocuments(runOk(bin, ['kustomize', K8S_DIR])).filter((d) => d.contents);
    if (rendered.length !== objects.length) {
      throw new Error(`rendered ${rendered.length} objects, expected ${objects.length}`);
    }
    return `${rendered.length} objects rendered`;
  });
}

// ---------------------------------------------------------------- helm

/** The values a first install must give (or an existing Secret): dummy ones for rendering. */
const HELM_REQUIRED = [
  `auth.password=${DUMMY_PASSWORD}`,
  'database.url=postgres://svc:dummy@postgres:5432/svc',
  'redis.url=redis://redis:6379',
];

/** A ServiceMonitor (monitoring.coreos.com/v1, no schema in kubernetes-models): the fields Prometheus Operator needs. */
function serviceMonitorProblems(obj, objects) {
  const problems = [];
  const selector = obj.spec?.selector?.matchLabels ?? {};
  const services = objects.filter(
    (o) => o.kind === 'Service' && Object.entries(selector).every(([k, v]) => o.metadata?.labels?.[k] === v),
  );
  if (services.length !== 1) problems.push(`ServiceMonitor selects ${services.length} Services (expected 1)`);
  const endpoint = obj.spec?.endpoints?.[0] ?? {};
  if (endpoint.path !== '/metrics') problems.push('ServiceMonitor endpoint path must be /metrics');
  if (!services[0]?.spec?.ports?.some((p) => p.name === endpoint.port))
    problems.push(`ServiceMonitor port ${endpoint.port} is not a port of its Service`);
  return problems;
}

function renderHelm(valuesFiles, set) {
  const { chart, yaml } = renderChart(CHART_DIR, { valuesFiles, set });
  const objects = parseAllDocuments(yaml)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`rendered YAML: ${d.errors[0].message}`);
      return d.toJS();
    })
    .filter(Boolean);
  return { chart, yaml, objects };
}

async function helmChecks() {
  const scaledValues = join(CHART_DIR, 'ci', 'scaled-values.yaml');
  const renders = {};
  await check('helm: Chart.yaml appVersion is package.json version', () => {
    const chart = parseYaml(read('deploy', 'helm', 'svc-server', 'Chart.yaml'));
    const version = JSON.parse(read('package.json')).version;
    if (String(chart.appVersion) !== version)
      throw new Error(`appVersion ${chart.appVersion}, package.json ${version}`);
    return `appVersion ${version}`;
  });
  for (const [label, files, set] of [
    ['default values', [], HELM_REQUIRED],
    ['ci/scaled-values.yaml', [scaledValues], []],
  ]) {
    await check(`helm: render (${label}) and schema (kubernetes-models)`, () => {
      const rendered = renderHelm(files, set);
      renders[label] = rendered;
      const problems = [];
      for (const obj of rendered.objects) {
        if (obj.kind === 'ServiceMonitor') {
          problems.push(...serviceMonitorProblems(obj, rendered.objects));
          continue;
        }
        const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
        if (!Model) {
          problems.push(`no schema wired up for ${obj.apiVersion}/${obj.kind}`);
          continue;
        }
        try {
          new Model(obj).validate();
        } catch (error) {
          const details = (error.errors ?? [error]).map((e) => `${e.instancePath ?? ''} ${e.message}`.trim());
          problems.push(`${obj.kind} ${obj.metadata?.name}: ${details.join('; ')}`);
        }
      }
      assertNone(problems);
      return rendered.objects.map((o) => o.kind).join(', ');
    });
  }
  await check('helm: a first install without secrets is refused with a message', () => {
    try {
      renderHelm([], []);
    } catch (error) {
      if (/auth\.password is required/.test(error.message)) return 'auth.password is required …';
      throw error;
    }
    throw new Error('rendered without auth.password and without an existing Secret');
  });

  const byKind = (objects, kind) => objects.filter((o) => o.kind === kind);
  for (const label of Object.keys(renders)) {
    const { objects } = renders[label];
    await check(`helm (${label}): Deployments, migrations hook, Service, PDBs`, () => {
      const scaled = label !== 'default values';
      const secrets = new Set(byKind(objects, 'Secret').map((o) => o.metadata.name));
      if (scaled) secrets.add('svc-server-secrets'); // auth.existingSecret
      const pvcs = new Map(byKind(objects, 'PersistentVolumeClaim').map((o) => [o.metadata.name, o]));
      if (scaled) pvcs.set('svc-data', { spec: { accessModes: ['ReadWriteMany'] } }); // persistence.existingClaim
      const refs = { secrets, configMaps: new Set(byKind(objects, 'ConfigMap').map((o) => o.metadata.name)), pvcs };
      const problems = [];
      const deployments = byKind(objects, 'Deployment');
      for (const role of ['api', 'worker']) {
        const d = deployments.find((o) => o.metadata.labels?.['app.kubernetes.io/component'] === role);
        if (!d) {
          problems.push(`no ${role} Deployment`);
          continue;
        }
        problems.push(...podProblems(d, role, refs));
        const env = d.spec.template.spec.containers[0].env ?? [];
        if (role === 'api' && env.find((e) => e.name === 'SVC_MIGRATIONS')?.value !== 'skip')
          problems.push('api: SVC_MIGRATIONS must be skip');
        const hpa = byKind(objects, 'HorizontalPodAutoscaler').find(
          (h) => h.spec.scaleTargetRef.name === d.metadata.name,
        );
        if (scaled && !hpa) problems.push(`${role}: no HorizontalPodAutoscaler`);
        if (hpa && d.spec.replicas !== undefined) problems.push(`${role}: replicas set beside an HPA`);
        const pdb = byKind(objects, 'PodDisruptionBudget').find((p) =>
          Object.entries(p.spec.selector.matchLabels).every(([k, v]) => d.spec.template.metadata.labels[k] === v),
        );
        if (!pdb) problems.push(`${role}: no PodDisruptionBudget`);
      }
      const job = byKind(objects, 'Job')[0];
      if (!job) problems.push('no migrations Job');
      else {
        const hooks = String(job.metadata.annotations?.['helm.sh/hook'] ?? '');
        if (!hooks.includes('pre-upgrade')) problems.push('the migrations Job must be a pre-upgrade hook');
        if (!(job.spec.template.spec.containers[0].command ?? []).includes('migrate'))
          problems.push('the Job must run migrate');
        if (!job.metadata.name.endsWith(JSON.parse(read('package.json')).version.replace(/\./g, '-')))
          problems.push(`the Job's name must carry the image version (${job.metadata.name})`);
      }
      const service = byKind(objects, 'Service').find(
        (o) => o.spec.selector?.['app.kubernetes.io/component'] === 'api',
      );
      if (!service) problems.push('no Service selecting the api pods');
      if (scaled) {
        const ingress = byKind(objects, 'Ingress')[0];
        const config = byKind(objects, 'ConfigMap')[0]?.data ?? {};
        if (!ingress) problems.push('no Ingress');
        else if (ingress.spec.rules[0].http.paths[0].path !== '/svc') problems.push('Ingress path must be /svc');
        if (config.SVC_BASE_PATH !== '/svc') problems.push('a kept ingress prefix must set SVC_BASE_PATH=/svc');
        if (byKind(objects, 'NetworkPolicy').length !== 2) problems.push('expected two NetworkPolicies (api, worker)');
        if (byKind(objects, 'ServiceMonitor').length !== 1) problems.push('expected a ServiceMonitor');
      }
      assertNone(problems);
      return `${deployments.length} Deployments, Job ${job?.metadata.name}`;
    });
  }

  await check('helm: kept in step with deploy/kubernetes (containers, probes, env, security)', () => {
    const helm = renders['default values']?.objects;
    if (!helm) throw new Error('the default render failed');
    const kustomize = loadManifests().objects.map(({ obj }) => obj);
    // What both must agree on, per role: the pod shape without names, images and sizes.
    const shape = (d) => {
      const pod = d.spec.template.spec;
      const c = pod.containers[0];
      return JSON.stringify({
        env: c.env,
        ports: c.ports,
        probes: [c.startupProbe, c.readinessProbe, c.livenessProbe],
        lifecycle: c.lifecycle,
        securityContext: c.securityContext,
        podSecurity: { ...pod.securityContext, fsGroupChangePolicy: undefined },
        grace: pod.terminationGracePeriodSeconds,
        serviceLinks: pod.enableServiceLinks,
        token: pod.automountServiceAccountToken,
        mounts: c.volumeMounts,
        strategy: d.spec.strategy,
      });
    };
    const problems = [];
    for (const role of ['api', 'worker']) {
      const of = (objs) =>
        objs.find((o) => o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/component'] === role);
      const [a, b] = [of(helm), of(kustomize)];
      if (!a || !b) problems.push(`${role}: missing in ${a ? 'kustomize' : 'helm'}`);
      else if (shape(a) !== shape(b)) problems.push(`${role}: helm ${shape(a)}\n    kustomize ${shape(b)}`);
    }
    const jobCommand = (objs) =>
      JSON.stringify(objs.find((o) => o.kind === 'Job')?.spec.template.spec.containers[0].command);
    if (jobCommand(helm) !== jobCommand(kustomize)) problems.push('the migrations Jobs run different commands');
    const configKeys = (objs) =>
      Object.keys(objs.find((o) => o.kind === 'ConfigMap')?.data ?? {})
        .filter((k) => k !== 'SVC_METRICS_PUBLIC')
        .sort()
        .join(',');
    if (configKeys(helm) !== configKeys(kustomize))
      problems.push(`ConfigMap keys: helm ${configKeys(helm)}, kustomize ${configKeys(kustomize)}`);
    assertNone(problems);
    return 'api and worker pods, the migrations command and the settings agree';
  });

  await check('helm: helm lint and helm template', () => {
    const bin = findExecutable('helm');
    // helm is no Debian package and no npm package renders charts: scripts/helm-template.mjs did above.
    if (!bin) return 'helm not installed; rendered by scripts/helm-template.mjs';
    runOk(bin, ['lint', CHART_DIR, ...HELM_REQUIRED.flatMap((s) => ['--set', s])]);
    const rendered = parseAllDocuments(
      runOk(bin, ['template', 'svc', CHART_DIR, ...HELM_REQUIRED.flatMap((s) => ['--set', s])]),
    ).filter((d) => d.contents).length;
    if (rendered !== renders['default values']?.objects.length)
      throw new Error(
        `helm rendered ${rendered} objects, scripts/helm-template.mjs ${renders['default values']?.objects.length}`,
      );
    return `${rendered} objects, as scripts/helm-template.mjs`;
  });
}

// ---------------------------------------------------------------- nginx

async function nginxChecks() {
  const conf = readFileSync(join(NGINX_DIR, 'svc.conf'), 'utf8');
  // Comments hold the keep-prefix alternative; check only the live directives.
  const live = conf
    .split('\n')
    .map((l) => l.replace(/#.*$/, ''))
    .join('\n');

  await check('nginx: svc.conf directives', () => {
    const required = [
      [/map\s+\$http_upgrade\s+\$connection_upgrade/, 'map $http_upgrade $connection_upgrade'],
      [/location\s+\/svc\/\s*\{/, 'location /svc/'],
      [/proxy_pass\s+http:\/\/svc_upstream\/;/, 'proxy_pass http://svc_upstream/; (prefix stripped)'],
      [/proxy_http_version\s+1\.1;/, 'proxy_http_version 1.1'],
      [/proxy_set_header\s+Upgrade\s+\$http_upgrade;/, 'Upgrade header'],
      [/proxy_set_header\s+Connection\s+\$connection_upgrade;/, 'Connection header'],
      [/proxy_set_header\s+X-Forwarded-For\s+\$proxy_add_x_forwarded_for;/, 'X-Forwarded-For header'],
      [/proxy_read_timeout\s+\d+s?;/, 'proxy_read_timeout'],
      [/client_max_body_size\s+\S+;/, 'client_max_body_size'],
    ];
    assertNone(required.filter(([re]) => !re.test(live)).map(([, what]) => `missing ${what}`));
    if (!/SVC_BASE_PATH=\/svc/.test(conf))
      throw new Error('the keep-prefix alternative (SVC_BASE_PATH=/svc) is not documented');
  });

  await check('nginx: nginx -t', async () => {
    const bin = findExecutable('nginx');
    if (!bin) return new Skip('nginx not on PATH (CI: apt-get install -y nginx)');
    const dir = mkdtempSync(join(tmpdir(), 'validate-nginx-'));
    try {
      mkdirSync(join(dir, 'logs'));
      mkdirSync(join(dir, 'tmp'));
      copyFileSync(join(NGINX_DIR, 'nginx.test.conf'), join(dir, 'nginx.test.conf'));
      // `nginx -t` binds the listen sockets, and port 80 needs root: move them to a free port.
      const port = await freePort();
      const svcConf = readFileSync(join(NGINX_DIR, 'svc.conf'), 'utf8');
      writeFileSync(join(dir, 'svc.conf'), svcConf.replace(/^(\s*listen\s+)[^\s;]+/gm, `$1127.0.0.1:${port}`));
      const output = runOk(bin, ['-t', '-e', 'stderr', '-p', dir, '-c', join(dir, 'nginx.test.conf')]);
      return output.split('\n').find((l) => l.includes('syntax is ok')) ? 'syntax is ok' : output;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

// ---------------------------------------------------------------- main

await composeChecks();
await dockerfileChecks();
await kubernetesChecks();
await helmChecks();
await nginxChecks();

console.log(failures === 0 ? 'deploy validation passed' : `deploy validation FAILED: ${failures} check(s)`);
process.exit(failures === 0 ? 0 : 1);
