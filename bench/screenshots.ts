/**
 * The web app's screenshots (docs/screenshots/*.png, shown by the README and docs/web-app.md),
 * made again from scratch. Build first, then:
 *
 *     node dist/bench/screenshots.js [--out docs/screenshots]
 *
 * Starts the real server (embedded database, a temporary data folder) with the scripted model,
 * a Store catalog (the reference catalog when this checkout has it, else a small synthetic one)
 * and a webhook channel's callback server, all on loopback; seeds content through the API (spaces
 * with a Markdown file, a CSV and code, conversations, digital humans with threads and a channel,
 * a knowledge base, a team, an MCP server) and photographs each screen with Debian's chromium
 * through playwright-core at 1280×800 in the light theme, a few at 390×844 and dark.
 *
 * Names and texts are fixed, the browser's locale and time zone too, so a second run differs only
 * where the app shows a clock (message times, a run's duration). Not part of the test suite: the
 * browser tests check the screens; this only draws them. Everything it started is stopped before
 * it exits, also on a failure (exit code 1 with the step that failed).
 */
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { CHROMIUM_PATH, launchChromium, newConversation } from '#testing/browser.js';
import {
  CatalogServer,
  REFERENCE_CATALOG,
  referenceCatalogSkip,
  syntheticEntry,
  syntheticSpec,
} from '#testing/catalog-server.js';
import { ChannelCallbackServer } from '#testing/channel-callback-server.js';
import {
  type RecordedModelRequest,
  type ScriptedReply,
  ScriptedModelServer,
  textReply,
} from '#testing/scripted-model-server.js';
import { REPO_ROOT, startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

const WAIT = 60_000;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const CHANNEL_SECRET = 'screenshots-channel-secret';

// ---------------------------------------------------------------------------------------------
// The content shown in the pictures.

const LAUNCH_PLAN = `# Launch plan

The **spring release** ships on *Tuesday, 14 April*. Everything below must be green the Friday before.

## Checklist

- [x] Pricing page copy reviewed
- [x] Support team briefed
- [ ] Press kit uploaded
- [ ] Status page announcement scheduled

## Owners

| Area | Owner | State |
| --- | --- | --- |
| Website | Ada | ready |
| Support | Bob | ready |
| Press | Chen | in progress |

> Keep the release notes short: three highlights, one screenshot each.

\`\`\`sh
npm run build && npm run release -- --tag spring
\`\`\`
`;

const BUDGET_CSV = `item,owner,quarter,amount (EUR),note
Launch video,Ada,Q1,12000,"agency, two cuts"
Press trip,Chen,Q1,4500,"Berlin, Paris"
Ads (search),Bob,Q2,8000,
Ads (social),Bob,Q2,6500,"three channels"
Swag,Dana,Q2,1800,"stickers, shirts"
Conference booth,Chen,Q3,15000,"incl. travel"
`;

const PRICING_TS = `// Formats prices for the launch page (one place, so every plan reads the same).
export interface Plan {
  name: string;
  monthly: number;
  currency: 'EUR' | 'USD';
}

export function formatPrice(plan: Plan, locale = 'en-US'): string {
  const money = new Intl.NumberFormat(locale, { style: 'currency', currency: plan.currency });
  return \`\${plan.name}: \${money.format(plan.monthly)} / month\`;
}

export const PLANS: Plan[] = [
  { name: 'Starter', monthly: 9, currency: 'EUR' },
  { name: 'Team', monthly: 29, currency: 'EUR' },
];
`;

const RELEASE_NOTES = '# Release notes\n\n- Faster search\n- Dark theme\n- Offline mode\n';

const KB_SOURCES: Record<string, string> = {
  'refunds.md':
    '# Refunds\n\n## Timing\n\nRefunds are paid within 14 days to the card used for the order.\n\n## Exceptions\n\nGift cards are not refunded; they can be moved to another account once.\n',
  'shipping.md':
    '# Shipping\n\n## Countries\n\nWe ship to the EU, the UK and Switzerland.\n\n## Delivery times\n\nOrders leave the warehouse within two working days; delivery takes three to five more.\n',
  'warranty.md':
    '# Warranty\n\nEvery device has a two-year warranty. A repair within the warranty is free, shipping included; the refund rules apply when a repair is impossible.\n',
};

const PRICE_WATCHER = {
  spec_version: '1',
  name: 'Price Watcher',
  version: '1.2.0',
  author: 'alice',
  description: 'Watches a product page and reports when the price drops below your limit.',
  type: 'automation',
  system_prompt: 'You are Price Watcher. Check the price, then report.',
  config_schema: [
    { key: 'product_url', label: 'Product page', type: 'url', required: true },
    { key: 'max', label: 'Max price', type: 'number', default: 100 },
    {
      key: 'lang',
      label: 'Language',
      type: 'select',
      default: 'en',
      options: [
        { label: 'English', value: 'en' },
        { label: 'Chinese', value: 'zh' },
      ],
    },
  ],
};

const SUPPORT_DESK = {
  spec_version: '1',
  name: 'Support Desk',
  version: '1.0.0',
  author: 'alice',
  description: 'Answers customers in their chat app, with the shop’s handbook at hand.',
  type: 'automation',
  system_prompt: 'You are Support Desk. You help customers from their chat app.',
};

const teamMember = (name: string, job: string) => ({
  spec_version: '1',
  name,
  version: '1.0.0',
  author: 'alice',
  description: `${job} of the launch team.`,
  type: 'automation',
  system_prompt: `You are the ${name}. ${job}.`,
});

const QUESTION = {
  question: 'Which day should the announcement go out?',
  header: 'Day',
  options: [
    { label: 'Tuesday', description: 'the release day, with the press' },
    { label: 'Thursday', description: 'two days later, after the first feedback' },
  ],
  multiSelect: false,
};

// ---------------------------------------------------------------------------------------------
// The scripted model: each reply is chosen from the request (never from the order of requests),
// so background calls cannot shift a reply onto the wrong screen.

type WireMessage = { role: string; content: unknown };
type WireBlock = { type?: string; text?: string };

/** The text of the last message the user typed (tool results skipped), and whether a tool result came after it. */
function lastPrompt(request: RecordedModelRequest): { prompt: string; afterTool: boolean } {
  const messages = ((request.body as { messages?: WireMessage[] }).messages ?? []).filter((m) => m.role === 'user');
  let afterTool = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const content = messages[i]!.content;
    if (typeof content === 'string') return { prompt: content, afterTool };
    const blocks = Array.isArray(content) ? (content as WireBlock[]) : [];
    if (blocks.some((b) => b.type === 'tool_result')) {
      afterTool = true;
      continue;
    }
    return { prompt: blocks.map((b) => b.text ?? '').join(''), afterTool };
  }
  return { prompt: '', afterTool };
}

