import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { crc32, deflateSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { browserSkipReason, launchChromium } from '#testing/browser.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';

const WAIT = 30_000;

/** A PNG of one colour, `width` × `height` (RGB, no filter): what a camera-sized screenshot looks like to the app. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0x5a)]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

interface ImagePart {
  type: string;
  source?: { media_type: string; data: string };
}
/** The image parts of the last user message of the model's last request. */
function lastImageParts(model: ScriptedModelServer): ImagePart[] {
  const body = model.requests.at(-1)!.body as unknown as { messages: Array<{ role: string; content: ImagePart[] }> };
  return body.messages
    .filter((m) => m.role === 'user')
    .at(-1)!
    .content.filter((b) => b.type === 'image');
}

describe(
  'web app in Chromium: attachments uploaded as files, big photos downscaled, pasted images',
  {
    skip: browserSkipReason(),
  },
  () => {
    let server: TestServer;
    let model: ScriptedModelServer;
    let browser: Browser;
    let page: Page;
    let spacePath: string;
    const composer = () => page.getByLabel('Message', { exact: true });
    const messages = () => page.getByRole('log', { name: 'Messages' });
    const attachmentFiles = () => readdirSync(join(spacePath, 'attachments')).sort();

    async function newConversation(): Promise<void> {
      const before = page.url();
      await page.getByRole('button', { name: 'New conversation', exact: true }).click();
      await page.waitForURL((url) => url.toString() !== before && /#\/chat\/[0-9a-f-]{36}$/.test(url.toString()), {
        timeout: WAIT,
      });
      await page.locator('[role=log] .msg').first().waitFor({ state: 'detached', timeout: WAIT });
      await composer().waitFor({ timeout: WAIT });
    }
    /** The size of an image in the space, as the browser decodes it. */
    const decodedSize = (relativePath: string) =>
      page.evaluate(`(async () => {
        const res = await fetch('/api/artifacts/download?path=' + encodeURIComponent(${JSON.stringify(join(spacePath, relativePath))}), { headers: { Authorization: 'Bearer ' + sessionStorage.getItem('svc-token') } });
        const bitmap = await createImageBitmap(await res.blob());
        return { width: bitmap.width, height: bitmap.height, type: res.headers.get('content-type') };
      })()`);

    before(async () => {
      model = await ScriptedModelServer.start();
      server = await startServer({ env: model.serverEnv() });
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/chat`);
      await page.getByRole('button', { name: 'New conversation', exact: true }).waitFor({ timeout: WAIT });
      await page.getByText('Live').waitFor({ timeout: WAIT });
      spacePath = await page.evaluate(`(async () => {
        const res = await fetch('/api/spaces/svc', {
          headers: { Authorization: 'Bearer ' + sessionStorage.getItem('svc-token') },
        });
        return (await res.json()).data.path;
      })()`);
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
      await model?.close();
    });

    it('a photo above 2048 px is downscaled, uploaded into the space, and reaches the model as an image', async () => {
      await newConversation();
      const photo = png(3600, 2400);
      await page.getByLabel('Attach file').setInputFiles({ name: 'holiday.png', mimeType: 'image/png', buffer: photo });
      const attached = page.getByRole('list', { name: 'Attached files' });
      await attached.getByText('holiday.webp').waitFor({ timeout: WAIT });
      model.enqueue({ steps: [{ text: 'A grey holiday.' }] });
      await composer().fill('What is in this photo?');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await messages().getByText('A grey holiday.').waitFor({ timeout: WAIT });
      await attached.waitFor({ state: 'detached', timeout: WAIT });

      const [stored] = attachmentFiles().filter((name) => name.endsWith('-holiday.webp'));
      assert.ok(stored, `uploaded into attachments/: ${attachmentFiles().join(', ')}`);
      assert.deepEqual(await decodedSize(`attachments/${stored}`), { width: 2048, height: 1365, type: 'image/webp' });
      const [image] = lastImageParts(model);
      assert.equal(image?.source?.media_type, 'image/webp');
      assert.equal(
        image?.source?.data,
        readFileSync(join(spacePath, 'attachments', stored)).toString('base64'),
        'the model got the uploaded file',
      );
      // Shown in the conversation, and again after a reload (the message keeps the reference).
      await messages().getByRole('img', { name: 'Attached image 1' }).waitFor({ timeout: WAIT });
      await page.reload();
      await messages().getByText('A grey holiday.').waitFor({ timeout: WAIT });
      await messages().getByRole('img', { name: 'Attached image 1' }).waitFor({ timeout: WAIT });
    });

    it('an image pasted into the message box is attached and sent', async () => {
      await newConversation();
      const small = png(40, 30);
      await composer().click();
      // What a browser does when an image is pasted: a paste event whose clipboard data holds the file.
      await page.evaluate(`(() => {
        const bytes = Uint8Array.from(atob('${small.toString('base64')}'), (c) => c.charCodeAt(0));
        const data = new DataTransfer();
        data.items.add(new File([bytes], 'pasted.png', { type: 'image/png' }));
        document.getElementById('composer').dispatchEvent(
          new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }),
        );
      })()`);
      await page.getByRole('list', { name: 'Attached files' }).getByText('pasted.png').waitFor({ timeout: WAIT });
      model.enqueue({ steps: [{ text: 'A small grey box.' }] });
      await composer().fill('And this one?');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await messages().getByText('A small grey box.').waitFor({ timeout: WAIT });
      const [image] = lastImageParts(model);
      assert.equal(image?.source?.media_type, 'image/png');
      assert.equal(image?.source?.data, small.toString('base64'), 'small enough: sent as pasted');
      assert.ok(attachmentFiles().some((name) => name.endsWith('-pasted.png')));
    });

    it('a failed upload sends nothing, says so, and offers no Retry of the previous failed message', async () => {
      await newConversation();
      model.enqueue({ status: 400, error: 'scripted refusal' });
      await composer().fill('First try');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      const retry = page.getByRole('button', { name: 'Retry', exact: true });
      await retry.waitFor({ timeout: WAIT });
      const requests = model.requests.length;
      await page.route('**/artifacts/upload?**', (route) =>
        route.fulfill({
          status: 507,
          contentType: 'application/json',
          body: JSON.stringify({ success: false, error: 'No space left on the disk' }),
        }),
      );
      try {
        await page
          .getByLabel('Attach file')
          .setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hi') });
        await composer().fill('Second, with notes');
        await page.getByRole('button', { name: 'Send', exact: true }).click();
        await page.getByText('Upload failed: No space left on the disk').waitFor({ timeout: WAIT });
        await page.getByText('your message was not sent').waitFor({ timeout: WAIT });
        assert.equal(await retry.count(), 0, 'Retry would send "First try" again');
        assert.equal(await composer().inputValue(), 'Second, with notes');
        assert.equal(model.requests.length, requests);
      } finally {
        await page.unroute('**/artifacts/upload?**');
      }
      // Sent again once the upload works: the note reaches the model by name.
      model.enqueue({ steps: [{ text: 'Read them.' }] });
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await messages().getByText('Read them.').waitFor({ timeout: WAIT });
      const sent = JSON.stringify(model.requests.at(-1)!.body);
      assert.match(sent, /\[Attached file: attachments\/[^\]]*-notes\.txt/);
    });
  },
);
