import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import yazl from 'yazl';
import { LatencyProbe } from './latency-probe.js';

/**
 * The tally of the hostile suites (issue 33): inputs tried, handled cleanly, 500s, escapes and
 * the longest stall of `/api/remote/status`, with the helpers that build their inputs.
 */

/** The longest a single `/api/remote/status` answer may take while a surface is attacked. */
export const MAX_STALL_MS = 3_000;

export type Res = { status: number; body?: unknown; text?: string };

/** One surface's tally of hostile inputs. */
export class Tally {
  readonly tried: string[] = [];
  readonly unexpected: string[] = [];
  readonly errors500: string[] = [];
  readonly escapes: string[] = [];
  private probe: LatencyProbe | null = null;
  maxStallMs = 0;

  constructor(readonly surface: string) {}

  startProbe(url: string): void {
    this.probe = LatencyProbe.start(url);
  }

  stopProbe(): void {
    if (this.probe) this.maxStallMs = Math.max(this.maxStallMs, this.probe.stop().max);
    this.probe = null;
  }

  /** Records an answer: a 5xx is a 500, a status outside `allowed` is unexpected. */
  check(what: string, res: Res, allowed: number[]): void {
    this.tried.push(what);
    const line = `${what} → ${res.status} ${JSON.stringify(res.body ?? res.text ?? '').slice(0, 160)}`;
    if (res.status >= 500) this.errors500.push(line);
    else if (!allowed.includes(res.status)) this.unexpected.push(`${line} (expected ${allowed.join('/')})`);
  }

  escape(what: string): void {
    this.escapes.push(what);
  }

  /** Prints the counts and asserts the targets. */
  verdict(t: TestContext): void {
    const clean = this.tried.length - this.unexpected.length - this.errors500.length;
    t.diagnostic(
      `${this.surface}: ${this.tried.length} inputs tried, ${clean} handled cleanly, ${this.errors500.length} × 500, ` +
        `${this.escapes.length} escapes, longest /api/remote/status stall ${this.maxStallMs} ms`,
    );
    assert.deepEqual(this.errors500, [], 'no 500');
    assert.deepEqual(this.escapes, [], 'no escape');
    assert.deepEqual(this.unexpected, [], 'every input handled as expected');
    assert.ok(this.maxStallMs < MAX_STALL_MS, `/api/remote/status stalled ${this.maxStallMs} ms`);
  }
}

/** A zip built in memory. */
export async function zipOf(entries: Array<[string, Buffer | string]>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, data] of entries) z.addBuffer(Buffer.isBuffer(data) ? data : Buffer.from(data), name);
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A query value, URL-encoded; an unpaired surrogate as the bytes a client would send for it. */
export function queryText(value: string): string {
  return value
    .split(/([\uD800-\uDFFF])/)
    .map((part) => (/^[\uD800-\uDFFF]$/.test(part) ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');
}

/** JSON text nested `depth` deep (arrays), as a value. */
export const deepJson = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
