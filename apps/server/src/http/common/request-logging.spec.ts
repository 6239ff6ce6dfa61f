import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { AppLogger, createPino } from '#infra/logging/logger.js';
import { requestLogging } from './request-logging.js';

function logged(level: 'debug' | 'info') {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const middleware = requestLogging(new AppLogger(createPino(level, sink)), { trustProxy: false, trustProxyHops: 1 });
  const serve = async (
    status: number,
    headers: Record<string, string> = {},
    end: 'finish' | 'close' = 'finish',
  ): Promise<{ id: string | undefined; header: unknown }> => {
    const req = { method: 'GET', url: '/api/x?token=secret', headers, socket: { remoteAddress: '10.0.0.9' } } as never as {
      id?: string;
    };
    const res = Object.assign(new EventEmitter(), {
      statusCode: status,
      header: undefined as unknown,
      setHeader(_name: string, value: unknown) {
        this.header = value;
      },
    });
    let nextCalled = false;
    middleware(req as never, res as never, () => (nextCalled = true));
    assert.ok(nextCalled);
    res.emit(end);
    res.emit('close'); // after finish: still one line
    await new Promise((r) => setImmediate(r));
    return { id: req.id, header: res.header };
  };
  return { lines, serve };
}

describe('request logging', () => {
  it('reuses a sane X-Request-Id, else makes one; echoes it; one debug line without the query', async () => {
    const { lines, serve } = logged('debug');
    const mine = await serve(200, { 'x-request-id': 'trace-123' });
    assert.equal(mine.id, 'trace-123');
    assert.equal(mine.header, 'trace-123');
    const made = await serve(404, { 'x-request-id': 'bad id with spaces' });
    assert.match(made.id!, /^[0-9a-f-]{36}$/);
    assert.equal(made.header, made.id);
    assert.equal(lines.length, 2);
    assert.equal(lines[0]!.level, 'debug');
    assert.equal(lines[0]!.msg, 'GET /api/x 200');
    assert.deepEqual(lines[0]!.req, { id: 'trace-123', method: 'GET', path: '/api/x', ip: '10.0.0.9' });
    assert.deepEqual(lines[0]!.res, { statusCode: 200 });
    assert.equal(typeof lines[0]!.responseTime, 'number');
    assert.ok(!JSON.stringify(lines).includes('secret'));
  });

  it('at info: nothing for a success or an aborted request, an error line for a server error', async () => {
    const { lines, serve } = logged('info');
    await serve(200);
    await serve(200, {}, 'close');
    await serve(503);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.level, 'error');
    assert.equal(lines[0]!.msg, 'GET /api/x 503');
    const err = lines[0]!.err as { type: string; message: string };
    assert.deepEqual([err.type, err.message], ['Error', 'failed with status code 503']);
  });
});
