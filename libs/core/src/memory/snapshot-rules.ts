/**
 * Restorable copies of memory (`.svc/memory/.snapshots/<name>/` holding `memory.md` and
 * `topics/`), taken before a consolidation replaces anything. The very first one is named
 * `initial` and kept for good (the memory as the user's conversations wrote it before any
 * reorganization); later ones are named by their UTC time and only the newest few are kept.
 */

export const INITIAL_SNAPSHOT = 'initial';
/** Timestamped snapshots kept besides `initial`. */
export const SNAPSHOTS_KEPT = 3;

/** `2025-01-02T03-04-05-678Z`, optionally with `-2`, `-3`… when two fall in the same millisecond. */
const STAMPED = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z(?:-\d+)?$/;

/** A UTC timestamp usable as a folder name everywhere (no colons), sorting by time. */
export function snapshotStamp(date: Date): string {
  return date.toISOString().replace(/[:.]/g, '-');
}

export function isTimestampedSnapshot(name: string): boolean {
  return STAMPED.test(name);
}

/** The folder name of the next snapshot: `initial` for the first one, else a free timestamp. */
export function nextSnapshotName(existing: readonly string[], now: Date): string {
  const taken = new Set(existing);
  if (!taken.has(INITIAL_SNAPSHOT)) return INITIAL_SNAPSHOT;
  const stamp = snapshotStamp(now);
  if (!taken.has(stamp)) return stamp;
  for (let n = 2; ; n++) {
    if (!taken.has(`${stamp}-${n}`)) return `${stamp}-${n}`;
  }
}

/** Ordering of timestamped names: by time, then by the collision counter. */
function compareStamped(a: string, b: string): number {
  const [ta, na] = splitCounter(a);
  const [tb, nb] = splitCounter(b);
  return ta < tb ? -1 : ta > tb ? 1 : na - nb;
}

function splitCounter(name: string): [string, number] {
  const stamp = name.slice(0, 24);
  const counter = name.length > 24 ? Number(name.slice(25)) : 1;
  return [stamp, counter];
}

/**
 * Snapshots to delete so that `initial` and the `keep` newest timestamped ones remain.
 * Folders with other names are not ours to judge and are left alone.
 */
export function snapshotsToPrune(existing: readonly string[], keep = SNAPSHOTS_KEPT): string[] {
  const stamped = existing.filter(isTimestampedSnapshot).sort(compareStamped);
  return stamped.slice(0, Math.max(0, stamped.length - Math.max(0, keep)));
}
