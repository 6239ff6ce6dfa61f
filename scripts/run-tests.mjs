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

/**
 * End-to-end files that run one at a time, after the others: those driving Chromium, those
 * starting several replicas or killing processes, and those whose subject is timing under load
 * (a stalled event loop, a burst of sign-ins, socket limits). Every other file, and every unit
 * file, runs beside another (`SVC_TEST_FILES_AT_ONCE`, 2): a pass computes on 1.15 of the CI
 * machine's 2 cores on average when its files run one at a time, and each file's servers and
 * data are its own.
 */
const ONE_AT_A_TIME = [
  /browser-|hostile-browser|hostile-surfaces|\/web-/,
  /replicas|\/faults|lifecycle|upgrade|migrate-to-postgres|backup/,
  /no-freeze|lockout-burst|socket-limits|triggers-schedule|triggers-webhook-queue/,
];
const filesAtOnce = Math.max(1, Number(process.env.SVC_TEST_FILES_AT_ONCE ?? 2) || 1);
const runsAlone = (file) => ONE_AT_A_TIME.some((pattern) => pattern.test(relative(root, file)));

const unitFiles = pick(walk(join(dist, 'libs'), '.spec.js').concat(walk(join(dist, 'apps'), '.spec.js')));
const e2eFiles = pick(walk(join(dist, 'test'), '.e2e-spec.js')).sort();

const totals = { passed: 0, failed: 0, skipped: 0 };
/** Each failed test's pass, name and error, printed again at the very end (CI logs keep the tail). */
const failures = [];

/**
 * The failed tests of a TAP report with the first lines of their diagnostics (error, location,
 * stack), leaving out suites that failed only because a test inside them did.
 */
function failuresOf(tap) {
  const lines = tap.split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const head = /^(\s*)not ok \d+ - (.*)$/.exec(lines[i]);
    if (!head) continue;
    const indent = head[1];
    const block = [];
    for (let j = i + 1; j < lines.length && !lines[j].startsWith(`${indent}  ...`); j++) {
      if (lines[j].startsWith(`${indent}  `)) block.push(lines[j].slice(indent.length + 2));
    }
    if (block.some((l) => /^failureType: 'subtestsFailed'/.test(l))) continue;
    const noise = /^---$|^duration_ms:|node:internal|node:async_hooks|primordials|\(<anonymous>\)/;
    found.push({ name: head[2], details: block.filter((l) => !noise.test(l.trim() || '-')).slice(0, 24) });
  }
  return found;
}

/**
 * Runs files under `node --test`. `buffered`: the run's report is held and printed whole when it
 * ends, so two runs going at once (the two e2e passes) print one block each instead of
 * interleaved lines.
 */
function runNodeTest(label, files, env, buffered = false, concurrency = 1) {
  return new Promise((resolve) => {
    if (files.length === 0) return resolve();
    const started = Date.now();
    const cpuBefore = childrenCpuSeconds();
    const tapDir = mkdtempSync(join(tmpdir(), 'svc-tap-'));
    const tap = join(tapDir, 'out.tap');
    const timing = join(tapDir, 'timing.json');
    const held = [];
    const print = (text) => (buffered ? held.push(text) : process.stdout.write(text));
    print(`\n=== ${label}: ${files.length} file(s) ===\n`);
    if (buffered) console.log(`=== ${label}: ${files.length} file(s) started (its report follows when it ends) ===`);
    const child = spawn(
      process.execPath,
      [
        '--test',
        `--test-concurrency=${concurrency}`,
        '--test-timeout=180000',
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        '--test-reporter=tap',
        `--test-reporter-destination=${tap}`,
        `--test-reporter=${join(root, 'scripts/file-timing-reporter.mjs')}`,
        `--test-reporter-destination=${join(tapDir, 'ignored')}`,
        ...files,
      ],
      {
        stdio: buffered ? ['ignore', 'pipe', 'pipe'] : 'inherit',
        env: { ...process.env, ...env, SVC_TEST_TIMING_FILE: timing },
      },
    );
    if (buffered) {
      child.stdout.on('data', (d) => held.push(d.toString()));
      child.stderr.on('data', (d) => held.push(d.toString()));
    }
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
      for (const failure of failuresOf(text)) failures.push({ label, ...failure });
      print(`=== ${label}: ${passed} passed, ${failed} failed ===\n`);
      print(passTime(started, cpuBefore, buffered));
      print(slowestFiles(timing));
      if (buffered) process.stdout.write(held.join(''));
      rmSync(tapDir, { recursive: true, force: true });
      resolve();
    });
  });
}

