import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import type { BrowserLivePage, BrowserLoginSite } from '#contracts/browser.js';
import { apiClient } from '#testing/api-client.js';
import { browserSkipReason, launchChromium, screenshot } from '#testing/browser.js';
import { LoginSite } from '#testing/login-site.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { sleep, waitFor } from '#testing/wait.js';

const WAIT = 30_000;

const spec = (siteUrl: string) => `name: Site Helper
version: 1.0.0
author: t
description: Works on a site that needs a sign-in.
type: automation
system_prompt: Help.
browser_login:
  - url: ${siteUrl}
    label: Loopback site
`;

/** How many frames the live view has drawn (its canvas counts them). */
const framesOf = async (canvas: Locator): Promise<number> => Number(await canvas.getAttribute('data-frames'));
/** A digest of the canvas's pixels (0 while nothing is drawn), to see that what it shows changed. */
const pixelsOf = (canvas: Locator): Promise<number> =>
  canvas.evaluate((element) => {
    const c = element as unknown as {
      width: number;
      height: number;
      getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
    };
    const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let drawn = false;
    let hash = 0;
    for (let i = 0; i < data.length; i += 1) {
      if (i % 4 === 3 && data[i] !== 0) drawn = true;
      hash = (hash * 31 + data[i]!) | 0;
    }
    return drawn ? hash || 1 : 0;
  });

/**
 * Chromium inside Chromium: the test's Chromium drives the web app, whose server's AI browser
 * runs a second Chromium on a loopback site this test serves; the live view shows that page
 * in the first one, and the person's clicks and keys travel back to it.
 */
