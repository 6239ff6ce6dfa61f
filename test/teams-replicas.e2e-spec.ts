import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import type { RecordedModelRequest } from '#testing/scripted-model-server.js';
import { type Replicas, startReplicas } from '#testing/replicas.js';
import { testMode } from '#testing/test-env.js';
import type { TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

const spec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: `${name} of a team.`,
  type: 'automation',
  system_prompt: `You are the ${name}.`,
});

const whoAmI = (req: RecordedModelRequest) =>
  /You are \\"([^"\\]+)\\" \(/.exec(JSON.stringify((req.body as { system?: unknown }).system ?? ''))?.[1] ?? '';

describe('a team across two replicas', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
  let replicas: Replicas;
  let a: TestServer;
  let b: TestServer;
  const api = (s: TestServer) => ({
    get: (p: string) => request(s.url).get(p).set('Authorization', `Bearer ${s.password}`),
    post: (p: string, body: object = {}) =>
      request(s.url).post(p).set('Authorization', `Bearer ${s.password}`).send(body),
  });
  const data = <T>(res: request.Response): T => {
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data as T;
  };

  before(async () => {
    replicas = await startReplicas();
    ({ a, b } = replicas);
    // The lead keeps working (the run stays open); the worker answers each turn after a moment.
    replicas.model.respond((req) =>
      whoAmI(req) === 'Lead' ? { steps: [{ hang: true }] } : { steps: [{ delayMs: 150 }, { text: 'Noted.' }] },
    );
  });
  after(async () => {
    await replicas?.stop();
  });

  it('messages sent to one member from both replicas at once: each delivered once, in order per sender', async () => {
    const space = data<{ id: string }>(await api(a).post('/api/spaces', { name: 'replica team' }));
    const install = async (name: string) =>
      data<{ appId: string }>(await api(a).post('/api/apps/install', { spec: spec(name), spaceId: space.id })).appId;
    const lead = await install('Lead');
    const worker = await install('Worker');
    const team = data<{ id: string }>(
      await api(a).post('/api/teams', {
        input: {
          name: 'Replicated',
          goal: 'Take notes.',
          owningSpaceId: space.id,
          leadAppId: lead,
          members: [{ appId: worker, memberName: 'Worker' }],
        },
      }),
    );
    const onB = await WsTestClient.signedIn(b.wsUrl, b.password);
    const epoch = data<{ id: string }>(await api(a).post(`/api/teams/${team.id}/run`));
    assert.equal((await api(b).post(`/api/teams/${team.id}/run`)).status, 409, 'one run, whichever replica asks');
    const N = 8;
    const sendAll = (s: TestServer, tag: string) =>
      (async () => {
        const receipts: string[] = [];
        for (let i = 0; i < N; i++) {
          const sent = data<{ delivery: string }>(
            await api(s).post(`/api/teams/${team.id}/members/${worker}/send`, { message: `${tag}-${i}` }),
          );
          receipts.push(sent.delivery);
        }
        return receipts;
      })();
    const [fromA, fromB] = await Promise.all([sendAll(a, 'from-a'), sendAll(b, 'from-b')]);
    for (const d of [...fromA, ...fromB]) assert.ok(d === 'mid_turn' || d === 'queued', d);

    const userText = async (s: TestServer) =>
      data<Array<{ role: string; content: string }>>(
        await api(s).get(`/api/teams/${team.id}/chat-messages?appId=${worker}&epochId=${epoch.id}`),
      )
        .filter((m) => m.role === 'user')
        .map((m) => m.content)
        .join('\n');
    await waitFor(
      async () => {
        const text = await userText(b);
        return (
          [...Array(N).keys()].every((i) => text.includes(`from-a-${i}\n`) || text.endsWith(`from-a-${i}`)) &&
          [...Array(N).keys()].every((i) => text.includes(`from-b-${i}\n`) || text.endsWith(`from-b-${i}`))
        );
      },
      30_000,
      'every message reached the worker',
    );
    const text = await userText(a);
    for (const tag of ['from-a', 'from-b']) {
      const order = [...text.matchAll(new RegExp(`${tag}-(\\d+)`, 'g'))].map((m) => Number(m[1]));
      assert.deepEqual(order, [...Array(N).keys()], `${tag}: each once, in the order sent`);
    }
    await waitFor(
      async () => !data<string[]>(await api(a).get('/api/agent/sessions')).some((c) => c.includes(worker)),
      15_000,
      'the worker is idle once its mailbox is empty',
    );
    // Sealed from B: the event reaches B's sockets, both replicas read the same end.
    const paused = data<{ endReason: string }>(await api(b).post(`/api/teams/${team.id}/pause`));
    assert.equal(paused.endReason, 'stopped');
    await onB.next((f) => f.channel === 'team:updated' && f.data?.changed === 'epoch-sealed', 10_000);
    const [onA] = data<Array<{ id: string; endReason: string }>>(await api(a).get(`/api/teams/${team.id}/epochs`));
    assert.deepEqual([onA!.id, onA!.endReason], [epoch.id, 'stopped']);
    await waitFor(async () => data<string[]>(await api(b).get('/api/agent/sessions')).length === 0, 15_000);
    onB.close();
  });
});
