#!/usr/bin/env node
// Runs the whole test suite on the built code (npm test builds first):
//   1. unit tests (libs/**/*.spec.ts);
//   2. end-to-end tests in embedded mode (no DATABASE_URL, no REDIS_URL);
//   3. the same end-to-end tests on real Postgres + Redis (TEST_DATABASE_URL / TEST_REDIS_URL,
//      default 127.0.0.1:5432 user postgres and 127.0.0.1:6379). Skipped with a plain message
//      when they do not answer, unless REQUIRE_SERVICES=1, which makes that a failure.
// Ends with one line "N passed, N failed". Pass file filters as arguments to run a subset.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');
const filters = process.argv.slice(2);

function walk(dir, suffix, out = []) {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full, suffix, out);
    else if (name.endsWith(suffix)) out.push(full);
  }
  return out;
}
const pick = (files) =>
  filters.length === 0 ? files : files.filter((f) => filters.some((x) => relative(root, f).includes(x)));

const unitFiles = pick(walk(join(dist, 'libs'), '.spec.js').concat(walk(join(dist, 'apps'), '.spec.js')));
const e2eFiles = pick(walk(join(dist, 'test'), '.e2e-spec.js')).sort();

const totals = { passed: 0, failed: 0, skipped: 0 };

function runNodeTest(label, files, env) {
  return new Promise((resolve) => {
    if (files.length === 0) return resolve();
    const tapDir = mkdtempSync(join(tmpdir(), 'svc-tap-'));
    const tap = join(tapDir, 'out.tap');
    console.log(`\n=== ${label}: ${files.length} file(s) ===`);
    const child = spawn(
      process.execPath,
      [
        '--test',
        '--test-concurrency=1',
        '--test-timeout=180000',
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        '--test-reporter=tap',
        `--test-reporter-destination=${tap}`,
        ...files,
      ],
      { stdio: 'inherit', env: { ...process.env, ...env } },
    );
    child.on('exit', (code) => {
      let text = '';
      try {
        text = readFileSync(tap, 'utf8');
      } catch {
        /* no report */
      }
      const count = (name) => Number((text.match(new RegExp(`^# ${name} (\\d+)$`, 'm')) ?? [])[1] ?? 0);
      const passed = count('pass');
      const failed =
        count('fail') + count('cancelled') + (code !== 0 && count('fail') === 0 && count('cancelled') === 0 ? 1 : 0);
      totals.passed += passed;
      totals.failed += failed;
      totals.skipped += count('skipped') + count('todo');
      console.log(`=== ${label}: ${passed} passed, ${failed} failed ===`);
      rmSync(tapDir, { recursive: true, force: true });
      resolve();
    });
  });
}

/** Starts the server once on an empty folder and keeps its initialized embedded database. */
async function prepareEmbeddedTemplate() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-template-'));
  const { startServer } = await import(join(dist, 'libs/testing/src/test-server.js'));
  const server = await startServer({ dataDir: dir, env: { SVC_TEST_MODE: 'embedded' } });
  await server.stop();
  return dir;
}

const { servicesAvailable } = await import(join(dist, 'libs/testing/src/test-env.js'));

await runNodeTest('unit', unitFiles, {});

if (e2eFiles.length > 0) {
  const previousMode = process.env.SVC_TEST_MODE;
  process.env.SVC_TEST_MODE = 'embedded';
  const template = await prepareEmbeddedTemplate();
  process.env.SVC_TEST_MODE = previousMode;
  await runNodeTest('e2e (embedded: PGlite, BullMQ on Postgres backend, in-process events)', e2eFiles, {
    SVC_TEST_MODE: 'embedded',
    SVC_TEST_DB_TEMPLATE: template,
  });
  rmSync(template, { recursive: true, force: true });

  const services = await servicesAvailable();
  if (services.ok) {
    await runNodeTest('e2e (services: Postgres + Redis)', e2eFiles, { SVC_TEST_MODE: 'services' });
  } else if (process.env.REQUIRE_SERVICES === '1') {
    console.log(`\nSERVICES RUN FAILED: REQUIRE_SERVICES=1 but ${services.reason}`);
    totals.failed += 1;
  } else {
    console.log(`\nSERVICES RUN SKIPPED: ${services.reason}. Set REQUIRE_SERVICES=1 to make this an error.`);
  }
}

console.log(`\n${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ''}`);
process.exit(totals.failed > 0 ? 1 : 0);
