import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { RecordedModelRequest, ScriptedReply } from '#testing/scripted-model-server.js';
import { AgentHarness } from '#testing/agent-harness.js';
import { textReply } from '#testing/scripted-model-server.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';
import { waitFor } from '#testing/wait.js';

/** A digital human to be a team member. */
const memberSpec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: `${name} of the shop team.`,
  type: 'automation',
  system_prompt: `You are the ${name}.`,
});

interface Block {
  type: string;
  text?: string;
  name?: string;
  input?: Record<string, unknown>;
  content?: unknown;
}

/** The request's messages as blocks (the Anthropic wire). */
function messagesOf(req: RecordedModelRequest): Array<{ role: string; blocks: Block[] }> {
  const body = req.body as { messages: Array<{ role: string; content: string | Block[] }> };
  return body.messages.map((m) => ({
    role: m.role,
    blocks: typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content,
  }));
}

/** The latest text a member was given, and the tool calls it made since. */
function sinceLastText(req: RecordedModelRequest): { text: string; calls: Block[]; results: string[] } {
  const messages = messagesOf(req);
  let at = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'user' && messages[i]!.blocks.some((b) => b.type === 'text' && b.text)) {
      at = i;
      break;
    }
  }
  const text =
    at < 0
      ? ''
      : messages[at]!.blocks.filter((b) => b.type === 'text')
          .map((b) => b.text)
          .join('\n');
  const later = messages.slice(at + 1);
  const calls = later
    .filter((m) => m.role === 'assistant')
    .flatMap((m) => m.blocks.filter((b) => b.type === 'tool_use'));
  const results = later
    .flatMap((m) => m.blocks.filter((b) => b.type === 'tool_result'))
    .map((b) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content)));
  return { text, calls, results };
}

const systemText = (req: RecordedModelRequest) => JSON.stringify((req.body as { system?: unknown }).system ?? '');
const whoAmI = (req: RecordedModelRequest) => /You are \\"([^"\\]+)\\" \(/.exec(systemText(req))?.[1] ?? '';
const inTeam = (req: RecordedModelRequest, team: string) => systemText(req).includes(`in the team \\"${team}\\"`);
const calls = (...toolCalls: Array<{ name: string; input: Record<string, unknown> }>): ScriptedReply => ({
  steps: toolCalls.map((c) => ({ toolCall: c })),
});
const teamOf = (f: Frame) => (f.data?.team ?? {}) as { status?: string; currentEpochId?: string | null };
const TASK_ID = /task ([0-9a-f-]{36})/;

/** The shop team's script: the lead plans, the researcher finds and tells the writer, the writer writes and reports. */
function shopTeam(req: RecordedModelRequest): ScriptedReply {
  const me = whoAmI(req);
  const { text, calls: made, results } = sinceLastText(req);
  if (me === 'Lead') {
    if (!text.includes('Start the run')) return textReply('Thanks, team.');
    if (made.length === 0) {
      return calls(
        { name: 'team_post_task', input: { title: 'Research prices', assignee: 'Researcher' } },
        { name: 'team_post_task', input: { title: 'Write the report', assignee: 'writer' } },
      );
    }
    if (!made.some((c) => c.name === 'team_send')) {
      const posted = results.map((r) => JSON.parse(r) as { taskId: string; assignee: string });
      const taskOf = (who: string) => posted.find((p) => p.assignee === who)!.taskId;
      return calls(
        { name: 'team_send', input: { to: 'Researcher', message: `Please do task ${taskOf('Researcher')}` } },
        { name: 'team_send', input: { to: 'Writer', message: `Please do task ${taskOf('Writer')}` } },
      );
    }
    return textReply('Tasks handed out.');
  }
  const task = TASK_ID.exec(text)?.[1];
  if (me === 'Researcher') {
    if (!task || made.length > 0) return textReply('Research done.');
    return calls(
      { name: 'team_post_finding', input: { content: 'Prices rose 3% this week.', ref: 'notes/prices.md' } },
      { name: 'team_update_task', input: { taskId: task, status: 'done', resultRef: 'notes/prices.md' } },
      { name: 'team_send', input: { to: 'Writer', message: 'Research done: prices rose 3%.' } },
    );
  }
  if (me === 'Writer') {
    if (!task || made.length > 0) return textReply('Noted.');
    return calls(
      { name: 'Write', input: { file_path: 'report.md', content: '# Prices\nUp 3% this week.\n' } },
      { name: 'team_update_task', input: { taskId: task, status: 'done', resultRef: 'report.md' } },
      { name: 'team_send', input: { to: 'Lead', message: 'The report is written.' } },
    );
  }
  return textReply('?');
}