const systemOf = (request: RecordedModelRequest) => JSON.stringify((request.body as { system?: unknown }).system ?? '');

/** The team member a request is made for (the team prompt names it: `You are "<name>" (…`). */
const memberOf = (request: RecordedModelRequest) => /You are \\"([^"\\]+)\\" \(/.exec(systemOf(request))?.[1] ?? '';

function scriptedReplies(): (request: RecordedModelRequest) => ScriptedReply {
  let taskId = '';
  return (request) => {
    const { prompt, afterTool } = lastPrompt(request);
    const lastText = JSON.stringify((request.body as { messages?: WireMessage[] }).messages?.at(-1)?.content ?? '');
    const member = memberOf(request);
    if (member === 'Launch Lead') {
      if (lastText.includes('Start the run'))
        return {
          steps: [
            {
              toolCall: {
                name: 'team_post_task',
                input: { title: 'Write the release announcement', assignee: 'Copywriter' },
              },
            },
          ],
        };
      if (lastText.includes('taskId') && !taskId) {
        taskId = /"taskId\\?":\\?"([0-9a-f-]{36})/.exec(lastText)?.[1] ?? '';
        return {
          steps: [
            {
              toolCall: {
                name: 'team_send',
                input: { to: 'Copywriter', message: 'Please write the announcement: the task is on the board.' },
              },
            },
          ],
        };
      }
      return textReply('Handed over to the Copywriter.');
    }
    if (member === 'Copywriter') {
      if (lastText.includes('Please write the announcement'))
        return {
          steps: [
            {
              toolCall: {
                name: 'team_post_finding',
                input: { content: 'Announcement drafted: three highlights, 120 words, ready for review.' },
              },
            },
            { toolCall: { name: 'team_update_task', input: { taskId, status: 'done' } } },
          ],
        };
      return textReply('Done.');
    }
    if (prompt.startsWith('Write a function that formats')) {
      return {
        steps: [
          { thinking: 'A small pure function; Intl.NumberFormat handles the currency symbol.' },
          { text: 'Here is a formatter for the launch page:\n\n' },
          { delayMs: 50 },
          {
            text:
              '```ts\nexport function formatPrice(monthly: number, currency = "EUR"): string {\n' +
              '  const money = new Intl.NumberFormat("en-US", { style: "currency", currency });\n' +
              '  return `${money.format(monthly)} / month`;\n}\n```\n\n' +
              '`formatPrice(29)` gives **€29.00 / month**.',
          },
        ],
      };
    }
    if (prompt.startsWith('Which files mention the launch date')) {
      if (!afterTool)
        return {
          steps: [
            { thinking: 'The launch date should be in the Markdown files; I will list them first.' },
            { toolCall: { id: 'toolu_glob_md', name: 'Glob', input: { pattern: '**/*.md' } } },
          ],
        };
      return { steps: [{ text: 'Two files: `launch-plan.md` names **Tuesday, 14 April**, and ' }, { hang: true }] };
    }
    if (prompt.startsWith('Plan the announcement')) {
      if (!afterTool)
        return {
          steps: [{ toolCall: { id: 'toolu_question', name: 'AskUserQuestion', input: { questions: [QUESTION] } } }],
        };
      return textReply('Tuesday it is: the post goes out with the press at 09:00.');
    }
    if (prompt.includes('What is the price'))
      return textReply('The price is **€42.00**, below your limit of €100: I will report it.');
    if (prompt.includes('Order 1042'))
      return textReply('Order 1042 left the warehouse today; it should arrive on **Thursday**.');
    if (systemOf(request).includes('Support Desk'))
      return textReply('Hello Alice! Refunds are paid within 14 days to the card used for the order.');
    return textReply('Done.');
  };
}

