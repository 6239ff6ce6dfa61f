import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { unpackTar } from './fresh-database-snapshot.js';

describe('fresh database snapshot unpacking', () => {
  it('restores folders and files byte for byte, zero blocks as holes of the same size', (t) => {
    const root = mkdtempSync(join(tmpdir(), 'svc-untar-'));
    try {
      const src = join(root, 'src');
      mkdirSync(join(src, 'base', '1'), { recursive: true });
      mkdirSync(join(src, 'pg_notify'));
      const mixed = Buffer.concat([Buffer.alloc(200_000), Buffer.from('data in the middle'), Buffer.alloc(70_000)]);
      writeFileSync(join(src, 'base', '1', '1247'), mixed);
      writeFileSync(join(src, 'PG_VERSION'), '17\n');
      writeFileSync(join(src, 'empty'), '');
      const made = spawnSync('tar', ['-cf', join(root, 'a.tar'), '-C', src, '.']);
      if (made.status !== 0) return t.skip('no tar command');
      const out = join(root, 'out');
      unpackTar(readFileSync(join(root, 'a.tar')), out);
      assert.deepEqual(readFileSync(join(out, 'base', '1', '1247')), mixed);
      assert.equal(statSync(join(out, 'base', '1', '1247')).size, mixed.length);
      assert.equal(readFileSync(join(out, 'PG_VERSION'), 'utf8'), '17\n');
      assert.equal(statSync(join(out, 'empty')).size, 0);
      assert.ok(statSync(join(out, 'pg_notify')).isDirectory());
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
