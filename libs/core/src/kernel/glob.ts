/**
 * Glob patterns matched in linear time. A backtracking matcher (a glob turned into a
 * JavaScript regular expression, as picomatch does) takes time exponential in the number of
 * stars on a name that almost matches: `*a*a*a*a*a*a*a*a*a*a*b` against sixty a's runs for
 * minutes on the event loop. Here a pattern is compiled once into a small automaton whose
 * states are tracked all at once while the path is read, so matching costs at most
 * (path length × states), whatever the pattern.
 *
 * Syntax (with dotfiles matched like any name): `*` any run of characters but `/`; `?` one
 * such character; `[abc]`, `[a-z]`, `[!a]` / `[^a]` a class; `**` as a whole segment any
 * number of segments (`**` / `a/**` / `**` + `/b`); `{a,b}` alternatives (nested, expanded
 * up to a limit); `\x` the character x itself; a leading `!` negates the whole pattern.
 */

/** Longest pattern accepted. */
export const MAX_GLOB_LENGTH = 1_000;
/** Most automaton states of one pattern (all alternatives together). */
export const MAX_GLOB_STATES = 2_000;
/** Most alternatives `{…}` may expand to. */
const MAX_ALTERNATIVES = 256;

/** A pattern the matcher cannot take (too long, too many alternatives, unbalanced). */
export class GlobPatternError extends Error {}

export interface GlobOptions {
  /** A pattern without `/` matches the last segment of the path (the file name) at any depth. */
  matchBase?: boolean;
}

export type GlobMatcher = (path: string) => boolean;

type Test = (char: string) => boolean;

/** One automaton state: its consuming moves and its moves that consume nothing. */
interface State {
  moves: Array<{ test: Test; to: number }>;
  free: number[];
}

const ANY: Test = () => true;
const NOT_SLASH: Test = (c) => c !== '/';

/** Compiles `pattern` once; the returned function matches paths (forward slashes) in linear time. */
export function compileGlob(pattern: string, options: GlobOptions = {}): GlobMatcher {
  if (pattern.length > MAX_GLOB_LENGTH) throw new GlobPatternError(`longer than ${MAX_GLOB_LENGTH} characters`);
  let body = pattern;
  let negated = false;
  if (body.startsWith('!') && !body.startsWith('!(')) {
    negated = true;
    body = body.slice(1);
  }
  const base = options.matchBase === true && !body.includes('/');
  const automaton = new Automaton();
  for (const alternative of expandBraces(body)) automaton.addAlternative(alternative);
  const run = (path: string): boolean => {
    const subject = base ? path.slice(path.lastIndexOf('/') + 1) : path;
    return automaton.matches(subject);
  };
  return negated ? (path) => !run(path) : run;
}

/** Why a pattern cannot be compiled, or null. */
export function globPatternProblem(pattern: string): string | null {
  try {
    compileGlob(pattern);
    return null;
  } catch (err) {
    if (err instanceof GlobPatternError) return err.message;
    throw err;
  }
}

class Automaton {
  readonly states: State[] = [{ moves: [], free: [] }];
  private readonly finals = new Set<number>();

  private add(): number {
    if (this.states.length >= MAX_GLOB_STATES) {
      throw new GlobPatternError(`too complex (more than ${MAX_GLOB_STATES} parts)`);
    }
    this.states.push({ moves: [], free: [] });
    return this.states.length - 1;
  }

  /** Adds one brace-free alternative, starting from state 0. */
  addAlternative(glob: string): void {
    let at = this.add();
    this.states[0]!.free.push(at);
    const segments = glob.split('/');
    for (let s = 0; s < segments.length; s++) {
      const segment = segments[s]!;
      const last = s === segments.length - 1;
      if (segment === '**' && last) {
        // Anything from here on (`**` alone matches every path).
        this.states[at]!.moves.push({ test: ANY, to: at });
        break;
      }
      if (segment === '**') {
        // Any number of whole segments, each ending in `/`: `(?:.*/)?`.
        const inside = this.add();
        const next = this.add();
        this.states[at]!.free.push(next);
        this.states[at]!.moves.push({ test: ANY, to: inside }, { test: (c) => c === '/', to: next });
        this.states[inside]!.moves.push({ test: ANY, to: inside }, { test: (c) => c === '/', to: next });
        at = next;
        continue;
      }
      at = this.addSegment(at, segment);
      if (last) break;
      if (s === segments.length - 2 && segments[s + 1] === '**') {
        // `a/**` matches `a` itself and anything under it: `(?:/.*)?`.
        this.finals.add(at);
        const under = this.step(at, (c) => c === '/');
        this.states[under]!.moves.push({ test: ANY, to: under });
        at = under;
        break;
      }
      at = this.step(at, (c) => c === '/');
    }
    this.finals.add(at);
  }

