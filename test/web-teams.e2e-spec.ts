import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { apiClient, okData } from '#testing/api-client.js';
import { browserSkipReason, launchChromium, screenshot } from '#testing/browser.js';
import { type RecordedModelRequest, ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';

const WAIT = 30_000;

const memberSpec = (name: string) => ({
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

describe('web app in Chromium: teams', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let model: ScriptedModelServer;
  let browser: Browser;
  let page: Page;
  let spaceId = '';
  const post = async <T>(path: string, body: object) => okData<T>(await apiClient(server).post(path, body));

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({ env: model.serverEnv() });
    // A lead that posts one task and hands it to the worker; a worker that finishes it with a finding.
    let taskId = '';
    model.respond((req) => {
      if (JSON.stringify((req.body as { system?: unknown }).system ?? '').includes('You design small teams'))
        return {
          steps: [
            {
              text:
                '```json\n' +
                JSON.stringify([{ memberName: 'Tallier', role: 'counting', responsibility: 'Counts the shelves.' }]) +
                '\n```',
            },
          ],
        };
      const last = (req.body as { messages: Array<{ role: string; content: unknown }> }).messages.at(-1)!;
      const lastText = JSON.stringify(last.content);
      if (whoAmI(req) === 'Lead') {
        if (last.role === 'user' && lastText.includes('Start the run'))
          return {
            steps: [{ toolCall: { name: 'team_post_task', input: { title: 'Count the boxes', assignee: 'Worker' } } }],
          };
        if (lastText.includes('taskId') && !taskId) {
          taskId = /"taskId\\?":\\?"([0-9a-f-]{36})/.exec(lastText)?.[1] ?? '';
          return {
            steps: [{ toolCall: { name: 'team_send', input: { to: 'Worker', message: `Please do task ${taskId}` } } }],
          };
        }
        return { steps: [{ text: 'Handed over.' }] };
      }
      if (last.role === 'user' && lastText.includes('Please do task'))
        return {
          steps: [
            { toolCall: { name: 'team_post_finding', input: { content: 'There are 12 boxes in the store room.' } } },
            { toolCall: { name: 'team_update_task', input: { taskId, status: 'done' } } },
          ],
        };
      return { steps: [{ text: 'Done.' }] };
    });
    spaceId = (await post<{ id: string }>('/api/spaces', { name: 'Warehouse' })).id;
    for (const name of ['Lead', 'Worker']) await post('/api/apps/install', { spec: memberSpec(name), spaceId });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // The app opens in the space of the team (the space switch keeps it in localStorage).
    await page.addInitScript(`localStorage.setItem('svc-space', ${JSON.stringify(spaceId)})`);
    await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/teams`);
    await page.getByRole('heading', { name: 'Teams', exact: true }).waitFor({ timeout: WAIT });
    await page.getByText('Live').waitFor({ timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await model?.close();
  });

  it('creates a team from installed digital humans; a message before any run is refused with the reason', async () => {
    await page.getByText('No team in this space yet.').waitFor({ timeout: WAIT });
    await page.getByLabel('Name', { exact: true }).fill('Stocktakers');
    await page.getByLabel('Goal').fill('Count what is in the store room.');
    await page.getByRole('combobox', { name: 'Lead' }).selectOption({ label: 'Lead' });
    await page.getByRole('checkbox', { name: 'Worker' }).check();
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('heading', { name: 'Stocktakers', level: 1 }).waitFor({ timeout: WAIT });
    const roster = page.getByRole('list', { name: 'Members' });
    await roster.getByText('Lead', { exact: true }).waitFor({ timeout: WAIT });
    await roster.getByText('Worker', { exact: true }).waitFor({ timeout: WAIT });
    const teams = (await apiClient(server).get(`/api/teams?spaceId=${spaceId}`)).body.data as Array<{
      name: string;
      leadAppId: string;
    }>;
    assert.deepEqual(
      teams.map((t) => t.name),
      ['Stocktakers'],
    );
    await page.getByLabel('Message', { exact: true }).fill('Hello team');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('No run has started for this team yet').waitFor({ timeout: WAIT });
    await page.getByText('No run yet: Run starts one.').waitFor({ timeout: WAIT });
  });

  it('Run: the board fills live with the task done, the finding and the activity; the epoch is in the history', async () => {
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const done = page.getByRole('region', { name: 'Done' });
    await done.getByText('Count the boxes').waitFor({ timeout: WAIT });
    await page.getByRole('list', { name: 'Findings' }).getByText('There are 12 boxes in the store room.').waitFor({
      timeout: WAIT,
    });
    const activity = page.getByRole('list', { name: 'Activity' });
    await activity.getByText('Please do task', { exact: false }).first().waitFor({ timeout: WAIT });
    // The run sealed itself: the board says so, and the team is idle again with Run offered.
    await page.getByLabel('Epoch state').getByText('Ended: completed (output)', { exact: false }).waitFor({
      timeout: WAIT,
    });
    await page.getByLabel('Team status').getByText('idle').waitFor({ timeout: WAIT });
    assert.equal(await page.getByRole('button', { name: 'Run', exact: true }).isEnabled(), true);
    const history = page.getByRole('table', { name: 'Epochs history' });
    const rows = history.getByRole('row');
    assert.equal(await rows.count(), 2, 'a header and one epoch');
    await rows.nth(1).getByText('manual').waitFor({ timeout: WAIT });
    await rows.nth(1).getByText('output').waitFor({ timeout: WAIT });
    // The worker's transcript in this epoch: the lead's message as it received it.
    await page.getByText('Transcript of Worker', { exact: true }).click();
    await page
      .getByRole('list', { name: 'Transcript of Worker' })
      .getByText('Please do task', { exact: false })
      .first()
      .waitFor({ timeout: WAIT });
    await screenshot(page, 'team-board');
  });

  it('a team with members proposed by the model: they are provisioned with it', async () => {
    await page.getByRole('link', { name: '← Teams' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Proposed');
    await page.getByLabel('Goal').fill('Count the shelves.');
    await page.getByRole('button', { name: 'Propose members from the goal' }).click();
    await page.getByRole('checkbox', { name: /Tallier/ }).waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('heading', { name: 'Proposed' }).waitFor({ timeout: WAIT });
    const roster = page.getByRole('list', { name: 'Members' });
    await roster.getByText('Tallier', { exact: true }).waitFor({ timeout: WAIT });
    await roster.getByText('counting · provisioned', { exact: true }).waitFor({ timeout: WAIT });
  });
});
