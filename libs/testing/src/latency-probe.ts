import { request } from 'node:http';

/**
 * Asks `GET /api/remote/status` over and over (one request at a time, a new connection
 * each) while something else happens, and keeps the slowest answer. A request still
 * unanswered when the probe stops counts with the time it has waited so far, so a server
 * that froze for good shows as a long stall rather than as no sample at all.
 */
export class LatencyProbe {
  private readonly samples: number[] = [];
  private pendingSince: number | null = null;
  private stopped = false;
  private readonly loop: Promise<void>;

  private constructor(
    private readonly url: string,
    private readonly pauseMs: number,
  ) {
    this.loop = this.run();
  }

  /** Starts probing `${baseUrl}/api/remote/status` every `pauseMs` after each answer. */
  static start(baseUrl: string, pauseMs = 50): LatencyProbe {
    return new LatencyProbe(`${baseUrl}/api/remote/status`, pauseMs);
  }

  /** Stops and returns the figures (ms); does not wait for a request still pending. */
  stop(): { count: number; max: number; p99: number; median: number } {
    this.stopped = true;
    const all = [...this.samples];
    if (this.pendingSince !== null) all.push(Date.now() - this.pendingSince);
    void this.loop;
    const sorted = all.sort((a, b) => a - b);
    const at = (q: number) =>
      sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    return { count: sorted.length, max: sorted.at(-1) ?? 0, p99: at(0.99), median: at(0.5) };
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const started = Date.now();
      this.pendingSince = started;
      await this.once();
      this.pendingSince = null;
      if (this.stopped) return;
      this.samples.push(Date.now() - started);
      await new Promise((r) => setTimeout(r, this.pauseMs));
    }
  }

  private once(): Promise<boolean> {
    return new Promise((resolve) => {
      const req = request(this.url, { agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
        res.on('error', () => resolve(false));
      });
      req.on('error', () => resolve(false));
      req.end();
    });
  }
}
