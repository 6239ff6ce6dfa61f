/**
 * Summarizes a `node --cpu-prof` profile: total sampled time and the functions with the most
 * self time (and the share of each), grouped by function and file.
 *
 *   node dist/bench/profile-summary.js <file.cpuprofile> [top=30] [from-function]
 *
 * With `from-function`, samples before the first one inside a function of that name are left
 * out (e.g. `loggingMiddleware`: only the time after the first request, not the start-up).
 * `--window`: also leave out the samples after the last one inside that function (e.g. `deliver`:
 * only the webhook burst's intake). `--inclusive a,b`: the time spent inside each named function
 * (its callees included), e.g. `deliver,fireWebhook`.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const at = argv.indexOf(name);
  if (at < 0) return undefined;
  const [, value] = argv.splice(at, 2);
  return value;
};
const windowed = argv.includes('--window');
if (windowed) argv.splice(argv.indexOf('--window'), 1);
const inclusiveNames = (flag('--inclusive') ?? '').split(',').filter(Boolean);
const [file, topArg, fromFunction] = argv;
if (!file) {
  process.stderr.write('usage: node dist/bench/profile-summary.js <file.cpuprofile> [top]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
const byPackage = new Map<string, number>();
let total = 0;
const parents = new Map<number, number>();
for (const n of profile.nodes as Array<ProfileNode & { children?: number[] }>)
  for (const c of n.children ?? []) parents.set(c, n.id);
const inside = (id: number, name: string): boolean => {
  for (let at: number | undefined = id; at !== undefined; at = parents.get(at))
    if (byId.get(at)?.callFrame.functionName === name) return true;
  return false;
};
let started = !fromFunction;
let last = profile.samples.length - 1;
if (windowed && fromFunction) while (last > 0 && !inside(profile.samples[last]!, fromFunction)) last--;
const inclusive = new Map<string, number>(inclusiveNames.map((n) => [n, 0]));
profile.samples.forEach((id, i) => {
  if (!started) started = inside(id, fromFunction!);
  if (!started || i > last) return;
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  for (const name of inclusiveNames) if (inside(id, name)) inclusive.set(name, inclusive.get(name)! + dt);
  const frame = byId.get(id)!.callFrame;
  const where = frame.url.replace(/^file:\/\//, '').replace(/.*\/node_modules\//, '');
  const key = `${frame.functionName || '(anonymous)'}  ${where}${where ? `:${frame.lineNumber + 1}` : ''}`;
  self.set(key, (self.get(key) ?? 0) + dt);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url)?.[1];
  const owner =
    pkg ??
    (frame.url.includes('/dist/')
      ? 'svc (dist)'
      : frame.url.startsWith('node:')
        ? 'node'
        : frame.functionName.startsWith('(')
          ? frame.functionName
          : 'native/other');
  byPackage.set(owner, (byPackage.get(owner) ?? 0) + dt);
});
const idle = [...self].filter(([k]) => k.startsWith('(idle)')).reduce((n, [, v]) => n + v, 0);
process.stdout.write(`${file}\n  sampled ${(total / 1e6).toFixed(2)} s, busy ${((total - idle) / 1e6).toFixed(2)} s\n`);
for (const [name, us] of inclusive) {
  process.stdout.write(
    `  inside ${name}: ${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms\n`,
  );
}
process.stdout.write('  by package:\n');
for (const [owner, us] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
  process.stdout.write(
    `  ${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${owner}\n`,
  );
}
process.stdout.write('  by function:\n');
for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 30))) {
  process.stdout.write(
    `  ${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}\n`,
  );
}
