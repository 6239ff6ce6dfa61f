import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A reply the generic webhook channel POSTed (docs/api/channels.md, "webhook"). */
export interface CallbackReply {
  instanceId: string;
  chatId: string;
  chatType: 'direct' | 'group';
  replyTo: string | null;
  text: string;
  /** Whether `X-Hub-Signature-256` was the HMAC of the raw body with the secret. */
  signed: boolean;
  /** `X-Delivery-Id`, when sent. */
  deliveryId?: string;
}

/**
 * A loopback receiver of the webhook channel's replies: checks each signature with `secret`,
 * keeps the replies in arrival order, and can answer the next `failNext` requests with a 503
 * (the platform down).
 */
export class ChannelCallbackServer {
  readonly replies: CallbackReply[] = [];
  failNext = 0;
  attempts = 0;
  /** Drop a reply whose `X-Delivery-Id` was seen before (as a receiver that keeps ids does), counting it. */
  dropRepeats = false;
  repeatsDropped = 0;
  private readonly seenDeliveries = new Set<string>();
  private waiters: Array<() => void> = [];

  private constructor(
    private readonly server: http.Server,
    private readonly secret: string,
  ) {}

  static async start(secret: string): Promise<ChannelCallbackServer> {
    const server = http.createServer();
    const self = new ChannelCallbackServer(server, secret);
    server.on('request', (req, res) => self.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/replies`;
  }

  /** Replies of one chat, in order. */
  of(chatId: string): CallbackReply[] {
    return this.replies.filter((r) => r.chatId === chatId);
  }

  /** Resolves once `predicate` holds over the replies (checked on every reply). */
  async until(predicate: (replies: CallbackReply[]) => boolean, timeoutMs = 20_000, what = 'replies'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.replies)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(this.replies)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.attempts += 1;
      if (this.failNext > 0) {
        this.failNext -= 1;
        res.writeHead(503).end('down');
        return;
      }
      const raw = Buffer.concat(chunks);
      const header = String(req.headers['x-hub-signature-256'] ?? '');
      const expected = createHmac('sha256', this.secret).update(raw).digest();
      const presented = Buffer.from(header.replace(/^sha256=/, ''), 'hex');
      const signed = presented.length === expected.length && timingSafeEqual(presented, expected);
      const body = JSON.parse(raw.toString('utf8')) as Omit<CallbackReply, 'signed'>;
      const deliveryId = req.headers['x-delivery-id'];
      // A receiver that keeps delivery ids drops a resend of one it has (docs/api/channels.md).
      if (this.dropRepeats && typeof deliveryId === 'string' && this.seenDeliveries.has(deliveryId)) {
        this.repeatsDropped += 1;
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
        return;
      }
      if (typeof deliveryId === 'string') this.seenDeliveries.add(deliveryId);
      this.replies.push({ ...body, signed, ...(typeof deliveryId === 'string' ? { deliveryId } : {}) });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
      for (const w of this.waiters.splice(0)) w();
    });
  }
}