  private step(from: number, test: Test): number {
    const to = this.add();
    this.states[from]!.moves.push({ test, to });
    return to;
  }

  private addSegment(start: number, segment: string): number {
    let at = start;
    for (let i = 0; i < segment.length; i++) {
      const c = segment[i]!;
      if (c === '*') {
        while (segment[i + 1] === '*') i++;
        // A run of characters but `/`: a loop, then on.
        const loop = this.add();
        this.states[at]!.free.push(loop);
        this.states[loop]!.moves.push({ test: NOT_SLASH, to: loop });
        at = loop;
      } else if (c === '?') {
        at = this.step(at, NOT_SLASH);
      } else if (c === '[') {
        const parsed = parseClass(segment, i);
        if (parsed) {
          at = this.step(at, parsed.test);
          i = parsed.end;
        } else {
          at = this.step(at, (x) => x === '[');
        }
      } else if (c === '\\' && i + 1 < segment.length) {
        const literal = segment[++i]!;
        at = this.step(at, (x) => x === literal);
      } else {
        at = this.step(at, (x) => x === c);
      }
    }
    return at;
  }

  matches(path: string): boolean {
    const count = this.states.length;
    let current = new Uint8Array(count);
    let next = new Uint8Array(count);
    let active: number[] = [];
    const stack: number[] = [];
    const close = (marks: Uint8Array, list: number[], from: number): void => {
      if (marks[from]) return;
      marks[from] = 1;
      list.push(from);
      stack.push(from);
      while (stack.length > 0) {
        const s = stack.pop()!;
        for (const to of this.states[s]!.free) {
          if (!marks[to]) {
            marks[to] = 1;
            list.push(to);
            stack.push(to);
          }
        }
      }
    };
    close(current, active, 0);
    for (const char of path) {
      const following: number[] = [];
      for (const s of active) {
        for (const move of this.states[s]!.moves) {
          if (!next[move.to] && move.test(char)) close(next, following, move.to);
        }
      }
      if (following.length === 0) return false;
      for (const s of active) current[s] = 0;
      [current, next] = [next, current];
      active = following;
    }
    return active.some((s) => this.finals.has(s));
  }
}

/** A `[…]` class starting at `open`: its test and the index of its `]`, or null when unclosed. */
function parseClass(segment: string, open: number): { test: Test; end: number } | null {
  let i = open + 1;
  let negate = false;
  if (segment[i] === '!' || segment[i] === '^') {
    negate = true;
    i++;
  }
  const ranges: Array<[string, string]> = [];
  let first = true;
  while (i < segment.length) {
    let c = segment[i]!;
    if (c === ']' && !first) {
      const test: Test = (x) => {
        if (x === '/') return false;
        const inside = ranges.some(([lo, hi]) => x >= lo && x <= hi);
        return negate ? !inside : inside;
      };
      return { test, end: i };
    }
    first = false;
    if (c === '\\' && i + 1 < segment.length) c = segment[++i]!;
    if (segment[i + 1] === '-' && i + 2 < segment.length && segment[i + 2] !== ']') {
      let hi = segment[i + 2]!;
      i += 2;
      if (hi === '\\' && i + 1 < segment.length) hi = segment[++i]!;
      ranges.push([c, hi]);
    } else {
      ranges.push([c, c]);
    }
    i++;
  }
  return null;
}

/** The brace-free alternatives of a pattern: `a{b,c{d,e}}` → `ab`, `acd`, `ace`. */
export function expandBraces(pattern: string): string[] {
  const open = findOpenBrace(pattern);
  if (open === -1) return [pattern];
  const { close, parts } = splitBrace(pattern, open);
  if (close === -1 || parts.length < 2) {
    // Not an alternation (`{a}`, unbalanced): the brace is a plain character.
    const rest = expandBraces(pattern.slice(open + 1));
    return rest.map((r) => `${pattern.slice(0, open)}\\{${r}`);
  }
  const head = pattern.slice(0, open);
  const tails = expandBraces(pattern.slice(close + 1));
  const out: string[] = [];
  for (const part of parts) {
    for (const inner of expandBraces(part)) {
      for (const tail of tails) {
        out.push(`${head}${inner}${tail}`);
        if (out.length > MAX_ALTERNATIVES) {
          throw new GlobPatternError(`too many alternatives (more than ${MAX_ALTERNATIVES})`);
        }
      }
    }
  }
  return out;
}

function findOpenBrace(pattern: string): number {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === '{') return i;
  }
  return -1;
}

function splitBrace(pattern: string, open: number): { close: number; parts: string[] } {
  const parts: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open + 1; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0) {
        parts.push(pattern.slice(start, i));
        return { close: i, parts };
      }
      depth--;
    } else if (c === ',' && depth === 0) {
      parts.push(pattern.slice(start, i));
      start = i + 1;
    }
  }
  return { close: -1, parts: [] };
}
