import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { apiClient, okData } from '#testing/api-client.js';
import { FakeTelegramServer } from '#testing/fake-telegram-server.js';
import { type Replicas, startReplicas } from '#testing/replicas.js';
import { lastUserTextOf, textReply } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { sleep, waitFor } from '#testing/wait.js';

const TOKEN = '777000:TEST-replicas';

/**
 * Telegram long polling across two replicas: one holds the instance's lease and polls; when it
 * is killed, the other takes the connection over within 30 s and no message is answered twice.
 */
describe('message channels across replicas', { skip: testMode() === 'services' ? false : 'needs Redis' }, () => {
  let replicas: Replicas;
  let tg: FakeTelegramServer;
  let redis: Redis;
  let instanceId: string;
  let appId: string;
  const chat = { id: 901, type: 'private' as const, first_name: 'Dana' };
  const dana = { id: 901, first_name: 'Dana' };
  /** Each message `n` is answered `echo: n`. */
  const answers = (n: string) => tg.sentTo(chat.id).filter((m) => m.text === `echo: ${n}`).length;

  before(async () => {
    tg = await FakeTelegramServer.start(TOKEN);
    replicas = await startReplicas({ env: { SVC_CHANNEL_ALLOW: '127.0.0.1' } });
    replicas.model.respond((req) => textReply(`echo: ${lastUserTextOf(req.body)}`));
    redis = new Redis(replicas.services.redisUrl);
    const a = apiClient(replicas.a);
    const spaceId = okData<{ id: string }>(await a.post('/api/spaces', { name: 'Replicated channels' })).id;
    const spec = {
      spec_version: '1',
      name: 'Echo',
      version: '1.0.0',
      author: 'alice',
      description: 'Echoes.',
      type: 'automation',
      system_prompt: 'Echo.',
      subscriptions: [{ id: 'tick', source: { type: 'schedule', config: { every: '1d' } } }],
    };
    appId = okData<{ appId: string }>(await a.post('/api/apps/install', { spec, spaceId })).appId;
    instanceId = okData<{ id: string }>(
      await a.post('/api/im-channels/instances', {
        type: 'telegram',
        name: 'Echo bot',
        appId,
        config: { botToken: TOKEN, apiRoot: tg.apiRoot },
      }),
    ).id;
  });
  after(async () => {
    redis?.disconnect();
    await replicas?.stop();
    await tg?.close();
  });

  it('one replica polls; killed, the other takes over within 30 s; every message answered once', async (t) => {
    await waitFor(
      async () =>
        okData<Array<{ state: string }>>(
          await apiClient(replicas.a).get(`/api/im-channels/status?instanceId=${instanceId}`),
        )[0]!.state === 'online',
      30_000,
      'online',
    );
    // One at a time (a burst would be merged into one turn, as a chat's messages are).
    for (let i = 1; i <= 5; i++) {
      await tg.userMessage({ chat, from: dana, text: `m${i}` });
      await tg.until(() => answers(`m${i}`) >= 1, 30_000, `the answer to m${i}`);
    }
    const holderKey = `${replicas.services.redisPrefix}:lease:channel-connection:${instanceId}`;
    const holder = await redis.get(holderKey);
    assert.ok(holder, `the lease ${holderKey} is held`);
    const pid = Number(holder.split('-')[0]);
    const victim = [replicas.a, replicas.b].find((s) => s.process.pid === pid);
    assert.ok(victim, 'the holder is one of the replicas');
    victim.process.kill('SIGKILL');
    await victim.exited;
    const killedAt = Date.now();
    for (let i = 6; i <= 10; i++) {
      await tg.userMessage({ chat, from: dana, text: `m${i}` });
      await tg.until(() => answers(`m${i}`) >= 1, 60_000, `the answer to m${i} after the kill`);
    }
    const firstPoll = tg.pollTimes.find((at) => at > killedAt);
    assert.ok(firstPoll !== undefined, 'polling resumed');
    const takeoverMs = firstPoll - killedAt;
    t.diagnostic(`telegram polling taken over ${takeoverMs} ms after the holder was killed`);
    assert.ok(takeoverMs <= 30_000, `taken over within 30 s (${takeoverMs} ms)`);
    await sleep(2000);
    for (let i = 1; i <= 10; i++) assert.equal(answers(`m${i}`), 1, `m${i} answered once`);
    assert.equal(tg.conflicts, 0, 'never two pollers at once');
    const survivor = victim === replicas.a ? replicas.b : replicas.a;
    await replicas.replace(victim);
    assert.ok(survivor);
  });

  it('a message whose turn died with its replica is answered once, by the turn run again on the other replica', async () => {
    const { model } = replicas;
    // The first model call streams half an answer and hangs; the one after the kill is answered.
    model.enqueue({ steps: [{ text: 'half an answer' }, { hang: true }] });
    const requestsBefore = model.requests.length;
    await tg.userMessage({ chat, from: dana, text: 'lost-1' });
    await model.waitForRequests(requestsBefore + 1, 30_000);
    let threadId = '';
    let replicaId: string | null = null;
    await waitFor(
      async () => {
        const active = okData<string[]>(await apiClient(replicas.a).get('/api/agent/sessions'));
        threadId = active.find((id) => id.startsWith('app-chat:')) ?? '';
        if (threadId === '') return false;
        replicaId = okData<{ replicaId: string | null }>(
          await apiClient(replicas.a).get(`/api/agent/session/${threadId}`),
        ).replicaId;
        return replicaId !== null;
      },
      15_000,
      "the channel thread's turn claimed",
    );
    const pid = Number(replicaId!.split('-')[0]);
    const victim = [replicas.a, replicas.b].find((s) => s.process.pid === pid);
    assert.ok(victim, `the turn runs on one of the replicas (${replicaId})`);
    victim.process.kill('SIGKILL');
    await victim.exited;

    await tg.until(() => answers('lost-1') >= 1, 60_000, 'the answer to lost-1 after its replica was killed');
    await sleep(2000);
    assert.equal(answers('lost-1'), 1, 'answered once');
    const sent = tg.sentTo(chat.id).map((m) => m.text);
    assert.ok(
      !sent.some((text) => text.includes('interrupted')),
      `no interruption notice: ${JSON.stringify(sent.slice(-3))}`,
    );
    const turnRequests = model.requests.slice(requestsBefore).filter((r) => lastUserTextOf(r.body) === 'lost-1');
    assert.equal(turnRequests.length, 2, 'the model was asked twice: the lost turn and its rerun');
    // The rerun's history ends with the message, not with the lost turn's half answer.
    assert.ok(!JSON.stringify(turnRequests[1]!.body).includes('half an answer'));
    await replicas.replace(victim);
  });

  it('a turn whose replica died after recording its reply is completed, its reply not sent again, and a message it had taken is answered', async () => {
    // The state a replica leaves when it dies between recording the reply and recording the end
    // (the window no model script reaches): the answered turn made running again on a replica
    // that is gone, holding a later message it never read.
    await tg.userMessage({ chat, from: dana, text: 'rec-1' });
    await tg.until(() => answers('rec-1') === 1, 30_000, 'rec-1 answered');
    const db = new pg.Client({ connectionString: replicas.services.databaseUrl });
    await db.connect();
    try {
      const [turn] = (
        await db.query(
          `SELECT "id", "conversation_id", "request" FROM "agent_turn"
           WHERE "kind" = 'app-chat' AND "status" = 'completed' ORDER BY "ended_at" DESC LIMIT 1`,
        )
      ).rows as Array<{ id: string; conversation_id: string; request: Record<string, unknown> }>;
      assert.ok(turn, 'the answered turn is recorded');
      const messageId = randomUUID();
      await db.query(
        `INSERT INTO "conversation_message" ("id", "conversation_id", "position", "role", "content", "meta")
         SELECT $1, $2, MAX("position") + 1, 'user', 'rec-2', '{}'::jsonb FROM "conversation_message" WHERE "conversation_id" = $2`,
        [messageId, turn.conversation_id],
      );
      const input = {
        messageId,
        content: 'rec-2',
        createdAt: new Date().toISOString(),
        kind: 'app-chat',
        request: turn.request,
      };
      await db.query(
        `UPDATE "agent_turn" SET "status" = 'running', "ended_at" = NULL, "replica_id" = '1-gone',
           "heartbeat_at" = now() - interval '1 minute', "pending_inputs" = $2::jsonb WHERE "id" = $1`,
        [turn.id, JSON.stringify([input])],
      );
      await tg.until(() => answers('rec-2') === 1, 60_000, 'the message the lost turn had taken answered');
      await sleep(2000);
      assert.equal(answers('rec-1'), 1, 'the recorded reply is not sent again');
      assert.equal(answers('rec-2'), 1, 'the later message answered once');
      const sent = tg.sentTo(chat.id).map((m) => m.text);
      assert.ok(
        !sent.some((text) => text.includes('interrupted')),
        `no interruption notice: ${JSON.stringify(sent.slice(-3))}`,
      );
      const ended = (await db.query(`SELECT "status" FROM "agent_turn" WHERE "id" = $1`, [turn.id])).rows[0] as {
        status: string;
      };
      assert.equal(ended.status, 'completed');
    } finally {
      await db.end();
    }
  });
});
