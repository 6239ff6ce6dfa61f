import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { OutgoingFrame, textFrame } from './outgoing-frame.js';

describe('textFrame', () => {
  let server: WebSocketServer;
  let url: string;
  /** Frames written by hand to the TCP socket of the next connection, as the gateway does. */
  let toWrite: Buffer[] = [];

  before(async () => {
    server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    server.on('connection', (_ws, req) => {
      req.socket.cork();
      for (const frame of toWrite) req.socket.write(frame);
      req.socket.uncork();
    });
    await new Promise((r) => server.once('listening', r));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  /** What a real `ws` client reads from those frames. */
  async function received(texts: string[]): Promise<string[]> {
    toWrite = texts.map(textFrame);
    const client = new WebSocket(url);
    const got: string[] = [];
    await new Promise<void>((resolve, reject) => {
      client.on('message', (data, isBinary) => {
        assert.equal(isBinary, false);
        got.push(data.toString());
        if (got.length === texts.length) resolve();
      });
      client.on('error', reject);
    });
    client.close();
    return got;
  }

  it('frames text of every length class the way a ws client reads it', async () => {
    const texts = [
      '{"type":"pong"}',
      'x'.repeat(125), // the longest 7-bit length
      'x'.repeat(126), // 16-bit length
      'héllo wörld ✓ 🚀'.repeat(20), // multi-byte UTF-8: the length is in bytes
      'y'.repeat(65_535),
      'z'.repeat(65_536), // 64-bit length
      '',
    ];
    assert.deepEqual(await received(texts), texts);
  });

  it('writes the RFC 6455 header: FIN, text opcode, unmasked, shortest length', () => {
    assert.deepEqual([...textFrame('ab')], [0x81, 2, 0x61, 0x62]);
    assert.deepEqual([...textFrame('é').subarray(0, 2)], [0x81, 2]);
    assert.deepEqual([...textFrame('x'.repeat(300)).subarray(0, 4)], [0x81, 126, 1, 44]);
    assert.deepEqual([...textFrame('x'.repeat(70_000)).subarray(0, 10)], [0x81, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70]);
  });

  it('prepares the payload and the frame once each, however often asked', () => {
    const frame = new OutgoingFrame('{"a":1}');
    assert.equal(frame.wire(), frame.wire());
    assert.equal(frame.payload(), frame.payload());
    assert.equal(frame.payload().toString(), '{"a":1}');
  });
});