/** A lead who reads the board slowly (so a person's message arrives mid-turn), then ends the run itself. */
function desk(req: RecordedModelRequest): ScriptedReply {
  const { text, calls: made } = sinceLastText(req);
  if (text.includes('Start the run') && made.length === 0)
    return { steps: [{ delayMs: 2500 }, { toolCall: { name: 'team_read_board', input: {} } }] };
  if (text.includes('Also check the stock') && made.length === 0)
    return calls({ name: 'team_complete', input: { summary: 'Stock checked.' } });
  return textReply('Done.');
}

/** The lead hands out one task; its member asks the person which shop, and finishes once answered. */
function asking(req: RecordedModelRequest): ScriptedReply {
  const me = whoAmI(req);
  const { text, calls: made, results } = sinceLastText(req);
  if (me === 'Lead') {
    if (!text.includes('Start the run')) return textReply('Thanks.');
    if (made.length === 0)
      return calls({ name: 'team_post_task', input: { title: 'Check one shop', assignee: 'Researcher' } });
    if (made.length === 1) {
      const { taskId } = JSON.parse(results[0]!) as { taskId: string };
      return calls({ name: 'team_send', input: { to: 'Researcher', message: `Please do task ${taskId}` } });
    }
    return textReply('Handed out.');
  }
  const task = TASK_ID.exec(JSON.stringify((req.body as { messages: unknown }).messages))?.[1];
  if (text.includes('Please do task') && made.length === 0)
    return calls({
      name: 'report_to_user',
      input: { type: 'escalation', summary: 'Which shop?', choices: ['North', 'South'] },
    });
  if (text.includes('Answer to your question') && made.length === 0)
    return calls(
      { name: 'team_post_finding', input: { content: `Checked ${text.includes('North') ? 'North' : '?'}.` } },
      { name: 'team_update_task', input: { taskId: task!, status: 'done' } },
    );
  return textReply('Waiting.');
}

/** Two members who answer every message with one: only the forward-depth limit stops them. */
function pingPong(req: RecordedModelRequest): ScriptedReply {
  const me = whoAmI(req);
  const { calls: made } = sinceLastText(req);
  if (made.length > 0) return textReply('Sent.');
  return calls({ name: 'team_send', input: { to: me === 'Lead' ? 'Echo' : 'Lead', message: 'ping' } });
}

