import { readFileSync } from 'node:fs';

/**
 * CPU time of process `pid` so far (every thread), µs: utime + stime from /proc. NaN where
 * there is no /proc. Steadier than a rate when other work shares the machine.
 */
export function processCpuMicros(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // clock ticks of 10 ms
  } catch {
    return NaN;
  }
}

/** CPU time of this process so far (every thread), µs. */
export function ownCpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}
