import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, browserSkipReason, formatViolations, openSignedIn, screenshot } from '#testing/browser.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

const WAIT = 30_000;

/** A one-page PDF with a correct cross-reference table (its offsets counted here). */
function minimalPdf(): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

const PEOPLE_CSV = 'name,city,note\r\nAda,"London, UK","said ""hi"""\r\nBob,Paris,"two\nlines"\r\n';
const HELLO_TS =
  '// Greets.\nexport function greet(name: string): string {\n  return `hi ${name}`;\n}\nconst answer = 42;\n';
/** 1,205 data rows, wide ones (long cells in many columns): only the first 1,000 are shown. */
const BIG_CSV = [
  Array.from({ length: 12 }, (_, i) => `column_${i}`).join(','),
  ...Array.from({ length: 1205 }, (_, r) =>
    Array.from({ length: 12 }, (_, i) => `row-${r}-value-in-column-${i}-long`).join(','),
  ),
].join('\n');

/** Issue 31, file previews: PDF in the browser's viewer, CSV and TSV as tables, highlighted code. */
describe('web app in Chromium: file previews', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const tree = () => page.getByRole('tree', { name: 'Files' });
  const openFile = async (name: string) => {
    await tree().getByRole('button', { name, exact: true }).click();
    await page.getByRole('heading', { name, exact: true }).waitFor({ timeout: WAIT });
  };
  const assertNoViolations = async (where: string) => {
    const violations = await axeViolations(page);
    assert.equal(violations.length, 0, `${where}:\n${formatViolations(violations)}`);
  };

  before(async () => {
    server = await startServer();
    ({ browser, page } = await openSignedIn(server, { route: '#/files' }));
    await page.getByLabel('Upload files').setInputFiles([
      { name: 'report.pdf', mimeType: 'application/pdf', buffer: minimalPdf() },
      { name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(PEOPLE_CSV) },
      { name: 'hello.ts', mimeType: 'text/plain', buffer: Buffer.from(HELLO_TS) },
      { name: 'big.csv', mimeType: 'text/csv', buffer: Buffer.from(BIG_CSV) },
      { name: 'scores.tsv', mimeType: 'text/tab-separated-values', buffer: Buffer.from('team\tscore\nred, blue\t3\n') },
    ]);
    for (const name of ['report.pdf', 'people.csv', 'hello.ts', 'big.csv', 'scores.tsv'])
      await tree().getByRole('button', { name, exact: true }).waitFor({ timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('shows a PDF in a frame from a blob: URL typed application/pdf', async () => {
    // Records the blob: URLs the app gives up (evaluated through the debugging protocol, as axe is).
    await page.evaluate(
      '(() => { const revoke = URL.revokeObjectURL; globalThis.revoked = []; URL.revokeObjectURL = (u) => { revoked.push(u); revoke.call(URL, u); }; })()',
    );
    const downloads: string[] = [];
    const countDownload = (r: { url(): string }) => {
      if (r.url().includes('/api/artifacts/download')) downloads.push(r.url());
    };
    page.on('request', countDownload);
    await openFile('report.pdf');
    const frame = page.getByTitle('PDF preview of report.pdf');
    await frame.waitFor({ timeout: WAIT });
    const src = String(await frame.getAttribute('src'));
    assert.match(src, /^blob:/);
    // The frame holds a document the browser took as a PDF (a fetch of the blob: URL is refused by the app's CSP).
    await waitFor(() => page.frames().some((f) => f.url() === src), WAIT, 'a frame at the blob: URL');
    const framed = page.frames().find((f) => f.url() === src)!;
    await waitFor(async () => (await framed.evaluate('document.readyState')) === 'complete', WAIT, 'the PDF loaded');
    assert.equal(await framed.evaluate('document.contentType'), 'application/pdf');
    page.off('request', countDownload);
    assert.equal(downloads.length, 1, `the PDF's bytes are fetched once (${downloads.join(', ')})`);
    await assertNoViolations('PDF preview');
    await screenshot(page, 'files-pdf');

    // Another file: the frame goes and its blob: URL is given up.
    await openFile('people.csv');
    await frame.waitFor({ state: 'detached', timeout: WAIT });
    await waitFor(
      async () => (await page.evaluate<string[]>('globalThis.revoked')).includes(src),
      WAIT,
      'the blob: URL revoked',
    );
  });

  it('shows a CSV as a table with its header, quoted commas and quotes intact, and Edit as text', async () => {
    await openFile('people.csv');
    const table = page.getByRole('region', { name: 'Table of people.csv' }).getByRole('table');
    await table.waitFor({ timeout: WAIT });
    assert.deepEqual(await table.locator('thead th').allTextContents(), ['name', 'city', 'note']);
    const rows = table.locator('tbody tr');
    assert.equal(await rows.count(), 2);
    assert.deepEqual(await rows.nth(0).locator('td').allTextContents(), ['Ada', 'London, UK', 'said "hi"']);
    assert.deepEqual(await rows.nth(1).locator('td').allTextContents(), ['Bob', 'Paris', 'two\nlines']);
    await page.getByText('2 rows.').waitFor({ timeout: WAIT });
    await assertNoViolations('CSV preview');
    await screenshot(page, 'files-csv');

    await page.getByRole('button', { name: 'Edit as text' }).click();
    const editor = page.getByLabel('Content of people.csv');
    assert.equal(await editor.inputValue(), PEOPLE_CSV.replace(/\r\n/g, '\n'));
    await page.getByRole('button', { name: 'Cancel' }).click();
    await table.waitFor({ timeout: WAIT });

    await openFile('scores.tsv');
    const tsv = page.getByRole('region', { name: 'Table of scores.tsv' }).getByRole('table');
    await tsv.waitFor({ timeout: WAIT });
    assert.deepEqual(await tsv.locator('thead th').allTextContents(), ['team', 'score']);
    assert.deepEqual(await tsv.locator('tbody td').allTextContents(), ['red, blue', '3']);
  });

  it('shows the first 1,000 rows of a long CSV, scrolling sideways in its box only at phone width', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await openFile('big.csv');
      const box = page.getByRole('region', { name: 'Table of big.csv' });
      await box.waitFor({ timeout: WAIT });
      assert.equal(await box.locator('tbody tr').count(), 1000);
      await page.getByText('Showing the first 1,000 of 1,205 rows: 205 more.').waitFor({ timeout: WAIT });
      const widths = await box.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      assert.ok(widths.scroll > widths.client, `the table scrolls inside its box: ${JSON.stringify(widths)}`);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      assert.ok(overflow <= 0, `the page does not scroll sideways: ${overflow}px too wide`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('shows code highlighted and read-only, with Edit opening the editor', async () => {
    await openFile('hello.ts');
    const code = page.getByRole('region', { name: 'Code of hello.ts' });
    await code.waitFor({ timeout: WAIT });
    const keywords = await code.locator('.hljs-keyword').allTextContents();
    assert.ok(keywords.includes('function') && keywords.includes('export'), `keywords: ${keywords.join(' ')}`);
    assert.ok((await code.locator('.hljs-comment').count()) > 0, 'a comment token');
    assert.equal(await code.locator('code').textContent(), HELLO_TS, 'the text is whole');
    assert.equal(await page.locator('#editor').count(), 0, 'no editor until Edit');
    await assertNoViolations('code preview');
    await page.getByLabel('Theme').selectOption('dark');
    await waitFor(
      async () => (await page.evaluate<string>('document.documentElement.dataset.theme')) === 'dark',
      WAIT,
      'the dark theme',
    );
    await assertNoViolations('code preview, dark theme');
    await page.getByLabel('Theme').selectOption('system');
    await screenshot(page, 'files-code');

    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const editor = page.getByLabel('Content of hello.ts');
    assert.equal(await editor.inputValue(), HELLO_TS);
    await editor.fill(`${HELLO_TS}const more = 'saved';\n`);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor({ timeout: WAIT });
    await code.getByText("'saved'").waitFor({ timeout: WAIT });
    assert.ok((await code.locator('.hljs-string').count()) > 0, 'the saved text is highlighted too');
  });
});
