import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { apiClient, okData } from '#testing/api-client.js';
import { axeViolations, browserSkipReason, formatViolations, openSignedIn, screenshot } from '#testing/browser.js';
import { startServer, type TestServer } from '#testing/test-server.js';

const WAIT = 30_000;

/** Issue 31, restore from trash: Files has a Trash view listing what was deleted, with Restore and Delete forever. */
describe('web app in Chromium: restore from the trash', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const tree = () => page.getByRole('tree', { name: 'Files' });
  const treeItem = (name: string) => tree().getByRole('button', { name, exact: true });
  const trashView = () => page.getByRole('region', { name: 'Trash' });
  const deleted = () => trashView().getByRole('list', { name: 'Deleted files' });

  /** Selects `name` in the tree and moves it to the trash with Delete. */
  async function deleteFromTree(name: string): Promise<void> {
    await treeItem(name).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.locator('dialog[open]').getByRole('button', { name: 'Move to trash' }).click();
    await treeItem(name).waitFor({ state: 'detached', timeout: WAIT });
  }
  async function setTheme(theme: 'light' | 'dark'): Promise<void> {
    await page.getByLabel('Theme').selectOption(theme);
    await page.locator(`html[data-theme="${theme}"]`).waitFor({ state: 'attached', timeout: WAIT });
  }

  before(async () => {
    server = await startServer();
    ({ browser, page } = await openSignedIn(server, { route: '#/files' }));
    await page.getByLabel('Upload files').setInputFiles([
      { name: 'notes.md', mimeType: 'text/markdown', buffer: Buffer.from('# Notes\n') },
      { name: 'keep.txt', mimeType: 'text/plain', buffer: Buffer.from('kept\n') },
    ]);
    await treeItem('notes.md').waitFor({ timeout: WAIT });
    await treeItem('keep.txt').waitFor({ timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('deletes a file, restores it from the Trash view (by keyboard) and sees it back in the tree', async () => {
    await deleteFromTree('notes.md');
    // The Trash button follows the search box in the tab order; Enter opens the view.
    await page.getByLabel('Search files').focus();
    await page.keyboard.press('Tab');
    const trashButton = page.getByRole('button', { name: 'Trash', exact: true });
    await page.locator('button[aria-pressed]:focus', { hasText: 'Trash' }).waitFor({ timeout: WAIT });
    await page.keyboard.press('Enter');
    assert.equal(await trashButton.getAttribute('aria-pressed'), 'true');
    await deleted().getByText('notes.md', { exact: true }).waitFor({ timeout: WAIT });
    await trashView()
      .getByText(/^Deleted .*, 8 B$/)
      .waitFor({ timeout: WAIT });
    for (const theme of ['light', 'dark'] as const) {
      await setTheme(theme);
      const violations = await axeViolations(page);
      assert.equal(violations.length, 0, `Trash view (${theme}):\n${formatViolations(violations)}`);
    }
    await setTheme('light');
    await screenshot(page, 'files-trash');

    const restore = trashView().getByRole('button', { name: 'Restore notes.md', exact: true });
    await restore.focus();
    await page.keyboard.press('Enter');
    await treeItem('notes.md').waitFor({ timeout: WAIT });
    await trashView().getByText('Restored notes.md.').waitFor({ timeout: WAIT });
    await trashView().getByText('The trash is empty.').waitFor({ timeout: WAIT });
    // It is the file it was.
    await treeItem('notes.md').click();
    await page.getByRole('heading', { name: 'Notes', level: 1 }).waitFor({ timeout: WAIT });
    await trashView().waitFor({ state: 'detached', timeout: WAIT });
  });

  it('offers another name when the original path is taken, and deletes forever', async () => {
    await deleteFromTree('keep.txt');
    // A new keep.txt takes the place of the deleted one.
    const temp = okData<{ id: string; path: string }>(await apiClient(server).get('/api/spaces/svc'));
    okData(await apiClient(server).post(`/api/spaces/${temp.id}/artifacts/file`, { name: 'keep.txt', content: 'new' }));
    await treeItem('keep.txt').waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Trash', exact: true }).click();
    await trashView().getByRole('button', { name: 'Restore keep.txt', exact: true }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByRole('heading', { name: 'Something is at keep.txt now' }).waitFor({ timeout: WAIT });
    assert.equal(await dialog.getByRole('textbox').inputValue(), 'keep (restored).txt');
    await dialog.getByRole('button', { name: 'Restore' }).click();
    await treeItem('keep (restored).txt').waitFor({ timeout: WAIT });
    await treeItem('keep.txt').waitFor({ timeout: WAIT });

    await deleteFromTree('keep (restored).txt');
    await page.getByRole('button', { name: 'Trash', exact: true }).click();
    // At phone width the view fits: nothing scrolls sideways, its buttons on screen.
    await page.setViewportSize({ width: 390, height: 844 });
    const forever = trashView().getByRole('button', { name: 'Delete forever: keep (restored).txt', exact: true });
    await forever.scrollIntoViewIfNeeded();
    assert.ok((await page.evaluate<number>('document.documentElement.scrollWidth')) <= 390, 'no sideways scroll');
    const box = await forever.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, JSON.stringify(box));
    await screenshot(page, 'files-trash-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
    await trashView().getByRole('button', { name: 'Delete forever: keep (restored).txt', exact: true }).click();
    await page.locator('dialog[open]').getByRole('button', { name: 'Delete forever' }).click();
    await trashView().getByText('The trash is empty.').waitFor({ timeout: WAIT });
    assert.deepEqual(okData(await apiClient(server).get(`/api/spaces/${temp.id}/trash`)), []);
  });
});
