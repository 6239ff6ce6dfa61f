/**
 * The path guard's cost per check. Build first, then: `node dist/bench/path-guard.js`.
 *
 * Every file operation of a space goes through `guardPath` (the roots, the entry and its folder
 * resolved on disk, symlinks followed); each turn's skills listing and memory read make several,
 * many on paths that do not exist yet. For three requests (a file directly in its root, as each
 * skill's SKILL.md is read; a file two missing folders down, as a memory file before it exists;
 * an existing file two folders down), BENCH_GUARDS checks (default 3,000) after a warm-up, timed
 * BENCH_ROUNDS times (default 3): `guardPath`, and beside it the reference, the same three walks
 * on their own, each resolving every path it passes through itself (what the guard did before
 * its walks shared them). Prints the median wall time and CPU (this process, the file-system
 * calls' thread pool included) per check and their ratio.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { canonicalPath, guardPath } from '#infra/files/path-guard.js';
import type { PathRequest } from '#core/ports/file-store.port.js';

const GUARDS = Number(process.env.BENCH_GUARDS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface Timing {
  wallUs: number;
  cpuUs: number;
}

async function time(check: () => Promise<unknown>): Promise<Timing> {
  for (let i = 0; i < Math.min(500, GUARDS); i++) await check();
  const rounds: Timing[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const started = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    for (let i = 0; i < GUARDS; i++) await check();
    const used = process.cpuUsage(cpu);
    rounds.push({
      wallUs: Number(process.hrtime.bigint() - started) / 1000 / GUARDS,
      cpuUs: (used.user + used.system) / GUARDS,
    });
  }
  rounds.sort((a, b) => a.cpuUs - b.cpuUs);
  return rounds[Math.floor(rounds.length / 2)]!;
}

/** The guard's walks each on its own (the reference): roots, entry and folder resolved apart. */
async function walksApart(request: PathRequest, lexical: string): Promise<void> {
  await Promise.all(request.roots.map((r) => canonicalPath(r)));
  await Promise.all([canonicalPath(lexical), canonicalPath(dirname(lexical))]);
}

async function main(): Promise<void> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'svc-bench-guard-')));
  try {
    const skill = join(base, 'space', '.claude', 'skills', 'one');
    mkdirSync(skill, { recursive: true });
    writeFileSync(join(skill, 'SKILL.md'), 'x');
    const space = join(base, 'space');
    const cases: Array<[string, PathRequest, string]> = [
      ['a file directly in its root', { roots: [skill], base: skill, path: 'SKILL.md' }, join(skill, 'SKILL.md')],
      [
        'a file two missing folders down',
        { roots: [space], base: space, path: '.svc/memory/MEMORY.md' },
        join(space, '.svc', 'memory', 'MEMORY.md'),
      ],
      [
        'an existing file two folders down',
        { roots: [space], base: space, path: '.claude/skills/one/SKILL.md' },
        join(skill, 'SKILL.md'),
      ],
    ];
    const out = (line: string): boolean => process.stdout.write(`${line}\n`);
    out(
      `\npath guard, ${GUARDS} checks per round, median of ${ROUNDS} rounds (µs per check; CPU: main thread and pool)`,
    );
    out(
      `  ${'request'.padEnd(36)} ${'guardPath wall / CPU'.padStart(22)} ${'walks apart wall / CPU'.padStart(24)}  CPU ×`,
    );
    for (const [name, request, lexical] of cases) {
      const guard = await time(() => guardPath(request));
      const apart = await time(() => walksApart(request, lexical));
      out(
        `  ${name.padEnd(36)} ${`${guard.wallUs.toFixed(1)} / ${guard.cpuUs.toFixed(1)}`.padStart(22)} ` +
          `${`${apart.wallUs.toFixed(1)} / ${apart.cpuUs.toFixed(1)}`.padStart(24)}  ${(guard.cpuUs / apart.cpuUs).toFixed(2)}×`,
      );
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