/**
 * CPU seconds used by this process's finished children and their descendants (Linux: /proc), or
 * null elsewhere. A pass's share of it over its wall time says whether it waits or computes: the
 * first question before running files side by side.
 */
function childrenCpuSeconds() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    // Fields 16 and 17 of stat (cutime, cstime), counted after the ") " that ends the name.
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
}

/** "took W s, C s of CPU (N cores on average)"; the CPU only for a pass that ran alone. */
function passTime(started, cpuBefore, together) {
  const wall = (Date.now() - started) / 1000;
  const cpuAfter = childrenCpuSeconds();
  if (together || cpuBefore === null || cpuAfter === null) return `took ${wall.toFixed(0)} s\n`;
  const cpu = cpuAfter - cpuBefore;
  return `took ${wall.toFixed(0)} s, ${cpu.toFixed(0)} s of CPU in its processes (${(cpu / wall).toFixed(2)} cores on average)\n`;
}

/** The slowest files of a run (from file-timing-reporter.mjs), to see where the suite's time goes. */
function slowestFiles(timingPath, count = 12) {
  let perFile;
  try {
    perFile = JSON.parse(readFileSync(timingPath, 'utf8'));
  } catch {
    return '';
  }
  const rows = Object.entries(perFile).sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  const lines = rows
    .slice(0, count)
    .map(([file, ms]) => `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${relative(dist, file)}`);
  return `slowest files (of ${(total / 1000).toFixed(0)} s in tests):\n${lines.join('\n')}\n`;
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

await runNodeTest('unit', unitFiles, {}, false, filesAtOnce);

if (e2eFiles.length > 0) {
  const previousMode = process.env.SVC_TEST_MODE;
  process.env.SVC_TEST_MODE = 'embedded';
  const template = await prepareEmbeddedTemplate();
  process.env.SVC_TEST_MODE = previousMode;
  const services = await servicesAvailable();
  // The two passes share nothing (the embedded one has its own databases, the services one a
  // fresh database and Redis prefix per server; the fault tests own their Postgres and Redis),
  // so SVC_TEST_PASSES=together runs them at once on a machine with cores to spare. One after the
  // other stays the default: on 2 cores the slowest files come close to the per-test limit.
  const together = services.ok && process.env.SVC_TEST_PASSES === 'together';
  // A pass runs its files side by side (`filesAtOnce`) but those of ONE_AT_A_TIME, which follow
  // alone; with both passes at once (`together`) each pass runs its files one at a time.
  const pass = async (label, env) => {
    if (together || filesAtOnce === 1) return runNodeTest(label, e2eFiles, env, together);
    await runNodeTest(
      `${label}, ${filesAtOnce} files at once`,
      e2eFiles.filter((f) => !runsAlone(f)),
      env,
      false,
      filesAtOnce,
    );
    await runNodeTest(`${label}, one file at a time`, e2eFiles.filter(runsAlone), env);
  };
  const embeddedPass = () =>
    pass('e2e (embedded: PGlite, BullMQ on Postgres backend, in-process events)', {
      SVC_TEST_MODE: 'embedded',
      SVC_TEST_DB_TEMPLATE: template,
    });
  const servicesPass = () => pass('e2e (services: Postgres + Redis)', { SVC_TEST_MODE: 'services' });
  if (together) {
    await Promise.all([embeddedPass(), servicesPass()]);
  } else {
    await embeddedPass();
    if (services.ok) await servicesPass();
  }
  rmSync(template, { recursive: true, force: true });
  if (!services.ok && process.env.REQUIRE_SERVICES === '1') {
    console.log(`\nSERVICES RUN FAILED: REQUIRE_SERVICES=1 but ${services.reason}`);
    totals.failed += 1;
  } else if (!services.ok) {
    console.log(`\nSERVICES RUN SKIPPED: ${services.reason}. Set REQUIRE_SERVICES=1 to make this an error.`);
  }
}

if (failures.length > 0) {
  console.log(`\n=== failures (${failures.length}), repeated here with their errors ===`);
  for (const f of failures) console.log(`\n✖ [${f.label}] ${f.name}\n${f.details.map((l) => `    ${l}`).join('\n')}`);
}
console.log(`\n${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ''}`);
process.exit(totals.failed > 0 ? 1 : 0);
