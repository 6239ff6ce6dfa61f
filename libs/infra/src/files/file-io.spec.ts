import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DIRECT_IO, fileIoChooser, onLocalFileSystem, POOL_IO } from './file-io.js';

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('file calls per folder (SVC_FILE_IO)', () => {
  it('pool and direct answer the same for every folder', () => {
    assert.equal(fileIoChooser('pool')('/anywhere'), POOL_IO);
    assert.equal(fileIoChooser('direct')('/anywhere'), DIRECT_IO);
  });

  it('auto: the pool until a folder is known local, then direct calls; a remote one is asked once', async () => {
    const asked: string[] = [];
    const kinds: Record<string, boolean | undefined> = { '/local': true, '/nfs': false, '/not-yet': undefined };
    const ioFor = fileIoChooser('auto', async (folder) => {
      asked.push(folder);
      return kinds[folder];
    });
    for (const folder of Object.keys(kinds)) assert.equal(ioFor(folder), POOL_IO);
    await settle();
    assert.equal(ioFor('/local'), DIRECT_IO);
    assert.equal(ioFor('/nfs'), POOL_IO);
    // Not told (not there yet): the pool, and asked again on the next call.
    assert.equal(ioFor('/not-yet'), POOL_IO);
    await settle();
    assert.deepEqual(asked.sort(), ['/local', '/nfs', '/not-yet', '/not-yet']);
  });

  it('tells a local folder, and cannot tell a missing one', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'svc-io-'));
    try {
      assert.equal(typeof (await onLocalFileSystem(folder)), 'boolean');
      assert.equal(await onLocalFileSystem(join(folder, 'missing')), process.platform === 'linux' ? undefined : false);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('direct calls answer what the pool answers, failures included', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'svc-io-'));
    try {
      for (const call of ['realpath', 'lstat', 'readlink'] as const) {
        const answer = (v: string | { ino: number }) => (typeof v === 'string' ? v : v.ino);
        const failure = (e: NodeJS.ErrnoException) => e.code;
        const pool = await POOL_IO[call](folder).then(answer, failure);
        const direct = await DIRECT_IO[call](folder).then(answer, failure);
        assert.equal(direct, pool, call);
      }
      await assert.rejects(DIRECT_IO.open(join(folder, 'missing'), 0), { code: 'ENOENT' });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
