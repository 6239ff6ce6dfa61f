import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import yazl from 'yazl';
import { apiClient, binary, failure, okData } from '#testing/api-client.js';
import { syntheticSpec, zipEntries } from '#testing/catalog-server.js';
import { testMode } from '#testing/test-env.js';
import { startServer, type TestServer } from '#testing/test-server.js';

interface ZipItem {
  name: string;
  data: Buffer | string;
  mode?: number;
}

/** A zip built in memory; `rename` swaps same-length placeholder names for names yazl refuses to write. */
async function zip(items: ZipItem[], rename: Record<string, string> = {}): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const item of items) {
    z.addBuffer(Buffer.isBuffer(item.data) ? item.data : Buffer.from(item.data), item.name, {
      ...(item.mode !== undefined ? { mode: item.mode } : {}),
    });
  }
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  const out = Buffer.concat(chunks);
  for (const [from, to] of Object.entries(rename)) {
    assert.equal(from.length, to.length);
    let at = out.indexOf(from);
    while (at >= 0) {
      out.write(to, at, 'latin1');
      at = out.indexOf(from, at + 1);
    }
  }
  return out;
}

const SPEC = syntheticSpec('packaged', '1.0.0', {
  requires: { skills: [{ id: 'helper', bundled: true, files: ['SKILL.md', 'index.js'] }] },
});

