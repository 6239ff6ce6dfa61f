import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { apiClient } from '#testing/api-client.js';
import { browserSkipReason, launchChromium, screenshot } from '#testing/browser.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const HOSTILE_MD =
  '# Release notes\n\nSome **bold** text.\n\n<script>window.hacked = 1</script>\n<img src="x" onerror="window.hacked = 2">\n\n[bad](javascript:alert(1))\n';
const WAIT = 20_000;

async function signIn(page: Page, password: string): Promise<void> {
  await page.getByLabel('Access password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: WAIT });
}

/** Answers the app's dialog: fills its text field when it has one, then confirms. */
async function answerDialog(page: Page, text?: string): Promise<void> {
  const dialog = page.locator('dialog[open]');
  await dialog.waitFor({ timeout: WAIT });
  if (text !== undefined) await dialog.getByRole('textbox').fill(text);
  await dialog.locator('button[type=submit]').click();
  await dialog.waitFor({ state: 'detached', timeout: WAIT });
}

describe('web app in Chromium: sign-in, spaces, files', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  before(async () => {
    server = await startServer();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('is served with cache headers and compression', async () => {
    const html = await request(server.url).get('/').set('Accept-Encoding', 'gzip');
    assert.equal(html.status, 200);
    assert.equal(html.headers['cache-control'], 'no-cache');
    assert.equal(html.headers['content-encoding'], 'gzip');
    assert.match(html.text, /<base href="\.\/">/);
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html.text)?.[1];
    assert.ok(script, 'relative script URL');
    const asset = await request(server.url).get(`/${script}`).set('Accept-Encoding', 'br, gzip');
    assert.equal(asset.status, 200);
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(asset.headers['content-encoding'], 'br');
    assert.match(String(asset.headers['content-type']), /javascript/);
    const again = await request(server.url).get(`/${script}`).set('If-None-Match', String(asset.headers.etag));
    assert.equal(again.status, 304);
    const deep = await request(server.url).get('/spaces/a/b');
    assert.match(deep.text, /<base href="\.\.\/\.\.\/">/, 'deep paths climb back to the app root');
    assert.equal((await request(server.url).post('/spaces/a')).status, 404);
  });

  it('refuses a wrong password, then signs in and keeps the token for the tab only', async () => {
    await page.goto(`${server.url}/`);
    await page.getByLabel('Access password').waitFor({ timeout: WAIT });
    await screenshot(page, 'sign-in');
    await page.getByLabel('Access password').fill('Wrong-Passw0rd');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Wrong password.').waitFor({ timeout: WAIT });
    await signIn(page, server.password);
    assert.equal(await page.evaluate('sessionStorage.getItem("svc-token")'), server.password);
    assert.equal(await page.evaluate('localStorage.getItem("svc-token")'), null);
    await page.getByText('Live').waitFor({ timeout: WAIT });
  });

  it('creates, renames and switches spaces; the temporary space is listed', async () => {
    await page.getByRole('link', { name: 'Spaces' }).click();
    await page.getByLabel('New space').fill('Project Alpha');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByText('Created Project Alpha.').waitFor({ timeout: WAIT });
    const list = page.getByRole('list', { name: 'Spaces' });
    await list.getByText('temporary').waitFor();
    await list.locator('li', { hasText: 'Project Alpha' }).getByRole('button', { name: 'Rename' }).click();
    await answerDialog(page, 'Project Beta');
    await page.getByText('Renamed to Project Beta.').waitFor({ timeout: WAIT });
    const spaces = (await apiClient(server).get('/api/spaces')).body.data as Array<{ name: string }>;
    assert.deepEqual(
      spaces.map((s) => s.name),
      ['Project Beta'],
    );
    assert.equal(await page.getByLabel('Current space').inputValue(), (spaces[0] as { id?: string }).id);
    await screenshot(page, 'spaces');
  });

  it('uploads (picker and drag and drop), opens sanitized Markdown and images, and follows disk changes', async () => {
    await page.getByRole('link', { name: 'Files' }).click();
    const tree = page.getByRole('tree', { name: 'Files' });
    await page.getByText('No files yet').waitFor({ timeout: WAIT });
    await page.getByLabel('Upload files').setInputFiles([
      { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from(HOSTILE_MD) },
      { name: 'pixel.png', mimeType: 'image/png', buffer: PNG },
    ]);
    await tree.getByRole('button', { name: 'notes.md' }).waitFor({ timeout: WAIT });
    await tree.getByRole('button', { name: 'pixel.png' }).waitFor({ timeout: WAIT });

    const dataTransfer = await page.evaluateHandle(`(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['dropped by hand'], 'dropped.txt', { type: 'text/plain' }));
      return dt;
    })()`);
    await page.getByRole('region', { name: 'File tree' }).dispatchEvent('drop', { dataTransfer });
    await tree.getByRole('button', { name: 'dropped.txt' }).waitFor({ timeout: WAIT });

    await tree.getByRole('button', { name: 'notes.md' }).click();
    const markdown = page.locator('.markdown');
    await markdown.getByRole('heading', { name: 'Release notes' }).waitFor({ timeout: WAIT });
    assert.equal(await markdown.locator('script').count(), 0);
    assert.equal(await markdown.locator('[onerror]').count(), 0);
    assert.equal(await markdown.locator('a[href^="javascript"]').count(), 0);
    assert.equal(await page.evaluate('window.hacked'), undefined);
    await screenshot(page, 'files-markdown');

    await tree.getByRole('button', { name: 'pixel.png' }).click();
    const image = page.getByRole('img', { name: 'pixel.png' });
    await image.waitFor({ timeout: WAIT });
    await waitFor(
      () =>
        image.evaluate((img: { complete: boolean; naturalWidth: number }) => img.complete && img.naturalWidth === 1),
      WAIT,
      'image',
    );

    // A file written straight on disk appears through the artifact events.
    const space = ((await apiClient(server).get('/api/spaces')).body.data as Array<{ path: string }>)[0]!;
    writeFileSync(join(space.path, 'from-disk.txt'), 'hello');
    await tree.getByRole('button', { name: 'from-disk.txt' }).waitFor({ timeout: 30_000 });
  });

  it('creates a folder, renames, moves and trashes files, and searches as you type', async () => {
    const tree = page.getByRole('tree', { name: 'Files' });
    const space = ((await apiClient(server).get('/api/spaces')).body.data as Array<{ path: string }>)[0]!;
    await page.getByRole('button', { name: 'New folder' }).click();
    await answerDialog(page, 'archive');
    await tree.getByRole('button', { name: 'archive' }).waitFor({ timeout: WAIT });

    await tree.getByRole('button', { name: 'dropped.txt' }).click();
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    await answerDialog(page, 'kept.txt');
    await tree.getByRole('button', { name: 'kept.txt' }).waitFor({ timeout: WAIT });

    await tree.getByRole('button', { name: 'kept.txt' }).click();
    await page.getByRole('button', { name: 'Move', exact: true }).click();
    await answerDialog(page, 'archive');
    await waitFor(() => existsSync(join(space.path, 'archive', 'kept.txt')), WAIT, 'moved on disk');
    await tree.getByRole('button', { name: 'archive' }).click();
    await tree.getByRole('button', { name: 'kept.txt' }).waitFor({ timeout: WAIT });

    await tree.getByRole('button', { name: 'from-disk.txt' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await answerDialog(page);
    await tree.getByRole('button', { name: 'from-disk.txt' }).waitFor({ state: 'detached', timeout: WAIT });
    assert.ok(!existsSync(join(space.path, 'from-disk.txt')));

    await page.getByLabel('Search files').fill('pix');
    const results = page.getByRole('list', { name: 'Search results' });
    await results.getByRole('button', { name: /pixel\.png/ }).waitFor({ timeout: WAIT });
    await page.getByLabel('Search files').fill('');
    await screenshot(page, 'files');
  });

  it('uploads a folder with its layout, and the tree is walked with the arrow keys', async () => {
    const tree = page.getByRole('tree', { name: 'Files' });
    const space = ((await apiClient(server).get('/api/spaces')).body.data as Array<{ path: string }>)[0]!;
    const local = mkdtempSync(join(tmpdir(), 'svc-web-folder-'));
    mkdirSync(join(local, 'photos', 'trip'), { recursive: true });
    writeFileSync(join(local, 'photos', 'index.txt'), 'list');
    writeFileSync(join(local, 'photos', 'trip', 'day1.txt'), 'sunny');
    // Into the selected folder (a click toggles it: twice leaves it open and selected).
    await tree.getByRole('button', { name: 'archive', exact: true }).click();
    await tree.getByRole('button', { name: 'archive', exact: true }).click();
    await page.getByLabel('Upload a folder').setInputFiles(join(local, 'photos'));
    await waitFor(
      () => existsSync(join(space.path, 'archive', 'photos', 'trip', 'day1.txt')),
      WAIT,
      'the folder uploaded with its relative paths',
    );
    assert.equal(readFileSync(join(space.path, 'archive', 'photos', 'index.txt'), 'utf8'), 'list');

    // Keyboard: Home, Down, Right opens a folder, Right again enters it, Left goes back up, Enter opens a file.
    const item = (name: string) => tree.getByRole('button', { name, exact: true });
    await item('archive').focus();
    await page.keyboard.press('Home');
    const focusedName = () => page.evaluate('document.activeElement?.textContent?.trim()');
    assert.equal(await focusedName(), 'archive');
    await page.keyboard.press('ArrowLeft');
    await item('photos').waitFor({ state: 'detached', timeout: WAIT });
    await page.keyboard.press('ArrowRight');
    await item('photos').waitFor({ timeout: WAIT });
    assert.equal(await focusedName(), 'archive', 'Right opens the folder, focus stays');
    await page.keyboard.press('ArrowRight');
    await waitFor(async () => (await focusedName()) !== 'archive', WAIT, 'Right enters the folder');
    const inside = String(await focusedName());
    assert.ok(['photos', 'kept.txt'].includes(inside), `inside the folder: ${inside}`);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowUp');
    assert.equal(await focusedName(), inside, 'Down then Up comes back');
    for (let i = 0; i < 3 && (await focusedName()) !== 'archive'; i++) await page.keyboard.press('ArrowLeft');
    assert.equal(await focusedName(), 'archive', 'Left goes up to the parent');
    await page.keyboard.press('ArrowLeft');
    await item('photos').waitFor({ state: 'detached', timeout: WAIT });
    await page.keyboard.press('ArrowDown');
    const next = String(await focusedName());
    assert.notEqual(next, 'archive');
    await page.keyboard.press('Enter');
    await page.getByRole('article', { name: next }).waitFor({ timeout: WAIT });
  });

  it('works at phone width and in the dark theme', async () => {
    await page.getByLabel('Theme').selectOption('dark');
    await page.setViewportSize({ width: 390, height: 800 });
    const background = () => page.evaluate('getComputedStyle(document.body).backgroundColor');
    await waitFor(async () => (await background()) === 'rgb(21, 22, 26)', WAIT, 'dark background');
    const overflow = () => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    await waitFor(async () => (await overflow()) <= 0, WAIT, 'no horizontal scrolling at phone width').catch(
      async (err: Error) => assert.fail(`${err.message}: ${await overflow()}px too wide`),
    );
    await screenshot(page, 'files-phone-dark');
    await page.getByLabel('Theme').selectOption('system');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('signs in from a ?token= link and takes the token out of the address', async () => {
    const other = await browser.newPage();
    await other.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/spaces`);
    await other.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: WAIT });
    assert.doesNotMatch(other.url(), /token=/);
    await other.getByRole('button', { name: 'Sign out' }).click();
    await other.getByLabel('Access password').waitFor({ timeout: WAIT });
    assert.equal(await other.evaluate('sessionStorage.getItem("svc-token")'), null);
    await other.close();
  });

  it('shows the lockout with its wait time from Retry-After', async () => {
    const other = await browser.newPage();
    await other.goto(`${server.url}/`);
    for (let i = 0; i < 6; i++) {
      await other.getByLabel('Access password').fill(`Wrong-Passw0rd-${i}`);
      const button = other.locator('form button[type=submit]');
      if (await button.isDisabled()) break;
      await button.click();
      await other.locator('#signin-message').filter({ hasNotText: 'Checking' }).waitFor({ timeout: WAIT });
    }
    await other.getByRole('button', { name: /Locked — try again in \d+ s/ }).waitFor({ timeout: WAIT });
    await other.getByText('Too many failed attempts. Try again later.').waitFor();
    await screenshot(other, 'sign-in-locked');
    await other.close();
  });
});

describe('web app under SVC_BASE_PATH, opened at a deep path', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    server = await startServer({ env: { SVC_BASE_PATH: '/svc' } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('loads its assets relative to the base and reaches the API and the socket under it', async () => {
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on('response', (res) => {
      if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`);
    });
    await page.goto(`${server.url}/svc/some/deep/link`);
    await signIn(page, server.password);
    await page.getByText('Live').waitFor({ timeout: WAIT });
    await page
      .getByRole('tree', { name: 'Files' })
      .or(page.getByText('No files yet'))
      .first()
      .waitFor({ timeout: WAIT });
    assert.deepEqual(failed, []);
    await page.close();
  });
});
