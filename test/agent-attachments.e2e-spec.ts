import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { apiClient, failure, okData } from '#testing/api-client.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { WsTestClient } from '#testing/ws-client.js';

/** A PNG signature followed by random bytes: a "photo" far above the ~65 KB `images` once allowed. */
const bigPng = (size: number): Buffer => Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(size - 8)]);

interface AnthropicBlock {
  type: string;
  text?: string;
  source?: { type: string; media_type: string; data: string };
}

describe('agent message attachments: files of the space sent by path (docs/api.md, "Attachments")', () => {
  let model: ScriptedModelServer;
  let server: TestServer;
  let space: { id: string; path: string };
  const api = () => apiClient(server);
  const upload = (path: string, body: Buffer) =>
    api()
      .put(`/api/spaces/${space.id}/artifacts/upload?path=${encodeURIComponent(path)}`, body)
      .set('Content-Type', 'application/octet-stream');
  const send = (conversationId: string, extra: object) =>
    api().post('/api/agent/message', { spaceId: space.id, conversationId, message: 'Look at this', ...extra });
  const conversation = async (): Promise<string> =>
    okData<{ id: string }>(await api().post(`/api/spaces/${space.id}/conversations`, { title: 'a' })).id;
  const messagesOf = async (conversationId: string) =>
    okData<{ messages: Array<Record<string, unknown>> }>(
      await api().get(`/api/spaces/${space.id}/conversations/${conversationId}`),
    ).messages;
  /** Sends and waits for the turn's end; the blocks of the last user message the model got. */
  async function sentBlocks(extra: object): Promise<{ id: string; blocks: AnthropicBlock[] }> {
    const id = await conversation();
    const ws = await WsTestClient.signedIn(server.wsUrl, server.password);
    try {
      ws.send({ type: 'subscribe', payload: { conversationId: id } });
      await ws.roundTrip();
      okData(await send(id, extra));
      await ws.event('agent:complete', 15_000);
    } finally {
      ws.close();
    }
    const body = model.requests.at(-1)!.body as unknown as {
      messages: Array<{ role: string; content: AnthropicBlock[] }>;
    };
    const lastUser = body.messages.filter((m) => m.role === 'user').at(-1)!;
    return { id, blocks: lastUser.content };
  }

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({ env: model.serverEnv() });
    space = okData(await api().post('/api/spaces', { name: 'attachments' }));
    okData(await api().post(`/api/spaces/${space.id}/artifacts/folder`, { name: 'attachments', parentPath: '' }));
  });
  after(async () => {
    await server?.stop();
    await model?.close();
  });
  beforeEach(() => model.reset());

  it('hands an uploaded image far above the old 65 KB cap to the model as an image part', async () => {
    const photo = bigPng(300 * 1024);
    okData(await upload('attachments/photo.png', photo));
    model.enqueue({ steps: [{ text: 'A photo.' }] });
    const { id, blocks } = await sentBlocks({ attachments: [{ path: 'attachments/photo.png' }] });
    const image = blocks.find((b) => b.type === 'image');
    assert.ok(image, JSON.stringify(blocks).slice(0, 500));
    assert.equal(image.source?.media_type, 'image/png');
    assert.equal(image.source?.data, photo.toString('base64'), 'the whole file, byte for byte');
    assert.equal(blocks.at(-1)?.text, 'Look at this');
    // The record keeps a reference (what a reload shows), not the bytes.
    const user = (await messagesOf(id)).find((m) => m.role === 'user')!;
    assert.deepEqual(user.attachments, [
      { path: 'attachments/photo.png', name: 'photo.png', mediaType: 'image/png', size: photo.length, image: true },
    ]);
    assert.equal(user.images, undefined);
  });

  it('names any other file to the model so it can Read it, and takes an absolute path inside the space', async () => {
    okData(await upload('attachments/notes.txt', Buffer.from('remember the milk\n')));
    model.enqueue({ steps: [{ text: 'Noted.' }] });
    const { blocks } = await sentBlocks({ attachments: [{ path: join(space.path, 'attachments/notes.txt') }] });
    assert.equal(
      blocks.filter((b) => b.type === 'image').length,
      0,
      'a text file is not an image part: ' + JSON.stringify(blocks),
    );
    assert.ok(
      blocks.some((b) => b.type === 'text' && b.text?.includes('attachments/notes.txt') && b.text.includes('Read')),
      JSON.stringify(blocks),
    );
  });

  it('refuses paths outside the space or in .svc with the file API texts, naming the field, storing nothing', async () => {
    writeFileSync(join(space.path, '..', 'outside.png'), bigPng(64));
    const id = await conversation();
    failure(
      await send(id, { attachments: [{ path: '../outside.png' }] }),
      403,
      /^attachments\[0\]\.path: Access denied/,
    );
    failure(
      await send(id, { attachments: [{ path: 'attachments/photo.png' }, { path: '/etc/passwd' }] }),
      403,
      /^attachments\[1\]\.path: Access denied/,
    );
    failure(
      await send(id, { attachments: [{ path: '.svc/memory.md' }] }),
      403,
      /^attachments\[0\]\.path: Access denied: \.svc is reserved for the service$/,
    );
    assert.deepEqual(await messagesOf(id), []);
    assert.equal(model.requests.length, 0);
  });

  it('refuses a missing file (404), a malformed list and an oversized image (400), each naming the field', async () => {
    const id = await conversation();
    failure(
      await send(id, { attachments: [{ path: 'attachments/nope.png' }] }),
      404,
      /^attachments\[0\]\.path: File not found: attachments\/nope\.png$/,
    );
    failure(await send(id, { attachments: 'attachments/photo.png' }), 400, /attachments must be an array/);
    failure(
      await send(id, { attachments: [{ path: 'attachments/photo.png' }, {}] }),
      400,
      /^attachments\[1\]\.path is required and must be a string$/,
    );
    failure(
      await send(id, { attachments: [{ path: 'attachments' }] }),
      400,
      /^attachments\[0\]\.path: Not a regular file/,
    );
    okData(await upload('attachments/huge.jpg', Buffer.alloc(5 * 1024 * 1024 + 1, 1)));
    failure(
      await send(id, { attachments: [{ path: 'attachments/huge.jpg' }] }),
      400,
      /^attachments\[0\]\.path: an attached image must be at most 5 MB/,
    );
    assert.deepEqual(await messagesOf(id), []);
    assert.equal(model.requests.length, 0);
  });
});
