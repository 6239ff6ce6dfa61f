import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sandboxArgs, sandboxEnvironment } from './sandbox.js';

describe('bubblewrap sandbox arguments', () => {
  const layout = [
    { path: '/usr', kind: 'folder' as const },
    { path: '/bin', kind: 'symlink' as const, target: 'usr/bin' },
  ];
  const args = sandboxArgs({ workspace: '/data/spaces/s1', network: false, layout });
  const pairs = (flag: string): string[] =>
    args.flatMap((a, i) => (a === flag ? [`${args[i + 1]} ${args[i + 2] ?? ''}`.trim()] : []));

  it('gets its own namespaces (PID included), dies with the server, drops capabilities and the environment', () => {
    for (const flag of ['--unshare-all', '--die-with-parent', '--new-session', '--clearenv']) {
      assert.ok(args.includes(flag), flag);
    }
    assert.equal(args[args.indexOf('--cap-drop') + 1], 'ALL');
    assert.ok(!args.includes('--share-net'), 'no network unless asked');
    assert.ok(sandboxArgs({ workspace: '/w', network: true, layout }).includes('--share-net'));
  });

  it('binds only the workspace read-write, at its own path, and works there', () => {
    assert.deepEqual(pairs('--bind'), ['/data/spaces/s1 /data/spaces/s1']);
    assert.equal(args[args.indexOf('--chdir') + 1], '/data/spaces/s1');
    assert.ok(!args.some((a) => a === '/data' || a === '/data/spaces'), 'nothing else of the data folder');
  });

  it('binds system folders read-only, never /etc as a whole, with a private /tmp and /proc', () => {
    assert.ok(pairs('--ro-bind').includes('/usr /usr'));
    assert.ok(pairs('--symlink').includes('usr/bin /bin'));
    assert.ok(!pairs('--ro-bind').includes('/etc /etc') && !pairs('--ro-bind-try').includes('/etc /etc'));
    assert.ok(pairs('--ro-bind-try').includes('/etc/passwd /etc/passwd'));
    assert.ok(!pairs('--ro-bind-try').some((p) => p.startsWith('/etc/shadow')));
    assert.equal(args[args.indexOf('--proc') + 1], '/proc');
    assert.equal(args[args.indexOf('--tmpfs') + 1], '/tmp');
    assert.ok(args.indexOf('--tmpfs') < args.indexOf('--bind'), 'the workspace is bound after /tmp is made private');
  });

  it('sets a small, clean environment with nothing of the server', () => {
    const env = sandboxEnvironment('/w');
    assert.deepEqual(Object.keys(env).sort(), ['GIT_PAGER', 'HOME', 'LANG', 'PAGER', 'PATH', 'TERM', 'TMPDIR']);
    assert.equal(pairs('--setenv').length, Object.keys(env).length);
  });
});
