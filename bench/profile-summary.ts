/**
 * Summarizes a `node --cpu-prof` profile: total sampled time and the functions with the most
 * self time (and the share of each), grouped by function and file.
 *
 *   node dist/bench/profile-summary.js <file.cpuprofile> [top=30]
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

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node dist/bench/profile-summary.js <file.cpuprofile> [top]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  const frame = byId.get(id)!.callFrame;
  const where = frame.url.replace(/^file:\/\//, '').replace(/.*\/node_modules\//, '');
  const key = `${frame.functionName || '(anonymous)'}  ${where}${where ? `:${frame.lineNumber + 1}` : ''}`;
  self.set(key, (self.get(key) ?? 0) + dt);
});
const idle = [...self].filter(([k]) => k.startsWith('(idle)')).reduce((n, [, v]) => n + v, 0);
process.stdout.write(
  `${file}\n  sampled ${(total / 1e6).toFixed(2)} s, busy ${((total - idle) / 1e6).toFixed(2)} s\n`,
);
for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 30))) {
  process.stdout.write(`  ${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}\n`);
}