// ---------------------------------------------------------------------------------------------

interface Services {
  model?: ScriptedModelServer;
  catalog?: CatalogServer;
  callback?: ChannelCallbackServer;
  server?: TestServer;
  browser?: Browser;
}

/** `--out <folder>` (default docs/screenshots of this checkout). */
function outputFolder(argv: string[]): string {
  const at = argv.indexOf('--out');
  if (at === -1) return join(REPO_ROOT, 'docs', 'screenshots');
  const value = argv[at + 1];
  if (!value || value.startsWith('--')) throw new Error('--out needs a folder');
  return resolve(value);
}

/** A Store catalog: the reference snapshot when this checkout has it, else three synthetic entries. */
async function startCatalog(): Promise<CatalogServer> {
  if (!referenceCatalogSkip()) return CatalogServer.start(REFERENCE_CATALOG);
  const catalog = await CatalogServer.start();
  const entries = [
    ['news-digest', 'News Digest', 'Collects the day’s news on your topics into one short digest every morning.'],
    ['invoice-helper', 'Invoice Helper', 'Reads invoices from a folder and keeps a spreadsheet of what is due.'],
    ['meeting-notes', 'Meeting Notes', 'Turns a meeting transcript into decisions, owners and dates.'],
  ] as const;
  for (const [slug, name, description] of entries) {
    catalog.set(`items/${slug}/spec.yaml`, syntheticSpec(slug, '1.0.0', { name, description }));
  }
  catalog.set('index.json', {
    version: 1,
    generated_at: new Date(0).toISOString(),
    source: 'https://example.test/catalog',
    apps: entries.map(([slug, name, description]) => syntheticEntry(slug, '1.0.0', { name, description })),
  });
  return catalog;
}

class Shooter {
  readonly taken: Array<{ name: string; bytes: number }> = [];
  private readonly auth: Record<string, string>;

  constructor(
    private readonly server: TestServer,
    private readonly browser: Browser,
    private readonly out: string,
    private readonly spaceId: () => string,
  ) {
    this.auth = { Authorization: `Bearer ${server.password}` };
  }

