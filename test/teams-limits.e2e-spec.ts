import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RecordedModelRequest } from '#testing/scripted-model-server.js';
import { AgentHarness } from '#testing/agent-harness.js';
import { textReply } from '#testing/scripted-model-server.js';
import { type Frame, WsTestClient } from '#testing/ws-client.js';
import { waitFor } from '#testing/wait.js';

const memberSpec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: `${name} of the slow team.`,
  type: 'automation',
  system_prompt: `You are the ${name}.`,
});

const systemText = (req: RecordedModelRequest) => JSON.stringify((req.body as { system?: unknown }).system ?? '');
const inTeam = (req: RecordedModelRequest, team: string) => systemText(req).includes(`in the team \\"${team}\\"`);

describe('teams: a run’s time limit', () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let events: WsTestClient;
  let space: { id: string };
  let lead: string;

  before(async () => {
    // A run may last 3 seconds here; a delayed job (any replica) seals it when its time is up.
    await h.start({ SVC_TEAM_MAX_RUN_MS: '3000' });
    events = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    space = okData(await api.post('/api/spaces', { name: 'Slow' }));
    lead = okData<{ appId: string }>(await api.post('/api/apps/install', { spec: memberSpec('Lead'), spaceId: space.id }))
      .appId;
    // The lead works on and on: nothing but the time limit ends the run.
    h.model.respond((req) => (inTeam(req, 'Slow') ? { steps: [{ hang: true }] } : textReply('?')));
  });
  after(async () => {
    events?.close();
    await h.stop();
  });

  it('a run past its time limit is sealed as error by a timer, its members stopped, and the person told which limit', async () => {
    const team = okData<{ id: string }>(
      await api.post('/api/teams', {
        input: { name: 'Slow', goal: 'Take your time.', owningSpaceId: space.id, leadAppId: lead, members: [] },
      }),
    );
    const sealedEvent = events.next(
      (f: Frame) =>
        f.type === 'event' &&
        f.channel === 'team:updated' &&
        f.data?.teamId === team.id &&
        f.data?.changed === 'epoch-sealed',
      60_000,
    );
    const escalationEvent = events.next(
      (f: Frame) => f.type === 'event' && f.channel === 'app:escalation:new' && f.data?.teamId === team.id,
      60_000,
    );
    const epoch = okData<{ id: string }>(await api.post(`/api/teams/${team.id}/run`));
    await waitFor(async () => h.model.requests.some((r) => inTeam(r, 'Slow')), 15_000, 'the lead is working');
    const sealed = await sealedEvent;
    assert.equal((sealed.data?.team as { status?: string }).status, 'error');
    const board = okData<{ epoch: { endReason: string; outcome: string; summary: string; endedAt: string } }>(
      await api.get(`/api/teams/${team.id}/epochs/${epoch.id}/board`),
    );
    assert.deepEqual([board.epoch.endReason, board.epoch.outcome], ['error', 'failed']);
    assert.match(board.epoch.summary, /more than 3 second\(s\) \(the time limit per run\)/);
    const escalation = await escalationEvent;
    assert.deepEqual([escalation.data!.appId, escalation.data!.epochId], [lead, epoch.id]);
    assert.match(String(escalation.data!.question), /time limit per run/);
    await waitFor(
      async () => (await api.get('/api/agent/sessions')).body.data.length === 0,
      15_000,
      'the lead’s turn stopped',
    );
    // A sealed run takes no more messages.
    const late = okData<{ delivery: string }>(
      await api.post(`/api/teams/${team.id}/members/${lead}/send`, { message: 'Still there?', epochId: epoch.id }),
    );
    assert.equal(late.delivery, 'undelivered');
  });
});
