import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import type { RecordedModelRequest } from '#testing/scripted-model-server.js';
import { AgentHarness } from '#testing/agent-harness.js';
import { textReply } from '#testing/scripted-model-server.js';
import { sleep, waitFor } from '#testing/wait.js';
import { WsTestClient } from '#testing/ws-client.js';

const memberSpec = (name: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: `${name} of a triggered team.`,
  type: 'automation',
  system_prompt: `You are the ${name}.`,
});

interface Epoch {
  id: string;
  triggerType: string | null;
  title: string | null;
  endedAt: string | null;
}

const systemText = (req: RecordedModelRequest) => JSON.stringify((req.body as { system?: unknown }).system ?? '');
const inTeam = (req: RecordedModelRequest, team: string) => systemText(req).includes(`in the team \\"${team}\\"`);

describe('teams: triggers open run epochs', () => {
  const h = new AgentHarness();
  const { api, okData } = h;
  let space: { id: string };
  let lead: string;

  before(async () => {
    // No floor between two runs of a schedule, so a schedule of one second fires here.
    await h.start({ SVC_SCHEDULE_MIN_INTERVAL: '0' });
    space = okData(await api.post('/api/spaces', { name: 'Triggered' }));
    lead = okData<{ appId: string }>(await api.post('/api/apps/install', { spec: memberSpec('Lead'), spaceId: space.id }))
      .appId;
    // The lead answers at once: each run seals itself (nothing to do) before the next firing.
    h.model.respond(() => textReply('Nothing to do today.'));
  });
  after(async () => {
    await h.stop();
  });

  const createTeam = async (name: string) =>
    okData<{ id: string }>(
      await api.post('/api/teams', {
        input: { name, goal: 'Report.', owningSpaceId: space.id, leadAppId: lead, members: [] },
      }),
    );
  const epochs = async (teamId: string) => okData<Epoch[]>(await api.get(`/api/teams/${teamId}/epochs`));

  it('a schedule trigger opens a run epoch per occurrence, once each, until it is removed', async () => {
    const team = await createTeam('Clockwork');
    const trigger = okData<{ id: string; source: { type: string; config: Record<string, unknown> }; nextRunAt: string }>(
      await api.post(`/api/teams/${team.id}/triggers`, { source: { type: 'schedule', config: { every: '1s' } } }),
    );
    assert.deepEqual(trigger.source, { type: 'schedule', config: { every: '1s' } });
    assert.equal(typeof trigger.nextRunAt, 'string');
    assert.deepEqual(
      okData<Array<{ id: string }>>(await api.get(`/api/teams/${team.id}/triggers`)).map((t) => t.id),
      [trigger.id],
    );
    await waitFor(
      async () => (await epochs(team.id)).filter((e) => e.triggerType === 'schedule' && e.endedAt).length >= 2,
      60_000,
      'two scheduled runs',
    );
    const removed = await api.delete(`/api/teams/${team.id}/triggers/${trigger.id}`);
    assert.deepEqual([removed.status, removed.body], [200, { success: true }]);
    assert.deepEqual(okData(await api.get(`/api/teams/${team.id}/triggers`)), []);
    const scheduled = (await epochs(team.id)).filter((e) => e.triggerType === 'schedule');
    // Each occurrence opened one epoch (its title names the occurrence).
    const titles = scheduled.map((e) => e.title);
    assert.equal(new Set(titles).size, titles.length, `one epoch per occurrence: ${titles.join(', ')}`);
    assert.ok(titles.every((t) => t?.startsWith('Scheduled run ')));
    assert.ok(
      h.model.requests.some(
        (r) => inTeam(r, 'Clockwork') && JSON.stringify(r.body).includes("started by the team's schedule (every 1s)"),
      ),
      'the lead was told what started the run',
    );
    const again = await api.delete(`/api/teams/${team.id}/triggers/${trigger.id}`);
    assert.deepEqual([again.status, again.body], [404, { success: false, error: 'Trigger not found' }]);
  });

  it('a webhook trigger opens one run epoch per delivery (a repeat opens none); its secret is checked and masked', async () => {
    const team = await createTeam('Hooked');
    const path = `teams/hooked-${randomUUID().slice(0, 8)}`;
    const secret = 's3cret-hook';
    const trigger = okData<{ source: { config: Record<string, unknown> } }>(
      await api.post(`/api/teams/${team.id}/triggers`, { source: { type: 'webhook', config: { path, secret } } }),
    );
    assert.deepEqual(trigger.source.config, { path, secret: '********' });
    const taken = await api.post(`/api/teams/${team.id}/triggers`, { source: { type: 'webhook', config: { path } } });
    assert.equal(taken.status, 409);
    const raw = JSON.stringify({ order: 42 });
    const deliver = (signature: string) =>
      request(h.server.url)
        .post(`/hooks/${path}`)
        .set('Content-Type', 'application/json')
        .set({ 'X-Webhook-Id': 'delivery-1', 'X-Hub-Signature-256': signature })
        .send(raw);
    const bad = await deliver('sha256=' + '0'.repeat(64));
    assert.equal(bad.status, 401);
    const signature = `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
    assert.equal((await deliver(signature)).status, 200);
    assert.equal((await deliver(signature)).status, 200, 'a repeat is answered alike');
    await waitFor(
      async () => (await epochs(team.id)).some((e) => e.triggerType === 'webhook' && e.endedAt),
      30_000,
      'the webhook’s run ended',
    );
    const hooked = (await epochs(team.id)).filter((e) => e.triggerType === 'webhook');
    assert.equal(hooked.length, 1, 'one run for the delivery, none for its repeat');
    assert.equal(hooked[0]!.title, `Webhook /hooks/${path} (delivery-1)`);
    assert.ok(
      h.model.requests.some((r) => inTeam(r, 'Hooked') && JSON.stringify(r.body).includes('{\\"order\\":42}')),
      'the lead was given the delivery’s body',
    );
  });

  it('a file trigger opens one run epoch per burst of matching changes in the team’s space; other files none', async () => {
    const filed = okData<{ id: string; path: string }>(await api.post('/api/spaces', { name: 'Filed' }));
    const fileLead = okData<{ appId: string }>(
      await api.post('/api/apps/install', { spec: memberSpec('Lead'), spaceId: filed.id }),
    ).appId;
    const team = okData<{ id: string }>(
      await api.post('/api/teams', {
        input: { name: 'Filers', goal: 'File reports.', owningSpaceId: filed.id, leadAppId: fileLead, members: [] },
      }),
    );
    // The space is watched once a probe file is reported (the watcher starts with the space).
    const ws = await WsTestClient.signedIn(h.server.wsUrl, h.server.password);
    const probed = () =>
      ws.frames.some(
        (f) =>
          f.channel === 'artifact:changed-batch' &&
          f.data?.spaceId === filed.id &&
          (f.data.changes as Array<{ relativePath: string }>).some((c) => c.relativePath === 'probe.bin'),
      );
    const deadline = Date.now() + 20_000;
    while (!probed()) {
      if (Date.now() > deadline) throw new Error('the space is not watched');
      writeFileSync(join(filed.path, 'probe.bin'), String(Date.now()));
      await waitFor(probed, 1_500, 'probe').catch(() => undefined);
    }
    ws.close();
    const trigger = okData<{ source: unknown }>(
      await api.post(`/api/teams/${team.id}/triggers`, { source: { type: 'file', config: { pattern: '*.csv' } } }),
    );
    assert.deepEqual(trigger.source, { type: 'file', config: { pattern: '*.csv' } });
    writeFileSync(join(filed.path, 'notes.txt'), 'not a csv');
    mkdirSync(join(filed.path, 'in'), { recursive: true });
    for (const name of ['sales.csv', 'in/costs.csv']) {
      writeFileSync(join(filed.path, name), 'a,b\n1,2\n');
      await sleep(100);
    }
    await waitFor(
      async () => (await epochs(team.id)).some((e) => e.triggerType === 'file' && e.endedAt),
      30_000,
      'the file run ended',
    );
    await sleep(2_000);
    const runs = (await epochs(team.id)).filter((e) => e.triggerType === 'file');
    assert.equal(runs.length, 1, 'one run for the burst');
    assert.match(runs[0]!.title ?? '', /^Files changed: /);
    const told = h.model.requests.find(
      (r) => inTeam(r, 'Filers') && JSON.stringify(r.body).includes('started by changes to files'),
    );
    assert.ok(told, 'the lead was told which files changed');
    const text = JSON.stringify(told.body);
    assert.ok(text.includes('sales.csv') && text.includes('in/costs.csv'), 'both changed files are named');
    assert.ok(!text.includes('notes.txt'), 'a file the pattern does not match is not');
    // Another file the pattern does not match opens nothing.
    writeFileSync(join(filed.path, 'more.txt'), 'still not a csv');
    await sleep(3_000);
    assert.equal((await epochs(team.id)).filter((e) => e.triggerType === 'file').length, 1);
  });

  it('answers bad trigger input with the envelope', async () => {
    const team = await createTeam('Picky');
    const noType = await api.post(`/api/teams/${team.id}/triggers`, { source: { type: 'rule', config: {} } });
    assert.deepEqual([noType.status, noType.body.error], [400, 'source.type must be one of schedule, webhook, file']);
    const badPattern = await api.post(`/api/teams/${team.id}/triggers`, {
      source: { type: 'file', config: { pattern: 7 } },
    });
    assert.deepEqual([badPattern.status, badPattern.body.error], [400, 'source.config.pattern must be a string']);
    assert.deepEqual(okData(await api.get(`/api/teams/${team.id}/triggers`)), [], 'nothing was added');
    const noEvery = await api.post(`/api/teams/${team.id}/triggers`, { source: { type: 'schedule', config: {} } });
    assert.deepEqual([noEvery.status, noEvery.body.error], [400, 'source.config needs every or cron for a schedule']);
    const badPath = await api.post(`/api/teams/${team.id}/triggers`, {
      source: { type: 'webhook', config: { path: '../up' } },
    });
    assert.equal(badPath.status, 400);
    const unknown = await api.get(`/api/teams/${randomUUID()}/triggers`);
    assert.deepEqual([unknown.status, unknown.body.error], [404, 'Team not found']);
  });
});
