import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkipReason, launchChromium } from '#testing/browser.js';
import { freePort } from '#testing/test-env.js';
import { REPO_ROOT, startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

const WAIT = 30_000;
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

/** The deployment's own deploy/nginx/svc.conf (prefix /svc/ stripped), pointed at the test server. */
function nginxConfig(dir: string, listen: number, upstream: number): string {
  const site = readFileSync(join(REPO_ROOT, 'deploy/nginx/svc.conf'), 'utf8')
    .replace(/server 127\.0\.0\.1:8080;/, `server 127.0.0.1:${upstream};`)
    .replace(/listen 80;/, `listen 127.0.0.1:${listen};`);
  writeFileSync(join(dir, 'svc.conf'), site);
  const temp = (name: string) => `${name} ${join(dir, name.replace('_temp_path', ''))};`;
  return `${process.getuid?.() === 0 ? 'user root;' : ''}
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 256; }
http {
  access_log off;
  ${temp('client_body_temp_path')} ${temp('proxy_temp_path')} ${temp('fastcgi_temp_path')}
  ${temp('uwsgi_temp_path')} ${temp('scgi_temp_path')}
  include ${join(dir, 'svc.conf')};
}
`;
}

const skip = browserSkipReason() || (NGINX ? false : 'nginx is not installed (apt-get install nginx)');

describe('web app in Chromium through nginx under /svc/ (prefix stripped)', { skip }, () => {
  let server: TestServer;
  let browser: Browser;
  let nginx: ChildProcess;
  let dir: string;
  let port: number;

  before(async () => {
    server = await startServer();
    dir = mkdtempSync(join(tmpdir(), 'svc-nginx-'));
    port = await freePort();
    writeFileSync(join(dir, 'nginx.conf'), nginxConfig(dir, port, server.port));
    execFileSync(NGINX!, ['-t', '-q', '-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'pipe' });
    nginx = spawn(NGINX!, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'ignore' });
    await waitFor(
      () =>
        fetch(`http://127.0.0.1:${port}/svc/`).then(
          (r) => r.ok,
          () => false,
        ),
      WAIT,
      'nginx answering',
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    nginx?.kill('SIGQUIT');
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('signs in, reaches the API and the socket under the prefix, uploads and lists a file', async () => {
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on('response', (res) => {
      if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`);
    });
    await page.goto(`http://127.0.0.1:${port}/svc/`);
    await page.getByLabel('Access password').fill(server.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Live').waitFor({ timeout: WAIT });
    await page
      .getByLabel('Upload files')
      .setInputFiles({ name: 'via-proxy.txt', mimeType: 'text/plain', buffer: Buffer.from('hi') });
    await page
      .getByRole('tree', { name: 'Files' })
      .getByRole('button', { name: 'via-proxy.txt' })
      .waitFor({ timeout: WAIT });
    await page.getByRole('link', { name: 'Spaces' }).click();
    await page.getByRole('list', { name: 'Spaces' }).getByText('temporary').waitFor({ timeout: WAIT });
    if (failed.length > 0) throw new Error(`failed requests: ${failed.join(', ')}`);
    await page.close();
    // The example needs no SVC_BASE_PATH, and the server agrees: no prefix warning (docs/operations.md).
    assert.ok(
      !server.output().includes('a path prefix this server does not serve'),
      'the server warned about the stripped-prefix example',
    );
  });
});
