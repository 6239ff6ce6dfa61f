import assert from 'node:assert/strict';
import request from 'supertest';
import type { TestServer } from './test-server.js';

/**
 * Signed-in HTTP calls to a test server, and envelope checks. `password` defaults to the one the
 * server was started with (give it for a server that generated its own).
 */
export function apiClient(server: Pick<TestServer, 'url' | 'password'>, password = server.password) {
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${password}`);
  return {
    get: (p: string) => auth(request(server.url).get(p)),
    post: (p: string, body?: unknown) => {
      const r = auth(request(server.url).post(p));
      return body === undefined ? r : r.send(body as object);
    },
    patch: (p: string, body: unknown) => auth(request(server.url).patch(p)).send(body as object),
    put: (p: string, body: unknown) => auth(request(server.url).put(p)).send(body as object),
    del: (p: string, body?: object) => {
      const r = auth(request(server.url).delete(p));
      return body === undefined ? r : r.send(body);
    },
  };
}

/** The signed-in header, for calls made without supertest (a raw node:http request). */
export function authHeaders(server: TestServer): { Authorization: string } {
  return { Authorization: `Bearer ${server.password}` };
}

/** The `data` of a 200 success envelope. */
export function okData<T>(res: request.Response): T {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.success, true, JSON.stringify(res.body));
  return res.body.data as T;
}

/**
 * A failure envelope with this status, an error matching `error` (a string must be the whole
 * message), and the code when given.
 */
export function failure(res: request.Response, status: number, error: RegExp | string, code?: string): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.success, false, JSON.stringify(res.body));
  if (typeof error === 'string') assert.equal(res.body.error, error);
  else assert.match(res.body.error, error);
  if (code) assert.equal(res.body.code, code);
}

/** supertest parser that keeps a binary body (a downloaded package) as a Buffer. */
export function binary(res: request.Response, done: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

/** A new space and a conversation in it (what most agent tests start from). */
export async function newConversation(
  server: TestServer,
  spaceName: string,
): Promise<{ spaceId: string; conversationId: string }> {
  const api = apiClient(server);
  const spaceId = okData<{ id: string }>(await api.post('/api/spaces', { name: spaceName })).id;
  const conversationId = okData<{ id: string }>(await api.post(`/api/spaces/${spaceId}/conversations`, {})).id;
  return { spaceId, conversationId };
}
