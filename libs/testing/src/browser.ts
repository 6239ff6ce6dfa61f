import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { REPO_ROOT, type TestServer } from './test-server.js';
import { testMode } from './test-env.js';

/** Debian's chromium (`apt-get install chromium`); CHROMIUM_PATH overrides. No browser is downloaded. */
export const CHROMIUM_PATH =
  process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

/**
 * Where the browser tests write their screenshots: the tracked `docs/screenshots/` (shown in
 * the README) only when UPDATE_SCREENSHOTS=1 asks for a refresh; otherwise a temporary folder,
 * so an ordinary test run leaves the working tree clean.
 */
export const SCREENSHOT_DIR =
  process.env.UPDATE_SCREENSHOTS === '1' ? join(REPO_ROOT, 'docs/screenshots') : join(tmpdir(), 'svc-screenshots');

/**
 * Why the browser tests are skipped here, or false to run them. They drive the app through
 * the same HTTP API and socket in either mode, so they run in the embedded pass only; a
 * missing chromium skips them with a message unless REQUIRE_BROWSER=1 (CI) makes it a failure.
 */
export function browserSkipReason(): string | false {
  if (testMode() === 'services') {
    return 'browser tests run in the embedded pass only (the app uses the same API in both modes)';
  }
  if (!CHROMIUM_PATH) {
    if (process.env.REQUIRE_BROWSER === '1') throw new Error('REQUIRE_BROWSER=1 but chromium is not installed');
    return 'chromium is not installed (apt-get install chromium)';
  }
  return false;
}

/**
 * Why tests of the server's own AI browser are skipped here, or false to run them: they need
 * chromium only, and run in both modes (the browser's records differ by mode). REQUIRE_BROWSER=1
 * (CI) makes a missing chromium a failure.
 */
export function chromiumSkipReason(): string | false {
  if (CHROMIUM_PATH) return false;
  if (process.env.REQUIRE_BROWSER === '1') throw new Error('REQUIRE_BROWSER=1 but chromium is not installed');
  return 'chromium is not installed (apt-get install chromium)';
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // Root in CI containers has no user namespaces for the sandbox.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

/**
 * Chromium with one 1280×800 page on the web app at `route`, signed in through its `?token=` link,
 * once its main navigation shows; `permissions` (e.g. the clipboard's) are granted to the server.
 * On a failure the browser is closed before the error is thrown.
 */
export async function openSignedIn(
  server: Pick<TestServer, 'url' | 'password'>,
  options: { route?: string; permissions?: string[]; timeout?: number } = {},
): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    if (options.permissions) await context.grantPermissions(options.permissions, { origin: server.url });
    const page = await context.newPage();
    await page.goto(`${server.url}/?token=${encodeURIComponent(server.password)}${options.route ?? '#/chat'}`);
    await page.getByRole('navigation', { name: 'Main' }).waitFor({ timeout: options.timeout ?? 30_000 });
    return { browser, page };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

/**
 * Starts a new conversation from the chat page (by `start`: the New conversation button unless
 * told otherwise) and answers its id once the address names it and the message box has the focus.
 */
export async function newConversation(
  page: Page,
  start: () => Promise<unknown> = () => page.getByRole('button', { name: 'New conversation', exact: true }).click(),
  timeout = 30_000,
): Promise<string> {
  const before = page.url();
  await start();
  await page.waitForURL((u) => u.toString() !== before && /#\/chat\/[0-9a-f-]{36}$/.test(u.toString()), { timeout });
  await page.locator('#composer:focus').waitFor({ timeout });
  return page.url().split('/').pop()!;
}

/** A screenshot of the viewport into SCREENSHOT_DIR/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: false, animations: 'disabled' });
}

/** One axe-core violation, reduced to what a failing assertion should show. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

let axeSource: string | undefined;

/**
 * Runs axe-core (the devDependency's `axe.min.js`, injected into the page) on the page as it is
 * now, with the WCAG 2.1 A/AA rules and best practices, and returns its violations: an empty
 * list is a page without violations. Each node is named by its CSS target and its failure
 * summary (for contrast: the colours and the ratio).
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(join(REPO_ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
  const present = await page.evaluate(() => 'axe' in globalThis);
  // Evaluated through the debugging protocol: the app's CSP (script-src 'self') refuses inline scripts.
  if (!present) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    type AxeResult = {
      violations: {
        id: string;
        impact: string | null;
        help: string;
        nodes: { target: string[]; failureSummary?: string }[];
      }[];
    };
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<AxeResult> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map(
        (n) => `${n.target.join(' ')}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ').slice(0, 240)}`,
      ),
    }));
  });
}

/** The violations as lines for an assertion message. */
export function formatViolations(violations: AxeViolation[]): string {
  return violations.map((v) => `${v.id} (${v.impact}): ${v.help}\n  ${v.nodes.join('\n  ')}`).join('\n');
}
