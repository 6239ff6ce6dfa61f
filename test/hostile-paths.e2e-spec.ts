import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { apiClient } from '#testing/api-client.js';
import { ScriptedModelServer, scriptedModelEnv } from '#testing/scripted-model-server.js';
import { startServer, type TestServer } from '#testing/test-server.js';
import { runTools, type ToolCall } from '#testing/tool-driver.js';

/**
 * Property: no hostile path or pattern, through any file operation over HTTP or any file
 * tool of the assistant, reads or changes anything outside the workspace (or `.svc` through
 * the file API). fast-check builds the inputs (traversals in many spellings: URL-encoded,
 * full-width and one-dot-leader dots, backslashes, absolute paths, symlinks leading in and
 * out, NUL bytes); the test prints how many it tried and the escapes it saw (must be 0).
 * Bounded: a fixed seed and a fixed number of inputs.
 */

const SEED = 14;
const INPUTS = 24;
/** Inputs that also go through the slower tools (Edit, Glob and Grep with `path`, Bash). */
const ALL_TOOLS_INPUTS = 8;
const DATA_SECRET = 'hostile-data-secret-1';
const OUTSIDE_SECRET = 'hostile-outside-secret-2';
const OTHER_SECRET = 'hostile-other-secret-3';
const SVC_SECRET = 'hostile-svc-memory-4';
const PLANTED = 'hostile-planted-5';

/** Files under a folder with their contents (symlinks not followed), skipping `skip`. */
function files(dir: string, skip: (path: string) => boolean = () => false): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = join(d, e.name);
      if (skip(full)) continue;
      if (e.isDirectory()) walk(full);
      else if (e.isFile()) out.set(full, readFileSync(full, 'latin1'));
    }
  };
  walk(dir);
  return out;
}

