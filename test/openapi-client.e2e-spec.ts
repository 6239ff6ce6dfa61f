import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { authHeaders } from '#testing/api-client.js';
import { CatalogServer, indexDocument, syntheticEntry, syntheticSpec } from '#testing/catalog-server.js';
import { ScriptedModelServer } from '#testing/scripted-model-server.js';
import { testMode } from '#testing/test-env.js';
import { REPO_ROOT, startServer, type TestServer } from '#testing/test-server.js';

/** Runs `node <args>` in the repository root; answers its exit code and output. */
function node(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

/**
 * A client generated from the server's OpenAPI document by a third-party generator, as a user
 * would make one (docs/api.md, "OpenAPI document"): `openapi-typescript` writes the types into
 * a temporary folder, `scripts/openapi-client-check.ts` (calls through `openapi-fetch`) is
 * compiled against them with `tsc --strict`, and the compiled flow runs against this server. A
 * parameter, body or answer the document gets wrong fails the compile or the run.
 */
describe(`a client generated from the OpenAPI document (${testMode()})`, () => {
  let model: ScriptedModelServer;
  let catalog: CatalogServer;
  let server: TestServer;
  let work: string;
  const outDir = join(REPO_ROOT, 'dist', 'openapi-client-check');

  before(async () => {
    model = await ScriptedModelServer.start();
    catalog = await CatalogServer.start();
    catalog.set('index.json', indexDocument([syntheticEntry('client-check', '1.0.0')]));
    catalog.set('items/client-check/spec.yaml', syntheticSpec('client-check', '1.0.0'));
    server = await startServer({ env: { ...model.serverEnv('openai'), SVC_STORE_SOURCES: catalog.url } });
    work = mkdtempSync(join(tmpdir(), 'svc-openapi-client-'));
  });
  after(async () => {
    await server?.stop();
    await model?.close();
    await catalog?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
    rmSync(outDir, { recursive: true, force: true });
  });

  it('generates, compiles with tsc --strict and runs the everyday flow', async () => {
    model.enqueue({ steps: [{ text: 'Hello from the scripted model.' }] });
    const res = await fetch(`${server.url}/api/openapi.json`, {
      headers: authHeaders(server),
    });
    assert.equal(res.status, 200);
    const docFile = join(work, 'openapi.json');
    writeFileSync(docFile, await res.text());

    const types = join(work, 'api.d.ts');
    const generated = await node([join(REPO_ROOT, 'node_modules/openapi-typescript/bin/cli.js'), docFile, '-o', types]);
    assert.equal(generated.code, 0, generated.output);

    rmSync(outDir, { recursive: true, force: true });
    const tsconfig = join(work, 'tsconfig.json');
    writeFileSync(
      tsconfig,
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          lib: ['es2023', 'dom'],
          types: ['node'],
          typeRoots: [join(REPO_ROOT, 'node_modules/@types')],
          skipLibCheck: true,
          noEmitOnError: true,
          rootDir: join(REPO_ROOT, 'scripts'),
          // Inside the repository, so that the compiled script finds openapi-fetch.
          outDir,
          paths: { 'svc-openapi': [types] },
        },
        files: [join(REPO_ROOT, 'scripts/openapi-client-check.ts')],
      }),
    );
    const compiled = await node([join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', tsconfig, '--strict']);
    assert.equal(compiled.code, 0, `the generated client does not compile:\n${compiled.output}`);

    const run = await node([join(outDir, 'openapi-client-check.js')], {
      SVC_URL: server.url,
      SVC_PASSWORD: server.password,
      STORE_SLUG: 'client-check',
    });
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /^8 steps passed$/m, run.output);
  });
});
