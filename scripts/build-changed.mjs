#!/usr/bin/env node
// `npm start`'s build: builds only what changed since the last build (docs/development.md, "Building").
//
// Four steps, each skipped when a hash of its inputs matches the stamp the last successful run of
// that step wrote (dist/.build-stamps.json) and its output is still there:
//   server  tsc -p tsconfig.build.json (itself incremental, tsBuildInfo in dist/.tsbuildinfo)
//   bundle  the server as one bundle in dist/server (scripts/bundle-server.mjs), from the compiled server
//   db      the embedded database snapshot (from the compiled migrations)
//   web     the web app (vite), from apps/web and the shared contracts
// `npm run build` still builds everything; `--force` here ignores the stamps.
//
// Usage: node scripts/build-changed.mjs [--force]

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STAMPS = join(ROOT, 'dist', '.build-stamps.json');
const force = process.argv.includes('--force');

/** Every file under `dir` whose name passes `keep` (node_modules and dist skipped), sorted. */
function filesUnder(dir, keep = () => true, out = []) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) filesUnder(full, keep, out);
    else if (keep(entry.name)) out.push(full);
  }
  return out.sort();
}

/** A hash of the files' paths and contents (contents, not times: a checkout or touch changes nothing). */
function hashOf(files) {
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(relative(ROOT, file)).update('\0');
    hash.update(existsSync(file) && statSync(file).isFile() ? readFileSync(file) : Buffer.alloc(0)).update('\0');
  }
  return hash.digest('hex');
}

const ts = (name) => name.endsWith('.ts');
const bin = (pkg, path) => join(ROOT, 'node_modules', pkg, path);

const STEPS = [
  {
    name: 'server',
    inputs: () => [
      ...['apps', 'libs', 'test', 'bench'].flatMap((d) =>
        filesUnder(join(ROOT, d), ts).filter((f) => !f.startsWith(join(ROOT, 'apps', 'web'))),
      ),
      join(ROOT, 'tsconfig.json'),
      join(ROOT, 'tsconfig.build.json'),
      join(ROOT, 'package.json'),
      join(ROOT, 'package-lock.json'),
    ],
    output: join(ROOT, 'dist', 'apps', 'server', 'src', 'main.js'),
    command: [process.execPath, [bin('typescript', 'bin/tsc'), '-p', 'tsconfig.build.json']],
  },
  {
    name: 'bundle',
    inputs: () => [
      ...['apps/server', 'libs/contracts', 'libs/core', 'libs/infra'].flatMap((d) =>
        filesUnder(join(ROOT, 'dist', d), (n) => n.endsWith('.js')),
      ),
      join(ROOT, 'scripts', 'bundle-server.mjs'),
      join(ROOT, 'package-lock.json'),
    ],
    output: join(ROOT, 'dist', 'server', 'main.js'),
    command: [process.execPath, ['scripts/bundle-server.mjs']],
  },
  {
    name: 'db',
    inputs: () => [
      ...filesUnder(join(ROOT, 'dist', 'libs', 'infra', 'src', 'database'), (n) => n.endsWith('.js')),
      join(ROOT, 'package-lock.json'),
    ],
    output: join(ROOT, 'dist', 'libs', 'infra', 'src', 'database', 'snapshots'),
    command: [process.execPath, ['dist/libs/infra/src/database/fresh-database-snapshot.js']],
  },
  {
    name: 'web',
    inputs: () => [
      ...filesUnder(join(ROOT, 'apps', 'web')),
      ...filesUnder(join(ROOT, 'libs', 'contracts'), ts),
      join(ROOT, 'package-lock.json'),
    ],
    output: join(ROOT, 'dist', 'web', 'index.html'),
    command: [process.execPath, [bin('vite', 'bin/vite.js'), 'build', '--config', 'apps/web/vite.config.mjs']],
  },
];

const readStamps = () => {
  try {
    return JSON.parse(readFileSync(STAMPS, 'utf8'));
  } catch {
    return {};
  }
};

const started = performance.now();
const done = [];
for (const step of STEPS) {
  const stamps = readStamps();
  const hash = hashOf(step.inputs());
  if (!force && stamps[step.name] === hash && existsSync(step.output)) {
    done.push(`${step.name} unchanged`);
    continue;
  }
  const t0 = performance.now();
  const [cmd, args] = step.command;
  const run = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) {
    process.stderr.write(`build step "${step.name}" failed (exit ${run.status ?? run.signal})\n`);
    process.exit(run.status || 1);
  }
  // Stamped with the inputs as they were before it ran (the db step's inputs are the server step's output).
  const after = step.name === 'db' ? hashOf(step.inputs()) : hash;
  mkdirSync(dirname(STAMPS), { recursive: true });
  writeFileSync(STAMPS, `${JSON.stringify({ ...readStamps(), [step.name]: after }, null, 2)}\n`);
  done.push(`${step.name} built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
process.stdout.write(`build: ${done.join(', ')} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
