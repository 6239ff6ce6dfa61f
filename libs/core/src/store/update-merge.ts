import type { UpdateSeverity } from '#contracts/store.js';

/** Fields that always follow the author on update: they say what the release is. */
export const RELEASE_FIELDS = ['type', 'spec_version', 'version', 'author', 'store'] as const;

type Spec = Record<string, unknown>;
interface Sub {
  id?: unknown;
}

/** Numeric parts of a version (`1.2.3`, `v2.0`, `1.0-beta` → [1,0]); missing parts count as 0. */
function parts(version: string): number[] {
  return version
    .replace(/^v/i, '')
    .split(/[-+]/)[0]!
    .split('.')
    .map((p) => (/^\d+$/.test(p) ? Number(p) : 0));
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b`. */
export function compareVersions(a: string, b: string): number {
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** How big a step from `from` to `to` is: the first numeric part that changes. */
export function updateSeverity(from: string, to: string): UpdateSeverity {
  const x = parts(from);
  const y = parts(to);
  if ((x[0] ?? 0) !== (y[0] ?? 0)) return 'major';
  if ((x[1] ?? 0) !== (y[1] ?? 0)) return 'minor';
  return 'patch';
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Spec)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Spec)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Spec)[k], (b as Spec)[k]));
}

export interface MergeResult {
  spec: Spec;
  /** Top-level fields where the result keeps the user's value instead of the author's new one. */
  kept: string[];
  /** False: no earlier author version was known, so every difference was kept. */
  editsKnown: boolean;
}

/**
 * Applies the author's new version to the user's copy (docs/api/store-and-packages.md, "Query, install, updates": Updates).
 * With the author's previous version known, a field the user left as the author wrote it takes
 * the new value and a field the user changed keeps the user's value; schedules are merged
 * subscription by subscription (by id). Without it (`original` null), every difference is kept.
 */
export function mergeAuthorUpdate(current: Spec, original: Spec | null, next: Spec): MergeResult {
  const merged: Spec = {};
  const keys = new Set([...Object.keys(current), ...Object.keys(next), ...Object.keys(original ?? {})]);
  for (const key of keys) {
    let value: unknown;
    if ((RELEASE_FIELDS as readonly string[]).includes(key)) value = next[key];
    else if (key === 'subscriptions' && original !== null) {
      value = mergeSubscriptions(current[key], original[key], next[key]);
    } else {
      const userEdited =
        original === null ? !deepEqual(current[key], next[key]) : !deepEqual(current[key], original[key]);
      value = userEdited ? current[key] : next[key];
    }
    if (value !== undefined) merged[key] = value;
  }
  const kept = [...keys].filter((key) => !deepEqual(merged[key], next[key])).sort();
  return { spec: merged, kept, editsKnown: original !== null };
}

const asSubs = (v: unknown): Sub[] => (Array.isArray(v) ? (v as Sub[]) : []);
const idOf = (s: Sub, i: number): string => (typeof s.id === 'string' && s.id !== '' ? s.id : String(i));

/**
 * Subscriptions by id: one the user left alone follows the author (changed, added or removed);
 * one the user changed, added or removed stays as the user has it.
 */
function mergeSubscriptions(currentRaw: unknown, originalRaw: unknown, nextRaw: unknown): unknown {
  if (currentRaw === undefined && originalRaw === undefined) return nextRaw;
  const byId = (list: Sub[]) => new Map(list.map((s, i) => [idOf(s, i), s]));
  const current = byId(asSubs(currentRaw));
  const original = byId(asSubs(originalRaw));
  const next = asSubs(nextRaw);
  const out: Sub[] = [];
  const placed = new Set<string>();
  next.forEach((sub, i) => {
    const id = idOf(sub, i);
    placed.add(id);
    const was = original.get(id);
    const mine = current.get(id);
    if (was === undefined)
      out.push(mine ?? sub); // new from the author (or the user added the same id)
    else if (mine === undefined)
      return; // the user removed it: stays removed
    else out.push(deepEqual(mine, was) ? sub : mine);
  });
  for (const [id, mine] of current) {
    if (placed.has(id)) continue;
    const was = original.get(id);
    // Added by the user, or dropped by the author after the user changed it: the user's stays.
    if (was === undefined || !deepEqual(mine, was)) out.push(mine);
  }
  return out;
}