/** .dhpkg import and export: the accepted forms, and hostile archives refused with nothing written. */
describe(`packages (${testMode()})`, () => {
  let server: TestServer;
  let api: ReturnType<typeof apiClient>;
  let dir: string;
  let spaceId: string;
  let spacePath: string;

  const file = (name: string, data: Buffer | string) => {
    const path = join(dir, name);
    writeFileSync(path, data);
    return path;
  };
  const appCount = async () => okData<unknown[]>(await api.get('/api/apps?status=')).length;
  const refused = async (filePath: string, status: number, error: RegExp, code?: string) => {
    const before = await appCount();
    failure(await api.post('/api/store/import-dhpkg', { filePath, spaceId }), status, error, code);
    assert.equal(await appCount(), before, 'nothing installed');
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-pkg-'));
    server = await startServer();
    api = apiClient(server);
    ({ id: spaceId, path: spacePath } = okData<{ id: string; path: string }>(
      await api.post('/api/spaces', { name: 'Packages' }),
    ));
  });
  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports a .dhpkg with bundled skills and exports it back the same', async () => {
    const pkg = await zip([
      { name: 'spec.yaml', data: SPEC },
      { name: 'skills/helper/SKILL.md', data: '# Helper' },
      { name: 'skills/helper/index.js', data: 'export default 1;' },
    ]);
    const { appId } = okData<{ appId: string }>(
      await api.post('/api/store/import-dhpkg', { filePath: file('a.dhpkg', pkg), spaceId }),
    );
    const res = await api.get(`/api/apps/${appId}/export`).buffer(true).parse(binary);
    assert.equal(res.headers['content-type'], 'application/octet-stream');
    assert.equal(res.headers['content-disposition'], 'attachment; filename="packaged-1.0.0.dhpkg"');
    const files = await zipEntries(res.body as Buffer);
    assert.deepEqual([...files.keys()].sort(), ['skills/helper/SKILL.md', 'skills/helper/index.js', 'spec.yaml']);
    assert.equal(files.get('skills/helper/index.js')!.toString(), 'export default 1;');
    okData(await api.del(`/api/apps/${appId}/permanent`));
  });

  it('installs a bundled skill shipped as its own spec file (skills/<id>/<id>.yaml, type: skill) as a SKILL.md skill', async () => {
    const spec = syntheticSpec('spec-skilled', '1.0.0', {
      requires: { skills: [{ id: 'tidy-notes', bundled: true, files: ['tidy-notes.yaml'] }] },
    });
    const skillYaml = [
      'spec_version: "1"',
      'name: tidy-notes',
      'version: "1.0.0"',
      'description: Tidies meeting notes into decisions and actions.',
      'type: skill',
      'system_prompt: List decisions first, then actions with owners. TIDY-MARKER',
      '',
    ].join('\n');
    const pkg = await zip([
      { name: 'spec.yaml', data: spec },
      { name: 'skills/tidy-notes/tidy-notes.yaml', data: skillYaml },
    ]);
    const { appId } = okData<{ appId: string }>(
      await api.post('/api/store/import-dhpkg', { filePath: file('spec-skill.dhpkg', pkg), spaceId }),
    );
    const skillFolder = join(spacePath, '.claude', 'skills', 'tidy-notes');
    const markdown = readFileSync(join(skillFolder, 'SKILL.md'), 'utf8');
    assert.match(
      markdown,
      /^---\nname: "tidy-notes"\ndescription: "Tidies meeting notes into decisions and actions\."\n---/,
    );
    assert.match(markdown, /TIDY-MARKER/);
    assert.ok(existsSync(join(skillFolder, 'tidy-notes.yaml')), 'the spec file stays beside it');
    okData(await api.del(`/api/apps/${appId}/permanent`));
  });

  it('imports a .zip with one top-level folder, a bare spec.yaml and a folder', async () => {
    const nested = await zip([
      { name: 'pkg/spec.yaml', data: syntheticSpec('nested', '1.0.0') },
      { name: 'pkg/README.md', data: 'hi' },
    ]);
    okData(await api.post('/api/store/import-dhpkg', { filePath: file('nested.zip', nested), spaceId }));
    okData(await api.post('/api/store/import-dhpkg', { filePath: file('spec.yaml', syntheticSpec('bare', '1.0.0')) }));
    const folder = join(dir, 'folder');
    mkdirSync(join(folder, 'skills', 'helper'), { recursive: true });
    writeFileSync(join(folder, 'spec.yaml'), syntheticSpec('folder', '1.0.0'));
    writeFileSync(join(folder, 'skills', 'helper', 'SKILL.md'), '# Helper');
    okData(await api.post('/api/store/import-dhpkg', { filePath: folder, spaceId }));
  });

  it('refuses bad requests and files that are not packages', async () => {
    failure(await api.post('/api/store/import-dhpkg', { spaceId }), 400, /filePath/);
    await refused(join(dir, 'missing.dhpkg'), 404, /not found/);
    await refused(file('text.dhpkg', 'just text'), 400, /not a zip/);
    await refused(file('bad.yaml', 'name: [unclosed'), 400, /not valid YAML/, 'INVALID_YAML');
    await refused(
      file(
        'none.zip',
        await zip([
          { name: 'a/x', data: '1' },
          { name: 'b/y', data: '2' },
        ]),
      ),
      400,
      /no spec\.yaml/,
    );
    await refused(
      file('invalid.zip', await zip([{ name: 'spec.yaml', data: 'name: x\ntype: automation' }])),
      422,
      /version|description|author/,
    );
  });

  it('refuses zip-slip, absolute names and symbolic links with nothing written', async () => {
    const slip = await zip(
      [
        { name: 'spec.yaml', data: SPEC },
        { name: 'zz/escaped.txt', data: 'x' },
      ],
      { 'zz/escaped.txt': '../escaped.txt' },
    );
    await refused(file('slip.dhpkg', slip), 400, /refused/);
    const absolute = await zip(
      [
        { name: 'spec.yaml', data: SPEC },
        { name: 'zabs.txt', data: 'x' },
      ],
      { 'zabs.txt': '/abs.txt' },
    );
    await refused(file('abs.dhpkg', absolute), 400, /refused/);
    const drive = await zip(
      [
        { name: 'spec.yaml', data: SPEC },
        { name: 'zz/d.txt', data: 'x' },
      ],
      { 'zz/d.txt': 'C:/d.txt' },
    );
    await refused(file('drive.dhpkg', drive), 400, /refused/);
    const link = await zip([
      { name: 'spec.yaml', data: SPEC },
      { name: 'skills/helper/SKILL.md', data: '/etc/passwd', mode: 0o120777 },
    ]);
    await refused(file('link.dhpkg', link), 400, /symbolic link/);
    const folder = join(dir, 'linked');
    mkdirSync(folder);
    writeFileSync(join(folder, 'spec.yaml'), SPEC);
    const { symlinkSync } = await import('node:fs');
    symlinkSync('/etc/passwd', join(folder, 'passwd'));
    await refused(folder, 400, /symbolic link/);
    assert.ok(!existsSync(join(dir, '..', 'escaped.txt')) && !existsSync('/abs.txt'));
    assert.deepEqual(
      readdirSync(server.dataDir).filter((n) => n.includes('escaped')),
      [],
    );
  });

  it('refuses a package over 50 MB, one unpacking past 200 MB, and one holding a credential', async () => {
    const big = file('big.dhpkg', 'PK\u0003\u0004');
    truncateSync(big, 50 * 1024 * 1024 + 1);
    await refused(big, 413, /larger than 50 MB/);
    const bomb = await zip([
      { name: 'spec.yaml', data: SPEC },
      { name: 'skills/helper/zeros.bin', data: Buffer.alloc(201 * 1024 * 1024) },
    ]);
    assert.ok(bomb.length < 2 * 1024 * 1024, 'compresses well');
    await refused(file('bomb.dhpkg', bomb), 413, /more than 200 MB/);
    const secret = await zip([
      { name: 'spec.yaml', data: SPEC },
      { name: 'skills/helper/index.js', data: 'const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123";' },
    ]);
    await refused(file('secret.dhpkg', secret), 400, /skills\/helper\/index\.js holds what looks like an API key/);
  });

  it('refuses bundled skill files over 10 MB in all before anything is stored (many entries within the limits)', async () => {
    const many = await zip([
      { name: 'spec.yaml', data: SPEC },
      ...Array.from({ length: 120 }, (_, i) => ({ name: `skills/helper/part-${i}.txt`, data: 'y'.repeat(100 * 1024) })),
    ]);
    await refused(file('many.dhpkg', many), 413, /bundled skill files exceed 10 MB in all/);
  });

  it('export stops naming a required skill that is nowhere', async () => {
    const spec = syntheticSpec('needy', '1.0.0', { requires: { skills: [{ id: 'ghost-skill' }] } });
    const { appId } = okData<{ appId: string }>(
      await api.post('/api/store/import-dhpkg', { filePath: file('needy.yaml', spec), spaceId }),
    );
    failure(await api.get(`/api/apps/${appId}/export`), 404, /ghost-skill/);
  });
});
