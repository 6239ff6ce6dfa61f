import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiClient, okData } from '#testing/api-client.js';
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
  let space: { id: string };
  const installed: Record<string, string> = {};

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
    space = okData<{ id: string }>(await apiClient(a).post('/api/spaces', { name: 'replica team' }));
    const install = async (name: string) =>
      okData<{ appId: string }>(await apiClient(a).post('/api/apps/install', { spec: spec(name), spaceId: space.id }))
        .appId;
    const lead = (installed.Lead = await install('Lead'));
    const worker = (installed.Worker = await install('Worker'));
    const team = okData<{ id: string }>(
      await apiClient(a).post('/api/teams', {
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
    const epoch = okData<{ id: string }>(await apiClient(a).post(`/api/teams/${team.id}/run`, {}));
    assert.equal(
      (await apiClient(b).post(`/api/teams/${team.id}/run`, {})).status,
      409,
      'one run, whichever replica asks',
    );
    const N = 8;
    const sendAll = (s: TestServer, tag: string) =>
      (async () => {
        const receipts: string[] = [];
        for (let i = 0; i < N; i++) {
          const sent = okData<{ delivery: string }>(
            await apiClient(s).post(`/api/teams/${team.id}/members/${worker}/send`, { message: `${tag}-${i}` }),
          );
          receipts.push(sent.delivery);
        }
        return receipts;
      })();
    const [fromA, fromB] = await Promise.all([sendAll(a, 'from-a'), sendAll(b, 'from-b')]);
    for (const d of [...fromA, ...fromB]) assert.ok(d === 'mid_turn' || d === 'queued', d);

    const userText = async (s: TestServer) =>
      okData<Array<{ role: string; content: string }>>(
        await apiClient(s).get(`/api/teams/${team.id}/chat-messages?appId=${worker}&epochId=${epoch.id}`),
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
      async () => !okData<string[]>(await apiClient(a).get('/api/agent/sessions')).some((c) => c.includes(worker)),
      15_000,
      'the worker is idle once its mailbox is empty',
    );
    // Sealed from B: the event reaches B's sockets, both replicas read the same end.
    const paused = okData<{ endReason: string }>(await apiClient(b).post(`/api/teams/${team.id}/pause`, {}));
    assert.equal(paused.endReason, 'stopped');
    await onB.next((f) => f.channel === 'team:updated' && f.data?.changed === 'epoch-sealed', 10_000);
    const [onA] = okData<Array<{ id: string; endReason: string }>>(
      await apiClient(a).get(`/api/teams/${team.id}/epochs`),
    );
    assert.deepEqual([onA!.id, onA!.endReason], [epoch.id, 'stopped']);
    await waitFor(async () => okData<string[]>(await apiClient(b).get('/api/agent/sessions')).length === 0, 15_000);
    onB.close();
  });

  it('a replica killed while a member works: the turn ends on the other, the lead is reminded, the work finishes there', async () => {
    const { Lead: lead, Worker: worker } = installed;
    let taskId = '';
    let posted = false;
    let workerTurns = 0;
    replicas.model.respond((req) => {
      const messages = JSON.stringify((req.body as { messages: unknown }).messages);
      const last = (req.body as { messages: Array<{ role: string; content: unknown }> }).messages.at(-1)!;
      const lastText = JSON.stringify(last.content);
      if (whoAmI(req) === 'Lead') {
        if (
          last.role === 'user' &&
          lastText.includes('Start the run') &&
          !posted &&
          !messages.includes('team_post_task')
        ) {
          posted = true;
          return {
            steps: [{ toolCall: { name: 'team_post_task', input: { title: 'Take stock', assignee: 'Worker' } } }],
          };
        }
        if (lastText.includes('taskId') && !taskId) {
          taskId = /"taskId\\?":\\?"([0-9a-f-]{36})/.exec(lastText)?.[1] ?? '';
          return {
            steps: [{ toolCall: { name: 'team_send', input: { to: 'Worker', message: `Please do task ${taskId}` } } }],
          };
        }
        if (last.role === 'user' && lastText.includes('still open'))
          return {
            steps: [
              { toolCall: { name: 'team_send', input: { to: 'Worker', message: `Please do task ${taskId} again` } } },
            ],
          };
        return { steps: [{ text: 'Ok.' }] };
      }
      if (last.role === 'user' && lastText.includes('Please do task')) {
        workerTurns++;
        if (workerTurns === 1) return { steps: [{ text: 'counting' }, { hang: true }] };
        return { steps: [{ toolCall: { name: 'team_update_task', input: { taskId, status: 'done' } } }] };
      }
      return { steps: [{ text: 'Done.' }] };
    });
    const team = okData<{ id: string }>(
      await apiClient(a).post('/api/teams', {
        input: {
          name: 'Survivors',
          goal: 'Take stock.',
          owningSpaceId: space.id,
          leadAppId: lead,
          members: [{ appId: worker, memberName: 'Worker' }],
        },
      }),
    );
    const epoch = okData<{ id: string }>(await apiClient(a).post(`/api/teams/${team.id}/run`, {}));
    const conversationId = `app-chat:${worker}:team:${team.id}:${epoch.id}`;
    // Kill only once the worker's model call is under way (its first turn hangs there).
    await waitFor(() => workerTurns === 1, 20_000, 'the worker is working');
    const replicaId = (await apiClient(a).get(`/api/agent/session/${conversationId}`)).body.data.replicaId as string;
    const pid = Number(replicaId.split('-')[0]);
    const [victim, survivor] = pid === a.process.pid ? [a, b] : [b, a];
    assert.equal(victim.process.pid, pid);
    const watcher = await WsTestClient.signedIn(survivor.wsUrl, survivor.password);
    victim.process.kill('SIGKILL');
    await victim.exited;
    const sealed = await watcher.next(
      (f) => f.channel === 'team:updated' && f.data?.teamId === team.id && f.data?.changed === 'epoch-sealed',
      60_000,
    );
    assert.equal((sealed.data!.team as { status: string }).status, 'idle');
    const board = okData<{ epoch: { endReason: string; outcome: string }; tasks: Array<{ status: string }> }>(
      await apiClient(survivor).get(`/api/teams/${team.id}/epochs/${epoch.id}/board`),
    );
    assert.deepEqual(
      [board.epoch.endReason, board.epoch.outcome, board.tasks.map((t) => t.status)],
      ['completed', 'output', ['done']],
    );
    assert.equal(workerTurns, 2, 'the worker’s second turn ran on the survivor');
    watcher.close();
    if (victim === a) a = await replicas.replace(a);
    else b = await replicas.replace(b);
  });
  it('a replica killed while it runs the lead’s turn: the lead is resumed on the other within the lease, the run finishes there', async () => {
    const { Lead: lead, Worker: worker } = installed;
    let leadTurns = 0;
    let resumed = 0;
    let taskId = '';
    replicas.model.respond((req) => {
      const last = (req.body as { messages: Array<{ role: string; content: unknown }> }).messages.at(-1)!;
      const lastText = JSON.stringify(last.content);
      if (whoAmI(req) === 'Lead') {
        // (The resumed turn's last message may carry the goal too: the notice is looked for first.)
        if (last.role === 'user' && lastText.includes('cut short')) {
          resumed++;
          return {
            steps: [{ toolCall: { name: 'team_post_task', input: { title: 'Count the boxes', assignee: 'Worker' } } }],
          };
        }
        if (last.role === 'user' && lastText.includes('Start the run')) {
          leadTurns++;
          return { steps: [{ text: 'planning' }, { hang: true }] };
        }
        if (lastText.includes('taskId') && !taskId) {
          taskId = /"taskId\\?":\\?"([0-9a-f-]{36})/.exec(lastText)?.[1] ?? '';
          return {
            steps: [{ toolCall: { name: 'team_send', input: { to: 'Worker', message: `Please do task ${taskId}` } } }],
          };
        }
        return { steps: [{ text: 'Ok.' }] };
      }
      if (last.role === 'user' && lastText.includes('Please do task'))
        return { steps: [{ toolCall: { name: 'team_update_task', input: { taskId, status: 'done' } } }] };
      return { steps: [{ text: 'Done.' }] };
    });
    const team = okData<{ id: string }>(
      await apiClient(a).post('/api/teams', {
        input: {
          name: 'Lead lost',
          goal: 'Count the boxes.',
          owningSpaceId: space.id,
          leadAppId: lead,
          members: [{ appId: worker, memberName: 'Worker' }],
        },
      }),
    );
    const epoch = okData<{ id: string }>(await apiClient(a).post(`/api/teams/${team.id}/run`, {}));
    const conversationId = `app-chat:${lead}:team:${team.id}:${epoch.id}`;
    // Kill only once the lead's first model call is under way (it hangs there: the run is held by it).
    await waitFor(() => leadTurns === 1, 20_000, 'the lead is working');
    const replicaId = (await apiClient(a).get(`/api/agent/session/${conversationId}`)).body.data.replicaId as string;
    const pid = Number(replicaId.split('-')[0]);
    const [victim, survivor] = pid === a.process.pid ? [a, b] : [b, a];
    assert.equal(victim.process.pid, pid);
    const watcher = await WsTestClient.signedIn(survivor.wsUrl, survivor.password);
    victim.process.kill('SIGKILL');
    await victim.exited;
    // The lease of a turn (its heartbeat's staleness, 15 s) plus the reaper's pass, plus 10 s.
    const sealed = await watcher.next(
      (f) => f.channel === 'team:updated' && f.data?.teamId === team.id && f.data?.changed === 'epoch-sealed',
      60_000,
    );
    assert.equal((sealed.data!.team as { status: string }).status, 'idle');
    const board = okData<{
      epoch: { endReason: string; outcome: string };
      tasks: Array<{ status: string }>;
      activities: Array<{ subject: string }>;
    }>(await apiClient(survivor).get(`/api/teams/${team.id}/epochs/${epoch.id}/board`));
    assert.deepEqual(
      [board.epoch.endReason, board.epoch.outcome, board.tasks.map((t) => t.status)],
      ['completed', 'output', ['done']],
    );
    assert.equal(leadTurns, 1, 'the goal was handed over once');
    assert.equal(resumed, 1, 'the lead was resumed once');
    assert.ok(
      board.activities.some((x) => x.subject.startsWith('Resumed: ')),
      'the resumption is on the board’s record',
    );
    // Nothing is left running on the survivor with no process behind it.
    await waitFor(
      async () => okData<string[]>(await apiClient(survivor).get('/api/agent/sessions')).length === 0,
      15_000,
    );
    watcher.close();
    if (victim === a) a = await replicas.replace(a);
    else b = await replicas.replace(b);
  });
});