describe('web app in Chromium: the AI browser (sign-in and live view)', { skip: browserSkipReason() }, () => {
  let server: TestServer;
  let model: ScriptedModelServer;
  let site: LoginSite;
  let browser: Browser;
  let page: Page;
  let spaceId: string;
  let appId: string;
  /** Waits for the live view in `container` to draw a frame; a failure says what the view and server showed. */
  const frameDrawn = (container: Locator, what: string): Promise<void> =>
    waitFor(
      async () =>
        Number(
          await container
            .locator('canvas')
            .getAttribute('data-frames', { timeout: 1000 })
            .catch(() => 0),
        ) > 0,
      WAIT,
      what,
    ).catch(async (err: Error) => {
      const text = await container
        .innerText({ timeout: 1000 })
        .catch((e: Error) => `(not shown: ${e.message.split('\n')[0]})`);
      const log = server
        .output()
        .split('\n')
        .filter((l) => /"level":"(warn|error)"/.test(l))
        .slice(-80);
      throw new Error(
        `${err.message}\nshown: ${text}\nbody: ${(await page.locator('body').innerText()).slice(0, 1500)}\n${log.join('\n')}`,
        { cause: err },
      );
    });

  before(async () => {
    site = await LoginSite.start();
    model = await ScriptedModelServer.start();
    // The operator allow-list lets the AI browser reach the test's loopback site.
    server = await startServer({ env: { ...model.serverEnv(), SVC_BROWSER_ALLOW: '127.0.0.1' } });
    spaceId = (await apiClient(server).get('/api/spaces/svc')).body.data.id;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}#/chat`);
    await page.getByRole('button', { name: 'New conversation', exact: true }).waitFor({ timeout: WAIT });
    await page.getByText('Live').waitFor({ timeout: WAIT });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await model?.close();
    await site?.close();
  });

  it('signs a digital human in through the live view: frames arrive, the typed name is submitted, Done keeps the cookie', async () => {
    const imported = await apiClient(server).post('/api/apps/import-spec', { spaceId, yamlContent: spec(site.url) });
    assert.equal(imported.status, 200, JSON.stringify(imported.body));
    appId = imported.body.data.appId as string;
    await page.goto(`${server.url}/#/apps/${appId}`);
    await page.getByRole('tab', { name: 'Browser' }).click();
    const sites = page.getByRole('list', { name: 'Sign-in sites' });
    await sites.getByText('not signed in').waitFor({ timeout: WAIT });

    await page.getByRole('button', { name: 'Sign in to Loopback site' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sign in to Loopback site' });
    await dialog.waitFor({ timeout: WAIT });
    const canvas = dialog.locator('canvas');
    await canvas.waitFor({ timeout: WAIT });
    await waitFor(async () => (await framesOf(canvas)) > 0, WAIT, 'a frame of the sign-in page is drawn');
    const first = await pixelsOf(canvas);
    assert.notEqual(first, 0, 'the canvas shows the page');

    // The page's text box fills its top; a click there focuses it, the keys type into it.
    await dialog.getByRole('button', { name: 'Take control' }).click();
    const controlled = dialog.getByRole('application', { name: /Controlled view of the sign-in page/ });
    await controlled.waitFor({ timeout: WAIT });
    const box = (await controlled.boundingBox())!;
    await controlled.click({ position: { x: box.width / 2, y: box.height * 0.2 } });
    await page.keyboard.type('alice');
    await waitFor(async () => (await pixelsOf(canvas)) !== first, WAIT, 'the typed name shows in a new frame');
    // Lets the frame with the whole name arrive before the picture (nothing is timed).
    await sleep(1000);
    await screenshot(page, 'browser-sign-in');
    await page.keyboard.press('Enter');
    await waitFor(() => site.submitted.includes('alice'), WAIT, 'the form is submitted with the typed name');
    await waitFor(() => site.welcomed.includes('alice'), WAIT, 'the welcome page came back with the session');

    await dialog.getByRole('button', { name: 'Done', exact: true }).click();
    await dialog.waitFor({ state: 'detached', timeout: WAIT });
    await sites.getByText('signed in', { exact: true }).waitFor({ timeout: WAIT });
    const listed = (await apiClient(server).get(`/api/apps/${appId}/browser-login`)).body.data as BrowserLoginSite[];
    assert.deepEqual(listed, [{ url: site.url, label: 'Loopback site', signedIn: true }]);
  });

  it('in a chat: the AI browser switch opens the toolset, the page the model opens is shown live, Stop page closes it', async () => {
    await page.goto(`${server.url}/#/chat`);
    const beforeUrl = page.url();
    await page.getByRole('button', { name: 'New conversation', exact: true }).click();
    await page.waitForURL((url) => url.toString() !== beforeUrl && /#\/chat\/[0-9a-f-]{36}$/.test(url.toString()), {
      timeout: WAIT,
    });
    const conversationId = page.url().split('/').pop()!;

    const toggle = page.getByRole('button', { name: 'AI browser off' });
    await toggle.click();
    await page.getByRole('button', { name: 'AI browser on' }).waitFor({ timeout: WAIT });
    const toolsets = (await apiClient(server).post('/api/agent/toolsets/list', { spaceId, conversationId })).body
      .data as Array<{ id: string; open: boolean }>;
    assert.equal(toolsets.find((t) => t.id === 'ai-browser')?.open, true);

    model.enqueue(
      {
        steps: [{ toolCall: { id: 'toolu_nav', name: 'mcp__ai-browser__browser_navigate', input: { url: site.url } } }],
      },
      { steps: [{ text: 'The sign-in page is open.' }] },
    );
    await page.getByLabel('Message', { exact: true }).fill('Open the site');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const messages = page.getByRole('log', { name: 'Messages' });
    await messages
      .getByText('The sign-in page is open.')
      .waitFor({ timeout: WAIT })
      .catch(async (err: Error) => {
        // What the server and the model saw, so a failure says where the turn stopped.
        const turn = (await apiClient(server).get(`/api/agent/session/${conversationId}`)).body;
        const log = server
          .output()
          .split('\n')
          .filter((l) => /"level":"(warn|error)"|AI browser|browser/i.test(l))
          .slice(-30);
        throw new Error(
          `${err.message}\nmodel requests: ${model.requests.length}; session: ${JSON.stringify(turn).slice(0, 1500)}\n` +
            `last model request: ${JSON.stringify(model.requests.at(-1)?.body ?? null).slice(-1500)}\n${log.join('\n')}`,
          { cause: err },
        );
      });
    // The model's tool saw the browser (not "unknown tool").
    const sent = JSON.stringify(model.requests.at(-1)!.body);
    assert.ok(sent.includes('Created page: Sign in'), 'the navigate tool opened the page');

    const panel = page.getByRole('region', { name: 'AI browser page' });
    await panel.waitFor({ timeout: WAIT });
    await panel.getByText('Sign in', { exact: true }).waitFor({ timeout: WAIT });
    await panel.getByText(site.url).waitFor({ timeout: WAIT });
    await frameDrawn(panel, 'a frame of the page is drawn in the chat');
    await screenshot(page, 'browser-live-view');

    // At phone width the page's view fits the screen: nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await panel.scrollIntoViewIfNeeded();
    // Also names what reaches past the screen's edge, so a failure says which element it is.
    const widths = await page.evaluate<{ page: number; view: number; past: string[] }>(
      `({ page: document.documentElement.scrollWidth, view: document.querySelector('canvas').getBoundingClientRect().right,
          past: [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 390)
            .slice(0, 8).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right * 10) / 10 + ' ' + (e.textContent || '').slice(0, 60)) })`,
    );
    assert.ok(widths.page <= 390 && widths.view <= 390, JSON.stringify(widths));
    await page.setViewportSize({ width: 1280, height: 900 });

    await panel.getByRole('button', { name: 'Stop page' }).click();
    await panel.waitFor({ state: 'detached', timeout: WAIT });
    const pages = (await apiClient(server).get(`/api/browser/pages?conversationId=${conversationId}`)).body
      .data as BrowserLivePage[];
    assert.deepEqual(pages, []);
  });

  it("lists the page a digital human's chat opened on its Browser tab; Watch shows it live, Stop page closes it", async () => {
    model.enqueue(
      {
        steps: [
          { toolCall: { id: 'toolu_app_nav', name: 'mcp__ai-browser__browser_navigate', input: { url: site.url } } },
        ],
      },
      { steps: [{ text: 'Opened it.' }] },
    );
    const sent = await apiClient(server).post(`/api/apps/${appId}/chat/send`, { spaceId, message: 'Open the site' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    await waitFor(
      async () => {
        const pages = (await apiClient(server).get(`/api/browser/pages?spaceId=${spaceId}`)).body
          .data as BrowserLivePage[];
        // Listed with its title: the tab names its Watch button after it.
        return pages.some((p) => p.conversationId === `app-chat:${appId}` && p.title === 'Sign in');
      },
      WAIT,
      "the digital human's chat has a page",
    );

    await page.goto(`${server.url}/#/apps/${appId}`);
    await page.getByRole('tab', { name: 'Browser' }).click();
    await page.getByRole('button', { name: 'Watch Sign in' }).click();
    const dialog = page.getByRole('dialog', { name: 'Live page' });
    await frameDrawn(dialog, "a frame of the digital human's page is drawn");
    await dialog.getByText(site.url).waitFor({ timeout: WAIT });
    await dialog.getByRole('button', { name: 'Stop page' }).click();
    await dialog.waitFor({ state: 'detached', timeout: WAIT });
    await page.getByText('No page is open for its chat or runs.').waitFor({ timeout: WAIT });
  });
});
