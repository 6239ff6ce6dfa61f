import WebSocket from 'ws';

export interface Frame {
  type: string;
  channel?: string;
  data?: Record<string, unknown>;
  error?: string;
  [key: string]: unknown;
}

/**
 * A real `ws` client that records every frame, so tests can wait for one
 * (`next`) or assert that none arrived (`frames`).
 */
export class WsTestClient {
  readonly frames: Frame[] = [];
  readonly raw: string[] = [];
  private waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  readonly closed: Promise<{ code: number; at: number }>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: WebSocket.RawData) => {
      const text = data.toString();
      this.raw.push(text);
      const frame = JSON.parse(text) as Frame;
      this.frames.push(frame);
      this.waiters = this.waiters.filter((w) => {
        if (!w.match(frame)) return true;
        w.resolve(frame);
        return false;
      });
    });
    this.closed = new Promise((resolve) => socket.on('close', (code) => resolve({ code, at: Date.now() })));
  }

  static async connect(url: string, options: WebSocket.ClientOptions = {}): Promise<WsTestClient> {
    const socket = new WebSocket(url, options);
    const client = new WsTestClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return client;
  }

  /** Connects and signs in; resolves after auth:success. */
  static async signedIn(url: string, token: string): Promise<WsTestClient> {
    const client = await WsTestClient.connect(url);
    client.send({ type: 'auth', payload: { token } });
    const reply = await client.next((f) => f.type === 'auth:success' || f.type === 'auth:failed');
    if (reply.type !== 'auth:success') throw new Error(`ws sign-in failed: ${JSON.stringify(reply)}`);
    return client;
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The first frame (already received or future) that matches. */
  next(match: (f: Frame) => boolean = () => true, timeoutMs = 5000): Promise<Frame> {
    const seen = this.frames.find(match);
    if (seen) {
      this.frames.splice(this.frames.indexOf(seen), 1);
      return Promise.resolve(seen);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(this.frames)}`));
      }, timeoutMs);
      const done = (f: Frame): void => {
        clearTimeout(timer);
        this.frames.splice(this.frames.indexOf(f), 1);
        resolve(f);
      };
      this.waiters.push({ match, resolve: done });
    });
  }

  /** Waits for an event frame of a channel. */
  event(channel: string, timeoutMs = 5000): Promise<Frame> {
    return this.next((f) => f.type === 'event' && f.channel === channel, timeoutMs);
  }

  /** A ping/pong round trip: every frame the server sent before it has arrived. */
  async roundTrip(): Promise<void> {
    this.send({ type: 'ping' });
    await this.next((f) => f.type === 'pong');
  }

  close(): void {
    this.socket.close();
  }
}
