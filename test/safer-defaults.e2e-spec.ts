import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EXAMPLE_PASSWORDS, examplePasswordProblem } from '#core/auth/example-passwords.js';
import { apiClient } from '#testing/api-client.js';
import { REPO_ROOT, startServer, type TestServer } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

/** README, Compose file and every deploy/ and docs/ file: where operators copy settings from. */
function documentationFiles(): string[] {
  const files = [join(REPO_ROOT, 'README.md'), join(REPO_ROOT, 'docker-compose.yml')];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else files.push(full);
    }
  };
  walk(join(REPO_ROOT, 'deploy'));
  walk(join(REPO_ROOT, 'docs'));
  return files;
}

/**
 * Values shown for SVC_REMOTE_PASSWORD (`=value`, `: value`, quoted or not); variables, `...`,
 * placeholders and the Helm chart's template expressions (`{{ … }}`) left out.
 */
function examplesIn(text: string): string[] {
  return [...text.matchAll(/SVC_REMOTE_PASSWORD\s*[=:]\s*['"]?([^'"\s`]+)/g)]
    .map((m) => m[1]!)
    .filter((v) => !v.startsWith('$') && !/^\.+$/.test(v) && !v.startsWith('<') && !v.startsWith('{{'));
}

describe('safer defaults', () => {
  it('refuses every password the documentation shows (the list is kept in one place)', () => {
    const shown = documentationFiles().flatMap((f) => examplesIn(readFileSync(f, 'utf8')));
    assert.ok(shown.length >= 3, `examples found: ${shown.join(', ')}`);
    const accepted = shown.filter((p) => examplePasswordProblem(p) === null);
    assert.deepEqual(accepted, [], 'add these to EXAMPLE_PASSWORDS in libs/core/src/auth/example-passwords.ts');
    for (const p of EXAMPLE_PASSWORDS) assert.notEqual(examplePasswordProblem(p), null);
  });

  for (const password of ['CHANGE-ME-8-to-64-chars', 'choose-a-long-one']) {
    it(`will not start with the example password ${password}`, async () => {
      const server = await startServer({ env: { SVC_REMOTE_PASSWORD: password }, waitForListening: false });
      try {
        const { code } = await server.exited;
        assert.equal(code, 1);
        assert.match(server.output(), /cannot start.*SVC_REMOTE_PASSWORD: (contains the placeholder|is an example)/s);
        assert.ok(!server.output().includes('listening'));
      } finally {
        await server.stop();
      }
    });
  }

  describe('a proxy prefix the server was not told about', () => {
    let server: TestServer;
    const api = () => apiClient(server);
    const warnings = () =>
      server
        .output()
        .split('\n')
        .filter((l) => l.includes('a path prefix this server does not serve'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    before(async () => {
      server = await startServer();
    });
    after(() => server?.stop());

    it('still answers the page, and logs one warning per prefix', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await api().get('/svc/api/system/version');
        assert.equal(res.status, 200);
        assert.match(String(res.headers['content-type']), /html/);
      }
      await waitFor(() => warnings().length > 0);
      const [warning, ...more] = warnings();
      assert.deepEqual(more, []);
      assert.equal(warning!.level, 'warn');
      assert.equal(warning!.prefix, '/svc');
      assert.match(String(warning!.hint), /SVC_BASE_PATH=\/svc/);
      // Normal requests stay quiet.
      await api().get('/api/system/version').expect(200);
      assert.equal(warnings().length, 1);
    });

    it('stays quiet behind a proxy that strips the prefix and sends X-Forwarded-Prefix (deploy/nginx/svc.conf)', async () => {
      const before = warnings().length;
      await api().get('/api/system/version').set('X-Forwarded-Prefix', '/tools/svc').expect(200);
      // A request after it, through the same listeners: the one above was checked by then.
      await api().get('/svc/api/system/version').expect(200);
      assert.equal(warnings().length, before);
      assert.ok(!warnings().some((w) => w.prefix === '/tools/svc'));
    });
  });
});
