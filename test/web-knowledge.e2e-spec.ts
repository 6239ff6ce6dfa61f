import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { KnowledgeBaseDto, RawFileDto, SearchHitDto } from '#contracts/knowledge.js';
import { apiClient, okData } from '#testing/api-client.js';
import { axeViolations, browserSkipReason, formatViolations, launchChromium, screenshot } from '#testing/browser.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

const WAIT = 60_000;

const REFUNDS = '# Refunds\n\n## Timing\n\nRefunds are paid within 14 days by the wombat desk.\n';

/** The Knowledge page (issue 26; docs/web-app.md, "Knowledge"). */
describe('web app in Chromium: knowledge', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let spaceId = '';
  let kbId = '';
  const get = async <T>(path: string) => okData<T>(await apiClient(server).get(path));

  async function expectNoViolations(screen: string): Promise<void> {
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `${screen}:\n${formatViolations(violations)}`);
  }

  before(async () => {
    server = await startServer();
    const space = await apiClient(server).post('/api/spaces', { name: 'Handbook' });
    assert.equal(space.status, 200, JSON.stringify(space.body));
    spaceId = space.body.data.id as string;
    // A folder of the workspace to link.
    const folder = join(space.body.data.path as string, 'guides');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'travel.md'), '# Travel\n\nTrains are booked by the numbat office.\n');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/knowledge`);
    await page.getByRole('heading', { name: 'Knowledge', exact: true, level: 1 }).waitFor({ timeout: WAIT });
    await page.getByText('Live', { exact: true }).waitFor({ timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('creates a knowledge base; an uploaded Markdown file is learned live', async () => {
    await page.getByText('No knowledge base yet.').waitFor({ timeout: WAIT });
    await page.getByLabel('Name', { exact: true }).fill('Policies');
    await page.getByLabel('Description').fill('How the shop works.');
    await page.getByRole('button', { name: 'Create knowledge base' }).click();
    await page.getByRole('heading', { name: 'Policies', level: 1 }).waitFor({ timeout: WAIT });
    const bases = await get<KnowledgeBaseDto[]>('/api/tlon');
    assert.deepEqual(
      bases.map((b) => [b.name, b.description]),
      [['Policies', 'How the shop works.']],
    );
    kbId = bases[0]!.id;
    await page.getByText('No source yet', { exact: false }).waitFor({ timeout: WAIT });
    await page
      .getByLabel('Upload files')
      .setInputFiles([{ name: 'refunds.md', mimeType: 'text/markdown', buffer: Buffer.from(REFUNDS) }]);
    // The page is not read again by hand: the state and the progress arrive over the event socket.
    await page.getByLabel('State of refunds.md').getByText('learned', { exact: true }).waitFor({ timeout: WAIT });
    await page.getByLabel('Learning progress').getByText('Done: 1 of 1 learned.').waitFor({ timeout: WAIT });
    await page.getByLabel('Stats').getByText('Passages').waitFor({ timeout: WAIT });
    const sources = await get<RawFileDto[]>(`/api/tlon/${kbId}/raw`);
    assert.deepEqual(
      sources.map((s) => [s.path, s.state]),
      [['refunds.md', 'learned']],
    );
  });

  it('searches: the cited passage with its source, heading and citation id; keyword-only is said', async () => {
    await page.getByText('Keyword search only', { exact: false }).waitFor({ timeout: WAIT });
    await page.getByLabel('Search this knowledge base').fill('wombat');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const passages = page.getByRole('list', { name: 'Passages' });
    await passages.getByText('Refunds are paid within 14 days by the wombat desk.', { exact: false }).waitFor({
      timeout: WAIT,
    });
    const hits = (await apiClient(server).post(`/api/tlon/${kbId}/search`, { query: 'wombat' })).body
      .data as SearchHitDto[];
    assert.equal(hits.length, 1);
    await passages.getByText('refunds.md', { exact: true }).waitFor({ timeout: WAIT });
    await passages.getByText(hits[0]!.heading!, { exact: true }).waitFor({ timeout: WAIT });
    await passages.getByText(hits[0]!.chunkId, { exact: true }).waitFor({ timeout: WAIT });
    await screenshot(page, 'knowledge-search');
  });

  it('binds the knowledge base to a space, and unbinds it', async () => {
    const spaces = page.getByRole('group', { name: 'Spaces' });
    await spaces.getByRole('checkbox', { name: 'Handbook' }).check();
    await waitFor(
      async () => (await get<KnowledgeBaseDto>(`/api/tlon/${kbId}`)).spaceIds.includes(spaceId),
      WAIT,
      'bound to the space',
    );
    const forSpace = await get<KnowledgeBaseDto[]>(`/api/tlon/for-space/${spaceId}`);
    assert.deepEqual(
      forSpace.map((b) => b.id),
      [kbId],
    );
    await spaces.getByRole('checkbox', { name: 'Handbook' }).uncheck();
    await waitFor(
      async () => (await get<KnowledgeBaseDto>(`/api/tlon/${kbId}`)).spaceIds.length === 0,
      WAIT,
      'unbound',
    );
    await spaces.getByRole('checkbox', { name: 'Handbook' }).check();
    await waitFor(
      async () => (await get<KnowledgeBaseDto>(`/api/tlon/${kbId}`)).spaceIds.includes(spaceId),
      WAIT,
      'bound again',
    );
  });

  it('adds a picked workspace file, and links a folder: learned and listed; removing and unlinking drop them', async () => {
    await page.getByLabel('Space', { exact: true }).selectOption({ label: 'Handbook' });
    const files = page.getByRole('list', { name: 'Workspace files' });
    await page.getByRole('button', { name: 'Open guides' }).click();
    await files.getByText('travel.md').waitFor({ timeout: WAIT });
    // A copy of a picked file first: a source of its own, kept by its path in the space.
    await files.getByRole('checkbox', { name: 'travel.md' }).check();
    await page.getByRole('button', { name: 'Add selected' }).click();
    await page.getByText('Added 1 file(s).').first().waitFor({ timeout: WAIT });
    await page.getByLabel('State of guides/travel.md').getByText('learned', { exact: true }).waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Remove guides/travel.md' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await page.getByLabel('State of guides/travel.md').waitFor({ state: 'detached', timeout: WAIT });
    await page.getByLabel('Label of the link (optional)').fill('Guides');
    await page.getByRole('button', { name: 'Link this folder' }).click();
    const links = page.getByRole('list', { name: 'Linked folders' });
    await links.getByText('Guides', { exact: true }).waitFor({ timeout: WAIT });
    const sources = page.getByRole('list', { name: 'Sources' });
    await sources.getByText('/travel.md', { exact: false }).waitFor({ timeout: WAIT });
    await waitFor(
      async () => (await get<RawFileDto[]>(`/api/tlon/${kbId}/raw`)).every((s) => s.state === 'learned'),
      WAIT,
      'the linked file learned',
    );
    await page.getByRole('button', { name: 'Unlink Guides' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Unlink' }).click();
    await page.getByText('No linked folder.').waitFor({ timeout: WAIT });
    await waitFor(
      async () => (await get<RawFileDto[]>(`/api/tlon/${kbId}/raw`)).length === 1,
      WAIT,
      'the linked source gone',
    );
  });

  it('axe finds no violations on the page (light and dark), and it fits a phone', async () => {
    await page.waitForLoadState('networkidle');
    for (const theme of ['light', 'dark'] as const) {
      await page.getByLabel('Theme').selectOption(theme);
      await page.locator(`html[data-theme="${theme}"]`).waitFor({ state: 'attached', timeout: WAIT });
      await expectNoViolations(`Knowledge base page (${theme})`);
    }
    await page.getByLabel('Theme').selectOption('light');
    await page.setViewportSize({ width: 390, height: 844 });
    const width = await page.evaluate<number>(`document.documentElement.scrollWidth`);
    assert.ok(width <= 390, `the page is ${width} px wide at 390 px`);
    await expectNoViolations('Knowledge base page (phone)');
    await screenshot(page, 'knowledge-phone');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('removes a source: its passages leave the index', async () => {
    await page.getByRole('button', { name: 'Remove refunds.md' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await page.getByText('No source yet', { exact: false }).waitFor({ timeout: WAIT });
    assert.deepEqual(await get<RawFileDto[]>(`/api/tlon/${kbId}/raw`), []);
    const hits = (await apiClient(server).post(`/api/tlon/${kbId}/search`, { query: 'wombat' })).body
      .data as SearchHitDto[];
    assert.deepEqual(hits, []);
  });

  it('the list shows the base; axe finds no violations there', async () => {
    await page.getByRole('link', { name: '← Knowledge' }).click();
    await page.getByRole('list', { name: 'Knowledge bases' }).getByRole('link', { name: 'Policies' }).waitFor({
      timeout: WAIT,
    });
    await page.waitForLoadState('networkidle');
    await expectNoViolations('Knowledge list');
  });
});
