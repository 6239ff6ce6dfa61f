import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mayRemoveSpaceFolder, spaceFolderMessage, spaceFolderProblem } from './space-rules.js';

describe('space folder rules', () => {
  const data = '/srv/svc/data';

  it('refuses the data folder, anything inside it and every folder containing it', () => {
    for (const folder of [
      data,
      `${data}/db`,
      `${data}/spaces`,
      `${data}/trash`,
      `${data}/spaces/x/y`,
      '/srv/svc',
      '/srv',
    ]) {
      assert.equal(spaceFolderProblem(folder, data), 'data-folder', folder);
    }
  });

  it('refuses system folders and what lies in the system trees', () => {
    assert.equal(spaceFolderProblem('/', data), 'data-folder', 'the root contains the data folder');
    assert.equal(spaceFolderProblem('/', '/data'), 'data-folder');
    assert.equal(spaceFolderProblem('/var', '/data'), 'system-folder');
    for (const folder of [
      '/etc',
      '/etc/ssh',
      '/proc',
      '/proc/1',
      '/sys',
      '/dev',
      '/usr',
      '/usr/local/src',
      '/bin',
      '/boot',
      '/lib',
      '/lib64',
      '/var',
      '/var/lib/postgresql',
      '/root',
      '/home',
      '/tmp',
      '/run/secrets',
    ]) {
      assert.equal(spaceFolderProblem(folder, data), 'system-folder', folder);
    }
  });

  it('accepts ordinary folders, including ones below /home, /tmp and /root', () => {
    for (const folder of [
      '/home/ann/project',
      '/tmp/work',
      '/root/code',
      '/opt/projects/a',
      '/srv/other',
      '/data2',
      '/srv/svc/data-old',
    ]) {
      assert.equal(spaceFolderProblem(folder, data), null, folder);
    }
  });

  it('names the field in its messages', () => {
    assert.match(spaceFolderMessage('customPath', 'data-folder'), /^customPath: .*data folder/);
    assert.match(spaceFolderMessage('workingDir', 'system-folder'), /^workingDir: .*system folder/);
  });

  it('removes only a folder the space owns: its default folder, or one the server created', () => {
    const space = (ownsFolder: boolean) => ({ ownsFolder, defaultFolder: `${data}/spaces/s1` });
    assert.equal(
      mayRemoveSpaceFolder(`${data}/spaces/s1`, space(false), data),
      true,
      'default folder, rows from before the flag',
    );
    assert.equal(mayRemoveSpaceFolder('/home/ann/new', space(true), data), true, 'created by the server');
    assert.equal(mayRemoveSpaceFolder('/home/ann/project', space(false), data), false, 'brought by the user');
    assert.equal(mayRemoveSpaceFolder(data, space(true), data), false, 'the data folder itself');
    assert.equal(mayRemoveSpaceFolder('/srv', space(true), data), false, 'a parent of the data folder');
    assert.equal(
      mayRemoveSpaceFolder(`${data}/db`, space(true), data),
      false,
      'inside the data folder, not its default',
    );
    assert.equal(mayRemoveSpaceFolder('/etc', space(true), data), false, 'a system folder');
    assert.equal(mayRemoveSpaceFolder('/', space(true), data), false, 'the root');
  });
});
