import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { batchConnectionWrites } from './write-batching.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(
  handler: Handler,
  onUpgrade?: (req: http.IncomingMessage, socket: Socket) => void,
): Promise<number> {
  const server = http.createServer(handler);
  batchConnectionWrites(server);
  if (onUpgrade) server.on('upgrade', onUpgrade);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** Writes `text` on a new connection and collects what comes back until `done` says it is all there. */
async function exchange(port: number, text: string, done: (received: string) => boolean): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.write(text);
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (done(received)) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
const bodies = (text: string): string[] =>
  text
    .split('\r\n\r\n')
    .slice(1)
    .map((part) => part.split('HTTP/1.1')[0]!);

describe('batchConnectionWrites', () => {
  it('holds an answer written in this turn until the turn ends, then sends it', async () => {
    const seen: string[] = [];
    const port = await serve((req, res) => {
      const socket = req.socket;
      res.end('ok');
      seen.push(`after end: ${socket.bytesWritten > 0 ? 'written' : 'held'}`);
      setImmediate(() => seen.push(`next turn: ${socket.bytesWritten > 0 ? 'written' : 'held'}`));
    });
    const received = await exchange(port, get('/'), (r) => r.endsWith('ok'));
    assert.match(received, /^HTTP\/1\.1 200 OK\r\n/);
    assert.deepEqual(seen, ['after end: held', 'next turn: written']);
  });

  it('keeps the order of pipelined answers on one connection and across connections', async () => {
    const port = await serve((req, res) => res.end(req.url!.slice(1)));
    const one = exchange(port, get('/a') + get('/b') + get('/c'), (r) => r.endsWith('c'));
    const two = exchange(port, get('/d') + get('/e'), (r) => r.endsWith('e'));
    assert.deepEqual(bodies(await one), ['a', 'b', 'c']);
    assert.deepEqual(bodies(await two), ['d', 'e']);
  });

  it('sends streamed answers whole, chunk after chunk', async () => {
    const chunk = 'x'.repeat(64 * 1024);
    const port = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Length': String(chunk.length * 8) });
      let left = 8;
      const next = (): void => {
        while (left > 0) {
          left--;
          if (!res.write(chunk)) return void res.once('drain', next);
        }
        res.end();
      };
      next();
    });
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal((await answer.text()).length, chunk.length * 8);
  });

  it('drops an answer held for a connection that closes before the turn ends, and keeps serving', async () => {
    const port = await serve((req, res) => {
      if (req.url === '/gone') {
        res.end('never');
        req.socket.destroy();
      } else res.end('still here');
    });
    const gone = await exchange(port, get('/gone'), () => false);
    assert.equal(gone, '');
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await answer.text(), 'still here');
  });

  it('lets a connection taken over by an upgrade write at once', async () => {
    let direct: boolean | undefined;
    const port = await serve(
      (_req, res) => res.end(),
      (_req, socket) => {
        direct = !Object.hasOwn(socket, '_write') && !Object.hasOwn(socket, '_writev');
        socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\n');
        direct = direct && socket.bytesWritten > 0;
        socket.end();
      },
    );
    const received = await exchange(
      port,
      'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n',
      (r) => r.endsWith('\r\n\r\n'),
    );
    assert.match(received, /^HTTP\/1\.1 101 /);
    assert.equal(direct, true);
  });
});