describe('teams: digital humans working together', () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let events: WsTestClient;
  let space: { id: string };
  const apps: Record<string, string> = {};

  const install = async (name: string) =>
    okData<{ appId: string }>(await api.post('/api/apps/install', { spec: memberSpec(name), spaceId: space.id })).appId;

  before(async () => {
    await h.start({ SVC_AGENT_RETRY_BASE_MS: '20', SVC_AGENT_MAX_RETRIES: '1' });
    events = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    space = okData(await api.post('/api/spaces', { name: 'Shop' }));
    for (const name of ['Lead', 'Researcher', 'Writer', 'Echo']) apps[name] = await install(name);
    h.model.respond((req) => {
      if (JSON.stringify((req.body as { system?: unknown }).system ?? '').includes('You design small teams')) {
        return textReply(
          '```json\n' +
            JSON.stringify([
              { memberName: 'Scout', role: 'market research', responsibility: 'Finds this week’s prices.' },
              { memberName: 'Scribe', role: 'writing', responsibility: 'Writes the report.' },
            ]) +
            '\n```',
        );
      }
      if (inTeam(req, 'Ping')) return pingPong(req);
      if (inTeam(req, 'Desk')) return desk(req);
      if (inTeam(req, 'Asking')) return asking(req);
      if (inTeam(req, 'Chatty')) return textReply('Hello from the lead.');
      if (inTeam(req, 'Pausing')) return { steps: [{ hang: true }] };
      if (inTeam(req, 'Stalled')) {
        const { text, calls: made } = sinceLastText(req);
        if (text.includes('Start the run') && made.length === 0)
          return calls({ name: 'team_post_task', input: { title: 'Count the stock', assignee: 'Researcher' } });
        return textReply('Will do.');
      }
      return shopTeam(req);
    });
  });
  after(async () => {
    events?.close();
    await h.stop();
  });

  const teamEvent = (channel: string, teamId: string, match: (f: Frame) => boolean = () => true, timeoutMs = 30_000) =>
    events.next((f) => f.type === 'event' && f.channel === channel && f.data?.teamId === teamId && match(f), timeoutMs);

  const createTeam = async (input: Record<string, unknown>) =>
    okData<{ id: string; status: string; leadAppId: string }>(
      await api.post('/api/teams', { input: { owningSpaceId: space.id, ...input } }),
    );

  it('a lead and two members: run → tasks → messages → findings → the run seals itself with output', async () => {
    const team = await createTeam({
      name: 'Shop',
      goal: 'Report on this week’s prices.',
      leadAppId: apps.Lead,
      members: [
        { appId: apps.Lead, memberName: 'Lead', role: 'lead' },
        { appId: apps.Researcher, memberName: 'Researcher', role: 'research' },
        { appId: apps.Writer, memberName: 'Writer', role: 'writing', duty: 'Writes the report' },
      ],
    });
    assert.equal(team.status, 'idle');
    assert.equal(team.leadAppId, apps.Lead);
    const detail = okData<{ members: Array<{ memberName: string; isLead: boolean }> }>(
      await api.get(`/api/teams/${team.id}/detail`),
    );
    assert.deepEqual(
      detail.members.map((m) => [m.memberName, m.isLead]),
      [
        ['Lead', true],
        ['Researcher', false],
        ['Writer', false],
      ],
    );
    const epoch = okData<{ id: string; lifecycle: string; endedAt: string | null }>(
      await api.post(`/api/teams/${team.id}/run`),
    );
    assert.equal(epoch.lifecycle, 'run');
    assert.equal(epoch.endedAt, null);
    const running = await api.post(`/api/teams/${team.id}/run`);
    assert.equal(running.status, 409, 'one run at a time');

    const sealed = await teamEvent(
      'team:updated',
      team.id,
      (f) => f.data?.changed === 'epoch-sealed' && teamOf(f).status === 'idle',
    );
    assert.equal(teamOf(sealed).currentEpochId, null);
    const [last] = okData<Array<{ id: string; endReason: string; outcome: string }>>(
      await api.get(`/api/teams/${team.id}/epochs`),
    );
    assert.deepEqual([last!.id, last!.endReason, last!.outcome], [epoch.id, 'completed', 'output']);

    const board = okData<{
      tasks: Array<{ title: string; status: string; resultRef: string | null; assigneeAppId: string }>;
      findings: Array<{ body: string; authorAppId: string }>;
      activities: Array<{ kind: string; actorAppId: string | null; targetAppId: string | null }>;
    }>(await api.get(`/api/teams/${team.id}/epochs/${epoch.id}/board`));
    assert.deepEqual(
      board.tasks.map((t) => [t.title, t.status, t.resultRef, t.assigneeAppId]),
      [
        ['Research prices', 'done', 'notes/prices.md', apps.Researcher],
        ['Write the report', 'done', 'report.md', apps.Writer],
      ],
    );
    assert.deepEqual(
      board.findings.map((f) => [f.body, f.authorAppId]),
      [['Prices rose 3% this week.', apps.Researcher]],
    );
    const messages = board.activities.filter((a) => a.kind === 'message').map((a) => [a.actorAppId, a.targetAppId]);
    assert.deepEqual(
      new Set(messages.map((m) => JSON.stringify(m))),
      new Set(
        [
          [apps.Lead, apps.Researcher],
          [apps.Lead, apps.Writer],
          [apps.Researcher, apps.Writer],
          [apps.Writer, apps.Lead],
        ].map((m) => JSON.stringify(m)),
      ),
    );
    for (const kind of ['task_post', 'task_update', 'finding', 'run_end'])
      assert.ok(
        board.activities.some((a) => a.kind === kind),
        kind,
      );
    assert.equal(board.activities.at(-1)!.kind, 'run_end');
    const artifacts = okData<Array<{ kind: string; ref: string; appId: string; title: string }>>(
      await api.get(`/api/teams/${team.id}/epochs/${epoch.id}/artifacts`),
    );
    assert.deepEqual(
      artifacts.map((a) => [a.kind, a.ref, a.appId, a.title]),
      [
        ['task_result', 'notes/prices.md', apps.Researcher, 'Research prices'],
        ['task_result', 'report.md', apps.Writer, 'Write the report'],
        ['finding', 'notes/prices.md', apps.Researcher, 'Prices rose 3% this week.'],
        ['file', 'report.md', apps.Writer, 'Write'],
      ],
    );

    const teamMessage = await teamEvent('team:message', team.id, (f) => f.data?.fromMemberName === 'Researcher');
    assert.deepEqual([teamMessage.data!.toMemberName, teamMessage.data!.epochId], ['Writer', epoch.id]);
    assert.equal('body' in teamMessage.data!, false, 'metadata only');
    await teamEvent('team:blackboard', team.id, (f) => f.data?.kind === 'finding');
    await teamEvent('team:member-history', team.id, (f) => f.data?.appId === apps.Writer);

    const transcript = okData<Array<{ role: string; content: string }>>(
      await api.get(`/api/teams/${team.id}/chat-messages?appId=${apps.Researcher}&epochId=${epoch.id}`),
    );
    assert.match(transcript[0]!.content, /^\[Message from Lead\]\nPlease do task /);
    assert.equal(transcript.at(-1)!.role, 'assistant');
    // Every member's request carried the member tools; only the lead's team_complete.
    const toolsOf = (name: string) =>
      h.model.requests.filter((r) => whoAmI(r) === name).map((r) => h.toolNamesOf(r.index))[0]!;
    assert.ok(toolsOf('Lead').includes('team_complete'));
    assert.ok(toolsOf('Writer').includes('team_send') && !toolsOf('Writer').includes('team_complete'));

    // A person's message after the run: the run is sealed, so it is not delivered.
    const late = okData<{ epochId: string; delivery: string }>(
      await api.post(`/api/teams/${team.id}/members/${apps.Writer}/send`, { message: 'One more thing' }),
    );
    assert.deepEqual(late, { epochId: epoch.id, delivery: 'undelivered' });
  });

  it('a ping-pong between two members is stopped by the forward-depth limit: the run seals as error', async () => {
    const team = await createTeam({
      name: 'Ping',
      goal: 'Keep talking.',
      collabMode: 'structured',
      leadAppId: apps.Lead,
      members: [
        { appId: apps.Lead, memberName: 'Lead' },
        { appId: apps.Echo, memberName: 'Echo' },
      ],
    });
    const edges = await putEdges(team.id, [{ fromAppId: apps.Lead, toAppId: apps.Echo }]);
    assert.deepEqual(edges.body.data, [{ fromAppId: apps.Lead, toAppId: apps.Echo }]);
    const epoch = okData<{ id: string }>(await api.post(`/api/teams/${team.id}/run`));
    const sealed = await teamEvent('team:updated', team.id, (f) => f.data?.changed === 'epoch-sealed', 60_000);
    assert.equal(teamOf(sealed).status, 'error');
    const board = okData<{
      epoch: { endReason: string; outcome: string; summary: string };
      activities: Array<{ kind: string }>;
    }>(await api.get(`/api/teams/${team.id}/epochs/${epoch.id}/board`));
    assert.deepEqual([board.epoch.endReason, board.epoch.outcome], ['error', 'failed']);
    assert.match(board.epoch.summary, /forward-depth limit/);
    const escalation = await events.next(
      (f) => f.type === 'event' && f.channel === 'app:escalation:new' && f.data?.teamId === team.id,
      10_000,
    );
    assert.deepEqual([escalation.data!.appId, escalation.data!.epochId], [apps.Lead, epoch.id]);
    assert.match(String(escalation.data!.question), /forward-depth limit/);
    assert.equal(board.activities.filter((a) => a.kind === 'message').length, 8, 'eight hops, the ninth refused');
    await waitFor(
      async () => (await h.api.get('/api/agent/sessions')).body.data.length === 0,
      15_000,
      'no member left working',
    );
  });

  it('a person’s message reaches a working member at its next step (mid_turn); the lead ends the run with team_complete', async () => {
    const team = await createTeam({ name: 'Desk', goal: 'Mind the shop.', leadAppId: apps.Lead, members: [] });
    const epoch = okData<{ id: string }>(await api.post(`/api/teams/${team.id}/run`));
    await waitFor(async () => h.model.requests.some((r) => inTeam(r, 'Desk')), 15_000, 'the lead is working');
    const sent = okData<{ epochId: string; delivery: string }>(
      await api.post(`/api/teams/${team.id}/members/${apps.Lead}/send`, { message: 'Also check the stock.' }),
    );
    assert.deepEqual(sent, { epochId: epoch.id, delivery: 'mid_turn' });
    const sealed = await teamEvent('team:updated', team.id, (f) => f.data?.changed === 'epoch-sealed');
    assert.equal(teamOf(sealed).status, 'idle');
    const board = okData<{ epoch: { endReason: string; outcome: string; summary: string } }>(
      await api.get(`/api/teams/${team.id}/epochs/${epoch.id}/board`),
    );
    assert.deepEqual(
      [board.epoch.endReason, board.epoch.outcome, board.epoch.summary],
      ['completed', 'output', 'Stock checked.'],
    );
    const deskRequests = h.model.requests.filter((r) => inTeam(r, 'Desk'));
    assert.equal(deskRequests.length >= 2, true);
    assert.equal(
      deskRequests.filter((r) => sinceLastText(r).text.includes('[From your user]\nAlso check the stock.')).length >= 1,
      true,
      'one turn took the message at its next step',
    );
    await waitFor(
      async () =>
        okData<Array<{ role: string; content: string }>>(
          await api.get(`/api/teams/${team.id}/chat-messages?appId=${apps.Lead}`),
        ).some((m) => m.role === 'user' && m.content === '[From your user]\nAlso check the stock.'),
      10_000,
      'the message is in the transcript',
    );
  });

  it('a member escalates: the team waits for the person, whose answer resumes that member, and the run then seals', async () => {
    const team = await createTeam({
      name: 'Asking',
      goal: 'Check a shop.',
      leadAppId: apps.Lead,
      members: [{ appId: apps.Researcher, memberName: 'Researcher' }],
    });
    const epoch = okData<{ id: string }>(await api.post(`/api/teams/${team.id}/run`));
    const asked = await events.next(
      (f) => f.type === 'event' && f.channel === 'app:escalation:new' && f.data?.teamId === team.id,
      30_000,
    );
    assert.deepEqual(
      [asked.data!.appId, asked.data!.epochId, asked.data!.question, asked.data!.choices],
      [apps.Researcher, epoch.id, 'Which shop?', ['North', 'South']],
    );
    await waitFor(
      async () => okData<{ status: string }>(await api.get(`/api/teams/${team.id}`)).status === 'waiting_user',
      10_000,
      'the team waits for the person',
    );
    const waiting = okData<{ pendingEscalations: Array<Record<string, unknown>> }>(
      await api.get(`/api/teams/${team.id}/detail`),
    ).pendingEscalations;
    assert.deepEqual(waiting, [
      {
        appId: apps.Researcher,
        memberName: 'Researcher',
        entryId: asked.data!.entryId,
        epochId: epoch.id,
        question: 'Which shop?',
        choices: ['North', 'South'],
      },
    ]);
    // Quiet while waiting: the run is not sealed.
    await waitFor(async () => (await h.api.get('/api/agent/sessions')).body.data.length === 0, 15_000, 'idle');
    assert.equal(
      okData<Array<{ endedAt: string | null }>>(await api.get(`/api/teams/${team.id}/epochs`))[0]!.endedAt,
      null,
    );
    const answered = okData<{ outcome: string; runId: string; conversationId: string }>(
      await api.post(`/api/apps/${apps.Researcher}/escalation/${String(asked.data!.entryId)}/respond`, {
        choice: 'North',
      }),
    );
    assert.deepEqual(
      [answered.outcome, answered.runId, answered.conversationId],
      ['started', epoch.id, `app-chat:${apps.Researcher}:team:${team.id}:${epoch.id}`],
    );
    const sealed = await teamEvent('team:updated', team.id, (f) => f.data?.changed === 'epoch-sealed');
    assert.equal(teamOf(sealed).status, 'idle');
    assert.deepEqual(
      okData<{ pendingEscalations: unknown[] }>(await api.get(`/api/teams/${team.id}/detail`)).pendingEscalations,
      [],
    );
    const board = okData<{
      epoch: { endReason: string; outcome: string };
      tasks: Array<{ status: string }>;
      findings: Array<{ body: string }>;
    }>(await api.get(`/api/teams/${team.id}/epochs/${epoch.id}/board`));
    assert.deepEqual(
      [board.epoch.endReason, board.epoch.outcome, board.tasks.map((t) => t.status), board.findings.map((f) => f.body)],
      ['completed', 'output', ['done'], ['Checked North.']],
    );
  });

  it('a conversation epoch: a person chats with a member, it stays open when quiet, and is archived on demand', async () => {
    const team = await createTeam({ name: 'Chatty', goal: 'Answer questions.', leadAppId: apps.Lead, members: [] });
    const chat = okData<{ id: string; lifecycle: string; title: string | null }>(
      await api.post(`/api/teams/${team.id}/conversations`, { title: 'Questions' }),
    );
    assert.deepEqual([chat.lifecycle, chat.title], ['conversation', 'Questions']);
    const sent = okData<{ epochId: string; delivery: string }>(
      await api.post(`/api/teams/${team.id}/members/${apps.Lead}/send`, { message: 'Hi?', epochId: chat.id }),
    );
    assert.deepEqual(sent, { epochId: chat.id, delivery: 'queued' });
    await waitFor(
      async () =>
        okData<Array<{ role: string; content: string }>>(
          await api.get(`/api/teams/${team.id}/chat-messages?appId=${apps.Lead}&epochId=${chat.id}`),
        ).some((m) => m.role === 'assistant' && m.content === 'Hello from the lead.'),
      15_000,
      'the lead answered in the conversation',
    );
    await waitFor(async () => (await h.api.get('/api/agent/sessions')).body.data.length === 0, 15_000, 'quiet');
    const renamed = okData<{ title: string }>(
      await h.api.patch(`/api/teams/${team.id}/conversations/${chat.id}`, { title: 'Renamed' }),
    );
    assert.equal(renamed.title, 'Renamed');
    const [listed] = okData<Array<{ id: string; endedAt: string | null; title: string }>>(
      await api.get(`/api/teams/${team.id}/conversations`),
    );
    assert.deepEqual([listed!.id, listed!.endedAt, listed!.title], [chat.id, null, 'Renamed'], 'quiet, still open');
    assert.equal(okData<{ status: string }>(await api.get(`/api/teams/${team.id}`)).status, 'idle');
    assert.equal((await api.delete(`/api/teams/${team.id}/conversations/${chat.id}`)).status, 200);
    const after = okData<Array<{ endedAt: string | null }>>(await api.get(`/api/teams/${team.id}/conversations`));
    assert.notEqual(after[0]!.endedAt, null);
    assert.equal((await api.delete(`/api/teams/${team.id}/conversations/${randomUUID()}`)).status, 404);
  });

  it('a run whose members all stopped with tasks open reminds its lead, then seals naming the open tasks', async () => {
    const team = await createTeam({
      name: 'Stalled',
      goal: 'Count the stock.',
      leadAppId: apps.Lead,
      members: [{ appId: apps.Researcher, memberName: 'Researcher' }],
    });
    const epoch = okData<{ id: string }>(await api.post(`/api/teams/${team.id}/run`));
    await teamEvent('team:updated', team.id, (f) => f.data?.changed === 'epoch-sealed');
    const board = okData<{
      epoch: { endReason: string; outcome: string; summary: string };
      activities: Array<{ kind: string; actorAppId: string | null; subject: string }>;
    }>(await api.get(`/api/teams/${team.id}/epochs/${epoch.id}/board`));
    assert.deepEqual([board.epoch.endReason, board.epoch.outcome], ['completed', 'no_action']);
    assert.match(board.epoch.summary, /1 task\(s\) still open: Count the stock/);
    const reminders = board.activities.filter((a) => a.kind === 'message' && a.actorAppId === null);
    assert.equal(reminders.length, 2);
    assert.ok(reminders.every((r) => r.subject.startsWith('Reminder: ')));
    const leadTurns = h.model.requests.filter((r) => inTeam(r, 'Stalled'));
    assert.equal(leadTurns.filter((r) => sinceLastText(r).text.includes('still open')).length, 2);
    assert.equal(
      h.model.requests.some((r) => inTeam(r, 'Stalled') && whoAmI(r) === 'Researcher'),
      false,
      'posting a task wakes nobody',
    );
  });

  it('pause seals the running run as stopped and stops its members', async () => {
    const team = await createTeam({ name: 'Pausing', goal: 'Wait.', leadAppId: apps.Lead, members: [] });
    const epoch = okData<{ id: string }>(await api.post(`/api/teams/${team.id}/run`));
    await waitFor(async () => h.model.requests.some((r) => inTeam(r, 'Pausing')), 15_000, 'the lead is working');
    const paused = okData<{ id: string; endReason: string; endedAt: string | null }>(
      await api.post(`/api/teams/${team.id}/pause`),
    );
    assert.deepEqual([paused.id, paused.endReason, paused.endedAt !== null], [epoch.id, 'stopped', true]);
    assert.equal(okData<{ status: string }>(await api.get(`/api/teams/${team.id}`)).status, 'idle');
    await waitFor(
      async () => (await h.api.get('/api/agent/sessions')).body.data.length === 0,
      15_000,
      'the lead’s turn stopped',
    );
  });

  it('answers bad input with the envelope: unknown team or member, duplicate names, edges, send before a run', async () => {
    const missing = await api.get(`/api/teams/${randomUUID()}`);
    assert.deepEqual([missing.status, missing.body], [404, { success: false, error: 'Team not found' }]);
    assert.equal((await api.get('/api/teams/not-a-uuid')).status, 404);
    const noInput = await api.post('/api/teams', {});
    assert.deepEqual([noInput.status, noInput.body.error], [400, 'Missing required field: input']);
    const twice = await api.post('/api/teams', {
      input: {
        name: 'Twice',
        goal: 'x',
        owningSpaceId: space.id,
        leadAppId: apps.Lead,
        members: [
          { appId: apps.Lead, memberName: 'Sam' },
          { appId: apps.Writer, memberName: 'sam' },
        ],
      },
    });
    assert.equal(twice.status, 409);
    const team = await createTeam({
      name: 'Quiet',
      goal: 'Nothing yet.',
      leadAppId: apps.Lead,
      members: [{ appId: apps.Researcher, memberName: 'Researcher' }],
    });
    const notMember = await api.get(`/api/teams/${team.id}/chat-messages?appId=${apps.Echo}`);
    assert.deepEqual([notMember.status, notMember.body.error], [404, 'App is not a member of this team']);
    const sendToStranger = await api.post(`/api/teams/${team.id}/members/${apps.Echo}/send`, { message: 'hi' });
    assert.equal(sendToStranger.status, 404);
    const early = await api.post(`/api/teams/${team.id}/members/${apps.Researcher}/send`, { message: 'hi' });
    assert.deepEqual([early.status, early.body.error], [400, 'No run has started for this team yet']);
    const badEdge = await putEdges(team.id, [{ fromAppId: apps.Lead, toAppId: apps.Echo }]);
    assert.deepEqual(
      [badEdge.status, badEdge.body.error],
      [400, 'An edge names an app that is not a member of this team'],
    );
    const added = await api.post(`/api/teams/${team.id}/members`, { appId: apps.Writer, memberName: 'Researcher' });
    assert.equal(added.status, 409, 'a member name used twice');
    assert.equal((await api.post(`/api/teams/${team.id}/pause`)).status, 409, 'nothing to pause');

    // Uninstalling a member's digital human removes it from the team.
    okData(await api.post(`/api/teams/${team.id}/members`, { appId: apps.Echo, memberName: 'Echo' }));
    assert.equal((await api.delete(`/api/apps/${apps.Echo}`)).status, 200);
    await teamEvent(
      'team:updated',
      team.id,
      (f) => f.data?.changed === 'members' && !JSON.stringify(f.data).includes('"Echo"'),
      10_000,
    ).catch(() => undefined);
    await waitFor(
      async () =>
        !okData<{ members: Array<{ appId: string }> }>(await api.get(`/api/teams/${team.id}/detail`)).members.some(
          (m) => m.appId === apps.Echo,
        ),
      10_000,
      'the uninstalled app left the team',
    );
  });

  it('dissolving a team deletes its provisioned lead and keeps the other members; deleting a space deletes its teams', async () => {
    const team = await createTeam({
      name: 'Provisioned',
      goal: 'Check the stock.',
      members: [{ appId: apps.Writer, memberName: 'Writer' }],
    });
    const detail = okData<{
      members: Array<{ appId: string; memberName: string; isLead: boolean; aiProvisioned: boolean }>;
    }>(await api.get(`/api/teams/${team.id}/detail`));
    const lead = detail.members.find((m) => m.isLead)!;
    assert.deepEqual([lead.memberName, lead.aiProvisioned, lead.appId], ['Lead', true, team.leadAppId]);
    assert.equal((await api.get(`/api/apps/${lead.appId}`)).status, 200);
    assert.equal((await api.delete(`/api/teams/${team.id}`)).status, 200);
    assert.equal((await api.get(`/api/teams/${team.id}`)).status, 404);
    assert.equal((await api.get(`/api/apps/${lead.appId}`)).status, 404, 'the provisioned lead is gone');
    assert.equal((await api.get(`/api/apps/${apps.Writer}`)).status, 200, 'a member of its own is kept');

    const other = okData<{ id: string }>(await api.post('/api/spaces', { name: 'Other' }));
    const elsewhere = okData<{ id: string }>(
      await api.post('/api/teams', {
        input: { name: 'Elsewhere', goal: 'x', owningSpaceId: other.id, members: [], leadAppId: apps.Writer },
      }),
    );
    assert.equal(okData<unknown[]>(await api.get(`/api/teams?spaceId=${other.id}`)).length, 1);
    assert.equal((await api.delete(`/api/spaces/${other.id}`)).status, 200);
    assert.equal((await api.get(`/api/teams/${elsewhere.id}`)).status, 404);
  });

  it('propose-members asks the model; an AI-sourced team provisions them, and dissolving deletes them', async () => {
    const missing = await api.post('/api/teams/propose-members', { goal: 'x' });
    assert.deepEqual([missing.status, missing.body.error], [400, 'Missing required field: owningSpaceId']);
    const proposal = okData<Array<{ memberName: string; role: string; responsibility: string }>>(
      await api.post('/api/teams/propose-members', { goal: 'Report on prices', owningSpaceId: space.id }),
    );
    assert.deepEqual(
      proposal.map((p) => p.memberName),
      ['Scout', 'Scribe'],
    );
    const team = okData<{ id: string }>(
      await api.post('/api/teams', {
        input: { name: 'Sourced', goal: 'Report on prices', owningSpaceId: space.id, memberSourcing: 'ai' },
        confirmedProposal: proposal,
      }),
    );
    const { members } = okData<{
      members: Array<{
        appId: string;
        memberName: string;
        duty: string | null;
        aiProvisioned: boolean;
        isLead: boolean;
      }>;
    }>(await api.get(`/api/teams/${team.id}/detail`));
    assert.deepEqual(
      members.map((m) => [m.memberName, m.aiProvisioned, m.isLead]),
      [
        ['Lead', true, true],
        ['Scout', true, false],
        ['Scribe', true, false],
      ],
    );
    assert.equal(members[1]!.duty, 'Finds this week’s prices.');
    for (const m of members) assert.equal((await api.get(`/api/apps/${m.appId}`)).status, 200);
    assert.equal((await api.delete(`/api/teams/${team.id}`)).status, 200);
    for (const m of members) assert.equal((await api.get(`/api/apps/${m.appId}`)).status, 404, m.memberName);
  });

  async function putEdges(teamId: string, edges: unknown[]) {
    return h.api.put(`/api/teams/${teamId}/edges`, { edges });
  }
});