  /** An API call; a failure stops the run with the route and the server's answer. */
  async api<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const res = await fetch(`${this.server.url}${path}`, {
      method,
      headers: { ...this.auth, ...(body === undefined ? {} : { 'Content-Type': contentType }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 400)}`);
    return (JSON.parse(text) as { data: T }).data;
  }

  /**
   * A fresh browser context (its own storage) at `route`, signed in through a `?token=` link unless
   * `signedIn` is false, opened in the seeded space.
   */
  async open(
    route: string,
    options: { viewport?: { width: number; height: number }; dark?: boolean; signedIn?: boolean } = {},
  ): Promise<{ context: BrowserContext; page: Page }> {
    const context = await this.browser.newContext({
      viewport: options.viewport ?? DESKTOP,
      colorScheme: options.dark ? 'dark' : 'light',
      locale: 'en-US',
      timezoneId: 'UTC',
      reducedMotion: 'reduce',
    });
    await context.addInitScript(`localStorage.setItem('svc-space', ${JSON.stringify(this.spaceId())})`);
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    if (options.signedIn === false) {
      await page.goto(`${this.server.url}/${route}`);
    } else {
      await page.goto(`${this.server.url}/?token=${encodeURIComponent(this.server.password)}${route}`);
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await page.getByText('Live', { exact: true }).first().waitFor();
    }
    return { context, page };
  }

  /** The viewport as `<out>/<name>.png`, once fonts are in and the focus ring is gone. */
  async shot(page: Page, name: string): Promise<void> {
    await page.evaluate('document.fonts.ready');
    const path = join(this.out, `${name}.png`);
    await page.screenshot({ path, animations: 'disabled', caret: 'hide' });
    const bytes = statSync(path).size;
    this.taken.push({ name, bytes });
    console.log(`  ${name}.png  ${(bytes / 1024).toFixed(0)} KB`);
  }

  /** Runs one screen's steps in a context of its own, closed afterwards; a failure names the screen. */
  async screen(
    what: string,
    route: string,
    steps: (page: Page) => Promise<void>,
    options: Parameters<Shooter['open']>[1] = {},
  ): Promise<void> {
    const { context, page } = await this.open(route, options);
    try {
      await steps(page);
    } catch (err) {
      // What the page showed when the step failed, outside the output folder.
      const picture = join(tmpdir(), `svc-screenshots-failed-${what.replace(/[^a-z0-9]+/gi, '-')}.png`);
      await page.screenshot({ path: picture }).catch(() => undefined);
      throw new Error(`${what}: ${(err as Error).message}\nThe page at that moment: ${picture}`, { cause: err });
    } finally {
      await context.close();
    }
  }
}

/** Scrolls every scrolling box around the element so that its start or end is in view. */
async function scrollTo(target: Locator, block: 'start' | 'end'): Promise<void> {
  await target.evaluate(
    (el, where) => (el as unknown as { scrollIntoView(o: object): void }).scrollIntoView({ block: where }),
    block,
  );
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
}

async function run(out: string, services: Services): Promise<Shooter> {
  services.model = await ScriptedModelServer.start();
  services.model.respond(scriptedReplies());
  services.catalog = await startCatalog();
  services.callback = await ChannelCallbackServer.start(CHANNEL_SECRET);
  console.log('Starting the server (embedded, temporary data folder)…');
  services.server = await startServer({
    env: {
      ...services.model.serverEnv(),
      SVC_STORE_SOURCES: services.catalog.url,
      SVC_CHANNEL_ALLOW: '127.0.0.1',
    },
  });
  services.browser = await launchChromium();
  const server = services.server;
  let spaceId = '';
  const s = new Shooter(server, services.browser, out, () => spaceId);

  // Seed: two spaces, files in the first (on disk: the tree reads the folder), digital humans,
  // a knowledge base with three sources, an MCP server.
  console.log('Seeding…');
  const space = await s.api<{ id: string; path: string }>('POST', '/api/spaces', { name: 'Product launch' });
  spaceId = space.id;
  await s.api('POST', '/api/spaces', { name: 'Research notes' });
  mkdirSync(join(space.path, 'press'), { recursive: true });
  writeFileSync(join(space.path, 'launch-plan.md'), LAUNCH_PLAN);
  writeFileSync(join(space.path, 'budget.csv'), BUDGET_CSV);
  writeFileSync(join(space.path, 'pricing.ts'), PRICING_TS);
  writeFileSync(join(space.path, 'press', 'release-notes.md'), RELEASE_NOTES);
  writeFileSync(join(space.path, 'press', 'contacts.txt'), 'Chen: press@example.com\n');
  // Two deleted drafts for the Trash view.
  for (const draft of ['press/old-draft.md', 'pricing-v1.ts']) {
    writeFileSync(join(space.path, draft), '# An earlier draft\n');
    await s.api('DELETE', `/api/spaces/${spaceId}/artifacts`, { path: join(space.path, draft) });
  }

  const priceWatcher = await s.api<{ appId: string }>('POST', '/api/apps/install', {
    spec: PRICE_WATCHER,
    spaceId,
    userConfig: { product_url: 'https://shop.example/espresso-machine' },
  });
  const supportDesk = await s.api<{ appId: string }>('POST', '/api/apps/install', { spec: SUPPORT_DESK, spaceId });
  await s.api('POST', '/api/apps/install', {
    spec: teamMember('Launch Lead', 'Plans the launch and hands out the work'),
    spaceId,
  });
  await s.api('POST', '/api/apps/install', { spec: teamMember('Copywriter', 'Writes the texts'), spaceId });

  const kb = await s.api<{ id: string }>('POST', '/api/tlon', {
    name: 'Shop handbook',
    description: 'Refunds, shipping and warranty, as the support team answers them.',
  });
  for (const [name, content] of Object.entries(KB_SOURCES)) {
    await s.api('PUT', `/api/tlon/${kb.id}/upload?name=${encodeURIComponent(name)}`, content, 'text/markdown');
  }
  await s.api('POST', `/api/tlon/${kb.id}/ingest`, {});
  await waitFor(
    async () =>
      (await s.api<Array<{ state: string }>>('GET', `/api/tlon/${kb.id}/raw`)).every((r) => r.state === 'learned'),
    WAIT,
    'the knowledge base learned its sources',
  );

  console.log(`Taking screenshots into ${out}:`);
  await s.screen(
    'sign-in',
    '',
    async (page) => {
      await page.getByLabel('Access password').waitFor();
      await s.shot(page, 'sign-in');
    },
    { signedIn: false },
  );

  await s.screen('spaces', '#/spaces', async (page) => {
    await page.getByRole('list', { name: 'Spaces' }).getByText('Research notes').waitFor();
    await s.shot(page, 'spaces');
  });

  const tree = (page: Page) => page.getByRole('tree', { name: 'Files' });
  const openFile = async (page: Page, name: string) => {
    await tree(page).getByRole('button', { name, exact: true }).click();
    await page.getByRole('heading', { name, exact: true }).waitFor();
  };
  await s.screen('files', '#/files', async (page) => {
    await openFile(page, 'launch-plan.md');
    await page.locator('.markdown').getByRole('heading', { name: 'Launch plan' }).waitFor();
    await s.shot(page, 'files-markdown');
    await openFile(page, 'budget.csv');
    await page.getByRole('region', { name: 'Table of budget.csv' }).getByRole('table').waitFor();
    await s.shot(page, 'files-csv');
    await openFile(page, 'pricing.ts');
    await page.getByRole('region', { name: 'Code of pricing.ts' }).locator('.hljs-keyword').first().waitFor();
    await s.shot(page, 'files-code');
    await page.getByLabel('Search files').fill('release');
    await page
      .getByRole('list', { name: 'Search results' })
      .getByRole('button', { name: /release-notes\.md/ })
      .waitFor();
    await s.shot(page, 'files');
    await page.getByRole('button', { name: 'Trash', exact: true }).click();
    await page
      .getByRole('region', { name: 'Trash' })
      .getByRole('button', { name: 'Restore press/old-draft.md', exact: true })
      .waitFor();
    await s.shot(page, 'files-trash');
  });
  await s.screen(
    'files, phone, dark',
    '#/files',
    async (page) => {
      await openFile(page, 'launch-plan.md');
      await page.locator('.markdown').getByRole('heading', { name: 'Launch plan' }).waitFor();
      await s.shot(page, 'files-phone-dark');
    },
    { viewport: PHONE, dark: true },
  );

  let chatId = '';
  await s.screen('chat', '#/chat', async (page) => {
    chatId = await newConversation(page);
    await send(page, 'Write a function that formats our plan prices for the launch page.');
    const messages = page.getByRole('log', { name: 'Messages' });
    await messages.getByText('gives', { exact: false }).waitFor();
    await messages.locator('[data-live]').waitFor({ state: 'detached' });
    await s.shot(page, 'chat-answer');
    await send(page, 'Which files mention the launch date?');
    const live = page.locator('[data-live]');
    await live.getByText('Two files', { exact: false }).waitFor();
    const tool = live.locator('details', { hasText: 'Tool: Glob' });
    await tool.locator('summary').click();
    await tool.getByText('(done)').waitFor();
    await live.locator('details', { hasText: 'Thinking' }).locator('summary').click();
    // Opening the steps pushed the streaming text down: show the running turn whole.
    await scrollTo(live, 'end');
    await s.shot(page, 'chat');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByText('Stopped.').waitFor();
  });
  await s.screen(
    'chat, phone, dark',
    `#/chat/${chatId}`,
    async (page) => {
      await page.getByRole('log', { name: 'Messages' }).getByText('gives', { exact: false }).waitFor();
      await s.shot(page, 'chat-phone-dark');
    },
    { viewport: PHONE, dark: true },
  );
  await s.screen('chat question', '#/chat', async (page) => {
    await newConversation(page);
    await send(page, 'Plan the announcement of the spring release with me.');
    const card = page.getByRole('form', { name: 'Question from the assistant' });
    await card.getByText(QUESTION.question).waitFor();
    await s.shot(page, 'chat-question');
    await card.getByLabel(/Tuesday/).check();
    await card.getByRole('button', { name: 'Answer' }).click();
    await page.getByRole('log', { name: 'Messages' }).getByText('Tuesday it is', { exact: false }).waitFor();
  });

  await s.screen('digital humans', '#/apps', async (page) => {
    const list = page.getByRole('list', { name: 'Installed digital humans' });
    await list.getByText('Price Watcher').waitFor();
    await list.getByText('Copywriter').waitFor();
    await s.shot(page, 'digital-humans');
  });
  await s.screen('digital human', `#/apps/${priceWatcher.appId}`, async (page) => {
    await page.getByRole('heading', { name: 'Price Watcher', exact: true }).waitFor();
    await page.getByRole('tab', { name: 'Settings' }).click();
    await page.getByLabel('Product page').waitFor();
    await s.shot(page, 'digital-human-settings');
    await page.getByRole('tab', { name: 'Chat' }).click();
    await send(page, 'What is the price today?');
    const messages = page.getByRole('log', { name: 'Messages' });
    await messages.locator('strong', { hasText: '€42.00' }).waitFor();
    await s.shot(page, 'digital-human-chat');
    await page.getByRole('button', { name: 'New thread' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByRole('textbox').fill('order 1042');
    await dialog.locator('button[type=submit]').click();
    await page.getByRole('heading', { name: /order-1042/ }).waitFor();
    await send(page, 'Order 1042: where is it?');
    await messages.locator('strong', { hasText: 'Thursday' }).waitFor();
    await page
      .getByRole('list', { name: 'Threads' })
      .getByRole('button', { name: /order-1042/ })
      .waitFor();
    await s.shot(page, 'digital-human-threads');
  });
  await s.screen('channels', `#/apps/${supportDesk.appId}`, async (page) => {
    await page.getByRole('heading', { name: 'Support Desk', exact: true }).waitFor();
    await page.getByRole('tab', { name: 'Channels' }).click();
    const section = page.getByRole('region', { name: 'Channels' });
    await section.getByText('Add a channel').click();
    const form = section.getByRole('form', { name: 'New channel' });
    await form.getByLabel('Platform', { exact: true }).selectOption({ label: 'Webhook' });
    await form.getByLabel('Channel name', { exact: true }).fill('Shop chat');
    await form.getByLabel(/^Signing secret/).fill(CHANNEL_SECRET);
    await form.getByLabel(/^Callback URL/).fill(services.callback!.url);
    await form.getByRole('button', { name: 'Add channel' }).click();
    const item = section.getByRole('listitem', { name: 'Shop chat', exact: true });
    await item.getByLabel('State: online').waitFor();
    const [instance] = await s.api<Array<{ id: string }>>('GET', '/api/im-channels/instances');
    const raw = JSON.stringify({
      messageId: 'shop-m1',
      chatId: 'chat-alice',
      chatType: 'direct',
      from: { id: 'u-alice', name: 'Alice' },
      text: 'Hi! How long does a refund take?',
    });
    const res = await fetch(`${server.url}/hooks/channels/${instance!.id}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Hub-Signature-256': `sha256=${createHmac('sha256', CHANNEL_SECRET).update(raw).digest('hex')}`,
      },
      body: raw,
    });
    if (!res.ok) throw new Error(`the channel's hook answered ${res.status}`);
    await item.getByRole('list', { name: 'Threads of Shop chat' }).getByRole('button', { name: 'Alice' }).click();
    const messages = section.getByRole('list', { name: 'Messages of Alice' });
    await messages.getByText('Hello Alice!', { exact: false }).waitFor();
    // The tab strip at the top, below the app's sticky header: the channel and its chat in view.
    await scrollTo(page.getByRole('tab', { name: 'Channels' }), 'start');
    await page.evaluate('window.scrollBy(0, -70)');
    await s.shot(page, 'app-channels');
  });

  await s.screen('teams', '#/teams', async (page) => {
    await page.getByRole('heading', { name: 'Teams', exact: true }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Launch team');
    await page.getByLabel('Goal').fill('Announce the spring release on time.');
    await page.getByRole('combobox', { name: 'Lead' }).selectOption({ label: 'Launch Lead' });
    await page.getByRole('checkbox', { name: 'Copywriter' }).check();
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('heading', { name: 'Launch team' }).waitFor();
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByRole('region', { name: 'Done' }).getByText('Write the release announcement').waitFor();
    await page.getByRole('list', { name: 'Findings' }).getByText('Announcement drafted', { exact: false }).waitFor();
    await page.getByLabel('Epoch state').getByText('Ended', { exact: false }).waitFor();
    // The board is below the team's header: bring it to the top of the picture.
    await scrollTo(page.getByRole('region', { name: 'Done' }), 'start');
    // …below the app's sticky header, with the board's column titles.
    await page.evaluate('window.scrollBy(0, -110)');
    await s.shot(page, 'team-board');
  });

  await s.screen('knowledge', `#/knowledge/${kb.id}`, async (page) => {
    await page.getByRole('heading', { name: 'Shop handbook', level: 1 }).waitFor();
    await page.getByLabel('Search this knowledge base').fill('refunds');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('list', { name: 'Passages' }).getByText('refunds.md', { exact: true }).first().waitFor();
    // The query and its passages in view (the stats and the learning progress above them).
    await scrollTo(page.getByLabel('Search this knowledge base'), 'start');
    await page.evaluate('window.scrollBy(0, -160)');
    await s.shot(page, 'knowledge-search');
  });

  await s.screen('store', '#/store', async (page) => {
    const entries = page.getByRole('list', { name: 'Store entries' });
    await entries.getByRole('listitem').first().waitFor();
    await page.waitForLoadState('networkidle');
    await s.shot(page, 'store-cards');
    await entries.getByRole('listitem').first().getByRole('button').first().click();
    const detail = page.getByRole('region', { name: 'Store entry' });
    await detail.getByRole('button', { name: 'Install…' }).click();
    const form = detail.getByRole('form', { name: 'Install with settings' });
    await form.waitFor();
    // The reference catalog's first entry has Chinese defaults, which a machine without CJK
    // fonts draws as boxes: English values instead, as a person would type them.
    const englishValues: Record<string, string> = {
      'Topics to Track': 'robots, space, open source',
      'Summary Style': 'Three plain sentences per story.',
    };
    for (const [label, value] of Object.entries(englishValues)) {
      const field = form.getByLabel(label, { exact: true });
      if ((await field.count()) === 1) await field.fill(value);
    }
    await s.shot(page, 'store-install');
  });
  await s.screen(
    'store, phone',
    '#/store',
    async (page) => {
      await page.getByRole('list', { name: 'Store entries' }).getByRole('listitem').first().waitFor();
      await page.waitForLoadState('networkidle');
      await s.shot(page, 'store-cards-phone');
    },
    { viewport: PHONE },
  );

  await s.screen('settings', '#/settings', async (page) => {
    await page.getByRole('list', { name: 'Model sources' }).getByText('in use').waitFor();
    await page.getByText(/Version \d+\.\d+\.\d+/).waitFor();
    await s.shot(page, 'settings');
  });
  // Added only now: every turn would try to reach it (it does not exist).
  await s.api('POST', '/api/config', {
    mcpServers: { 'Docs Search': { type: 'http', url: 'https://docs.example.com/mcp' } },
  });
  await s.screen('settings, MCP servers', '#/settings/mcp', async (page) => {
    await page.getByRole('listitem', { name: 'Docs Search' }).waitFor();
    // The route focuses the section's heading; the picture shows the section, without the focus ring.
    await scrollTo(page.locator('#mcp-title'), 'start');
    await page.evaluate('window.scrollBy(0, -70)');
    await page.evaluate('document.activeElement?.blur()');
    await s.shot(page, 'settings-mcp');
  });
  await s.screen(
    'settings, dark',
    '#/settings',
    async (page) => {
      await page.getByRole('list', { name: 'Model sources' }).getByText('in use').waitFor();
      await s.shot(page, 'settings-dark');
    },
    { dark: true },
  );

  // Last: five wrong passwords lock this address out of signing in.
  await s.screen(
    'sign-in locked',
    '',
    async (page) => {
      for (let i = 0; i < 6; i++) {
        await page.getByLabel('Access password').fill(`Wrong-Passw0rd-${i}`);
        const button = page.locator('form button[type=submit]');
        if (await button.isDisabled()) break;
        await button.click();
        await page.locator('#signin-message').filter({ hasNotText: 'Checking' }).waitFor();
      }
      await page.getByText('Too many failed attempts. Try again later.').waitFor();
      await s.shot(page, 'sign-in-locked');
    },
    { signedIn: false },
  );
  return s;
}

async function main(): Promise<number> {
  let out: string;
  try {
    out = outputFolder(process.argv.slice(2));
  } catch (err) {
    console.error(`screenshots: ${(err as Error).message}\nUsage: node dist/bench/screenshots.js [--out <folder>]`);
    return 2;
  }
  if (!CHROMIUM_PATH) {
    console.error(
      'screenshots: chromium is not installed. Install Debian’s (apt-get install chromium) or set CHROMIUM_PATH.',
    );
    return 1;
  }
  if (!existsSync(join(REPO_ROOT, 'dist', 'web', 'index.html'))) {
    console.error('screenshots: the web app is not built (dist/web). Run `npm run build` first.');
    return 1;
  }
  // The embedded database always: the pictures do not depend on where records live.
  process.env.SVC_TEST_MODE = 'embedded';
  mkdirSync(out, { recursive: true });
  const services: Services = {};
  let code = 0;
  try {
    const shooter = await run(out, services);
    const large = shooter.taken.filter((t) => t.bytes > 250 * 1024);
    console.log(`${shooter.taken.length} screenshots written.`);
    if (large.length > 0) console.log(`Over 250 KB: ${large.map((t) => t.name).join(', ')}`);
  } catch (err) {
    console.error(`screenshots failed: ${(err as Error).message}`);
    const output = services.server?.output() ?? '';
    if (output) console.error(`Server output (last lines):\n${output.split('\n').slice(-15).join('\n')}`);
    code = 1;
  } finally {
    await services.browser?.close().catch(() => undefined);
    await services.server?.stop().catch(() => undefined);
    await services.callback?.close().catch(() => undefined);
    await services.catalog?.stop().catch(() => undefined);
    await services.model?.close().catch(() => undefined);
  }
  return code;
}

process.exitCode = await main();
