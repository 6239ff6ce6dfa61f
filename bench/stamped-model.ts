import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A minimal Anthropic Messages endpoint for benches: the user's message names the reply
 * (`bench:short`, one chunk; `bench:paced*<n>`, n chunks at `rate` per second; `bench:burst*<n>`,
 * n chunks as fast as the socket takes them), and every text chunk is `<index>:<writeTimeMs>;`,
 * so a client can measure each chunk's latency end to end and check none is lost or reordered.
 */
export interface StampedModel {
  url: string;
  /** The server's environment that points its model source here. */
  env: Record<string, string>;
  close(): void;
}

const now = (): number => performance.timeOrigin + performance.now();
const sleep = (msecs: number): Promise<void> => new Promise((r) => setTimeout(r, msecs));

export function startStampedModel(options: { rate: number }): Promise<StampedModel> {
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const part of req) body += String(part);
    const asked = /bench:(short|burst|paced)(?:\*(\d+))?/.exec(body);
    const kind = asked?.[1] ?? 'short';
    const count = kind === 'short' ? 1 : Number(asked?.[2] ?? 100);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (event: string, data: object): boolean =>
      res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    send('message_start', {
      message: {
        id: 'msg_bench',
        type: 'message',
        role: 'assistant',
        model: 'bench',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 10, output_tokens: 0 },
      },
    });
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    const t0 = performance.now();
    for (let i = 0; i < count; i++) {
      if (kind === 'paced') {
        const wait = t0 + (i * 1000) / options.rate - performance.now();
        if (wait >= 1) await sleep(wait);
      }
      if (!send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `${i}:${now()};` } }))
        await new Promise((r) => res.once('drain', r));
    }
    send('content_block_stop', { index: 0 });
    send('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } });
    send('message_stop', {});
    res.end();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({
        url,
        env: {
          SVC_AI_PROVIDER: 'anthropic',
          SVC_AI_API_URL: url,
          SVC_AI_API_KEY: 'bench',
          SVC_AI_MODEL: 'claude-bench',
        },
        close: () => server.close(),
      });
    }),
  );
}