describe('hostile paths and patterns (property-based)', () => {
  let model: ScriptedModelServer;
  let server: TestServer;
  let outside: string;
  let space: { id: string; path: string };
  let other: { id: string; path: string };
  const api = () => apiClient(server);

  before(async () => {
    model = await ScriptedModelServer.start();
    server = await startServer({ env: scriptedModelEnv(model) });
    writeFileSync(join(server.dataDir, 'sentinel.txt'), DATA_SECRET);
    writeFileSync(join(server.dataDir, 'access-password'), DATA_SECRET);
    outside = mkdtempSync(join(tmpdir(), 'svc-hostile-outside-'));
    writeFileSync(join(outside, 'outside.txt'), OUTSIDE_SECRET);
    const create = async (name: string) => {
      const res = await api().post('/api/spaces', { name });
      return { id: res.body.data.id as string, path: res.body.data.path as string };
    };
    space = await create('hostile');
    other = await create('other');
    writeFileSync(join(other.path, 'other.txt'), OTHER_SECRET);
    mkdirSync(join(space.path, '.svc'));
    writeFileSync(join(space.path, '.svc', 'memory.md'), SVC_SECRET);
    restoreFixtures();
  });

  after(async () => {
    await server.stop();
    await model.close();
    rmSync(outside, { recursive: true, force: true });
  });

  /** Puts back what an accepted operation inside the space may have moved or trashed. */
  function restoreFixtures(): void {
    mkdirSync(join(space.path, 'docs'), { recursive: true });
    if (!existsSync(join(space.path, 'docs', 'a.txt'))) writeFileSync(join(space.path, 'docs', 'a.txt'), 'inside');
    for (const [target, name] of [
      [outside, 'escape'],
      [join(outside, 'outside.txt'), 'file-link'],
      [join(space.path, 'docs'), 'link-in'],
    ] as const) {
      try {
        symlinkSync(target, join(space.path, name));
      } catch {
        /* still there */
      }
    }
  }

  /** Hostile spellings of paths, built from traversal tokens, targets, separators and prefixes. */
  function hostilePaths(): fc.Arbitrary<string> {
    const up = fc.constantFrom(
      '..',
      '%2e%2e',
      '%2E%2E',
      '．．',
      '\u2024\u2024',
      '.%2e',
      '%252e%252e',
      '...',
      '..;',
      '.',
      '',
    );
    const target = fc.constantFrom(
      'sentinel.txt',
      'access-password',
      'etc/passwd',
      `${other.id}/other.txt`,
      'spaces',
      'db',
      'escape/outside.txt',
      'escape',
      'file-link',
      'link-in/a.txt',
      '.svc/memory.md',
      '.svc',
      'docs/a.txt',
      '*',
      '**/*',
    );
    const sep = fc.constantFrom('/', '\\', '%2f', '%5c', '//', '/./');
    const prefix = fc.constantFrom(
      '',
      `${space.path}/`,
      `${space.path}/docs/`,
      '/',
      '/etc/',
      `${server.dataDir}/`,
      `${outside}/`,
      '~/',
    );
    return fc
      .tuple(prefix, fc.array(fc.tuple(up, sep), { maxLength: 6 }), target, fc.boolean(), fc.nat(40))
      .map(([p, ups, t, nul, at]) => {
        const path = p + ups.map(([u, s]) => u + s).join('') + t;
        return nul ? `${path.slice(0, at)}\0${path.slice(at)}` : path;
      });
  }

  it(`drives ${INPUTS} hostile inputs through every file operation and tool: 0 escapes`, async (t) => {
    const inputs = fc.sample(hostilePaths(), { numRuns: INPUTS, seed: SEED });
    const watched = () =>
      new Map([
        ...files(outside),
        ...files(other.path),
        ...files(
          server.dataDir,
          (p) => p.startsWith(join(server.dataDir, 'db')) || p.startsWith(join(server.dataDir, 'spaces')),
        ),
      ]);
    const before_ = watched();
    const svcBefore = readFileSync(join(space.path, '.svc', 'memory.md'), 'utf8');
    const escapes: string[] = [];
    /** `.svc` counts for the file API only; /etc/passwd counts except for Bash (its sandbox shows it on purpose). */
    const leaks = (text: string, what: string, svcCounts: boolean, passwdCounts = true): void => {
      const secrets = [
        DATA_SECRET,
        OUTSIDE_SECRET,
        OTHER_SECRET,
        server.password,
        ...(passwdCounts ? ['root:x:0'] : []),
        ...(svcCounts ? [SVC_SECRET] : []),
      ];
      for (const secret of secrets) if (text.includes(secret)) escapes.push(`${what} revealed ${secret.slice(0, 12)}…`);
    };

    // Every file operation over HTTP.
    const a = `/api/spaces/${space.id}/artifacts`;
    let requests = 0;
    for (const p of inputs) {
      const q = encodeURIComponent(p);
      const responses = await Promise.all([
        api().get(`/api/artifacts/content?path=${q}`),
        api().get(`/api/artifacts/detect-type?path=${q}`),
        api().post('/api/artifacts/save', { path: p, content: PLANTED }),
        api().post(`${a}/file`, { name: p, content: PLANTED }),
        api().post(`${a}/file`, { name: 'planted.txt', parentPath: p, content: PLANTED }),
        api().post(`${a}/folder`, { name: 'f', parentPath: p }),
        api().post(`${a}/children`, { dirPath: p }),
        api().post(`${a}/rename`, { oldPath: p, newName: 'renamed.txt' }),
        api().post(`${a}/move`, { oldPath: p, newParentPath: 'docs' }),
        api().post(`${a}/move`, { oldPath: 'docs/a.txt', newParentPath: p }),
        api().del(a, { path: p }),
      ]);
      requests += responses.length;
      responses.forEach((res, i) => leaks(JSON.stringify(res.body ?? ''), `HTTP op ${i} ${JSON.stringify(p)}`, true));
      restoreFixtures();
    }

    // Every file tool, in turns of at most 80 calls.
    const calls: Array<ToolCall & { what: string }> = [];
    for (const [n, p] of inputs.entries()) {
      const shellPath = `'${p.replace(/\0/g, '').replace(/'/g, `'\\''`)}'`;
      calls.push(
        { what: 'Read', name: 'Read', input: { file_path: p } },
        { what: 'Write', name: 'Write', input: { file_path: p, content: PLANTED } },
        { what: 'Glob', name: 'Glob', input: { pattern: p } },
        { what: 'Grep glob', name: 'Grep', input: { pattern: '.', glob: p, output_mode: 'content' } },
      );
      if (n >= ALL_TOOLS_INPUTS) continue;
      calls.push(
        { what: 'Edit', name: 'Edit', input: { file_path: p, old_string: OUTSIDE_SECRET, new_string: PLANTED } },
        { what: 'Glob path', name: 'Glob', input: { pattern: '**/*', path: p } },
        { what: 'Grep path', name: 'Grep', input: { pattern: '.', path: p, output_mode: 'content' } },
        { what: 'Bash', name: 'Bash', input: { command: `cat ${shellPath} 2>&1; ls ${shellPath} 2>&1 | head -5` } },
      );
    }
    let toolCalls = 0;
    for (let i = 0; i < calls.length; i += 80) {
      const batch = calls.slice(i, i + 80);
      const results = await runTools(server, model, space.id, batch, 120_000);
      toolCalls += batch.length;
      // Tools may read .svc (the assistant keeps the workspace memory there).
      results.forEach((r, j) =>
        leaks(r.result, `${batch[j]!.what} ${JSON.stringify(batch[j]!.input)}`, false, batch[j]!.name !== 'Bash'),
      );
    }

    // Nothing outside changed, no file was planted outside, .svc untouched by the file API.
    // The data folder's trash receives what a delete moves out of the space (a name like
    // `..;\\spaces` is a plain file name on Linux, made by one request and deleted by another);
    // a new entry there counts only when its record says it came from inside the space.
    const after_ = watched();
    const trash = join(server.dataDir, 'trash');
    const trashedFromSpace = (path: string): boolean => {
      const infoFile = path.startsWith(join(trash, 'info') + '/')
        ? path
        : join(trash, 'info', `${path.slice(join(trash, 'files').length + 1).split('/')[0]}.trashinfo`);
      const from = /^Path=(.*)$/m.exec(after_.get(infoFile) ?? '')?.[1];
      return from !== undefined && decodeURIComponent(from).startsWith(`${space.path}/`);
    };
    let trashed = 0;
    for (const [path, content] of after_) {
      if (before_.get(path) === content) continue;
      if (!before_.has(path) && path.startsWith(trash + '/') && trashedFromSpace(path)) {
        trashed++;
        continue;
      }
      escapes.push(`${path} was ${before_.has(path) ? 'changed' : 'created'}`);
    }
    for (const path of before_.keys()) if (!after_.has(path)) escapes.push(`${path} was removed`);

    t.diagnostic(
      `hostile inputs tried: ${inputs.length} (seed ${SEED}); HTTP requests: ${requests}; tool calls: ${toolCalls}`,
    );
    t.diagnostic(
      `sample inputs: ${inputs
        .slice(0, 6)
        .map((p) => JSON.stringify(p))
        .join(' ')}`,
    );
    t.diagnostic(`trash entries deleted from inside the space: ${trashed}`);
    t.diagnostic(`escapes: ${escapes.length}`);
    assert.deepEqual(escapes, []);
    // The workspace memory may be changed by the assistant's tools, never by the file API; it is still there.
    assert.ok(existsSync(join(space.path, '.svc', 'memory.md')) || svcBefore === '');
  });
});
