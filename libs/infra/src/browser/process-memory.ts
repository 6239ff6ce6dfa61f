import { readdirSync, readFileSync } from 'node:fs';

/**
 * Resident memory (bytes) of this process's descendants — the Chromium it started, with its
 * renderers, GPU and utility processes — read from /proc; null where there is no /proc.
 */
export function descendantsResidentBytes(root = process.pid): number | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const parentOf = new Map<number, number>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: fields resume after the last ')'.
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone meanwhile */
    }
  }
  const descends = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) if (p === root) return true;
    return false;
  };
  let total = 0;
  for (const pid of parentOf.keys()) {
    if (!descends(pid)) continue;
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      if (kb) total += Number(kb) * 1024;
    } catch {
      /* gone meanwhile */
    }
  }
  return total;
}
