import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { REPO_ROOT } from './test-server.js';
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

/** A screenshot of the viewport into SCREENSHOT_DIR/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: false, animations: 'disabled' });
}
