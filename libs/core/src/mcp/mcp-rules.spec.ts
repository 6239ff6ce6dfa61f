import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { App } from '../kernel/app.js';
import type { AppSpec } from '../kernel/app-spec/app-spec.js';
import { mcpServer } from '../kernel/app-spec/validate-spec.js';
import {
  boundedText,
  changedCommandServers,
  chatServers,
  configuredServers,
  launchOf,
  mcpServerName,
  mcpToolName,
  namesConfigured,
  restartDelayMs,
  needsInstalledServers,
  runServers,
  tailText,
} from './mcp-rules.js';

const app = (id: string, spec: Partial<AppSpec>, extra: Partial<App> = {}): App =>
  ({
    id,
    spaceId: 's1',
    status: 'active',
    userConfig: {},
    spec: { name: id, type: 'mcp', ...spec } as AppSpec,
    ...extra,
  }) as App;

describe('MCP rules', () => {
  it('names servers and tools as a model tool name can hold them', () => {
    assert.equal(mcpServerName(app('x', { name: 'GitHub  Tools!' })), 'github-tools');
    assert.equal(mcpServerName(app('x', { name: '数据' })), 'server');
    assert.equal(mcpToolName('github-tools', 'list issues'), 'mcp__github-tools__list-issues');
    assert.equal(mcpServerName(app('x', { name: 'a__b' })), 'a_b', 'the separator stays unambiguous');
  });

  it('fills settings into the launch and gives a stdio process only its spec variables', () => {
    const launch = launchOf(
      {
        command: 'npx',
        args: ['--db', '{{config.db}}'],
        env: { TOKEN: '{{ config.token }}', MISSING: '{{config.nope}}' },
      },
      { db: 'x.sqlite', token: 't0k' },
      '/spaces/s1',
    );
    assert.deepEqual(launch, {
      transport: 'stdio',
      command: 'npx',
      args: ['--db', 'x.sqlite'],
      env: { TOKEN: 't0k', MISSING: '' },
      cwd: '/spaces/s1',
      root: '/spaces/s1',
    });
    const inSub = launchOf({ command: 'x', cwd: 'tools/bin' }, {}, '/spaces/s1');
    assert.equal(inSub.transport === 'stdio' && inSub.cwd, '/spaces/s1/tools/bin', 'a relative cwd inside the space');
    assert.equal(inSub.transport === 'stdio' && inSub.root, '/spaces/s1');
    assert.deepEqual(
      launchOf({ type: 'http', url: 'https://h/mcp', headers: { A: 'Bearer {{config.k}}' } }, { k: 1 }, '/'),
      {
        transport: 'http',
        url: 'https://h/mcp',
        headers: { A: 'Bearer 1' },
      },
    );
  });

  it('backs off restarts doubling up to a ceiling and bounds output', () => {
    assert.deepEqual([0, 1, 2, 3].map(restartDelayMs), [500, 1000, 2000, 4000]);
    assert.equal(restartDelayMs(20), 30_000);
    assert.equal(boundedText('abc', 5), 'abc');
    assert.match(boundedText('abcdefgh', 5), /^abcde\n\[… 3 more characters left out\]$/);
    assert.equal(tailText('abcdef', 3), 'def');
  });

  it('a chat gets active servers of its space and global ones, minus those its digital human turns off', () => {
    const installed = [
      app('local', {}),
      app('global', {}, { spaceId: null }),
      app('other-space', {}, { spaceId: 's2' }),
      app('paused', {}, { status: 'paused' }),
      app('helper', { type: 'automation' }),
    ];
    assert.deepEqual(
      chatServers(installed, 's1', null).map((a) => a.id),
      ['global', 'local'],
    );
    const picky = app('picky', { type: 'automation', requires: { mcps: [{ id: 'global', enabled: false }] } });
    assert.deepEqual(
      chatServers(installed, 's1', picky).map((a) => a.id),
      ['local'],
    );
    const shadowed = [app('g', { name: 'same' }, { spaceId: null }), app('l', { name: 'same' })];
    assert.deepEqual(
      chatServers(shadowed, 's1', null).map((a) => a.id),
      ['l'],
      "the space's own wins",
    );
  });

  it('a run gets only its required servers, or the reason it cannot start', () => {
    const installed = [app('calc', { store: { slug: 'calc-mcp', tags: [] } }), app('off', {}, { status: 'paused' })];
    const needs = (...ids: string[]) =>
      app('runner', { type: 'automation', requires: { mcps: ids.map((id) => ({ id })) } }, { spaceId: 's1' });
    assert.deepEqual(
      runServers(installed, needs('calc-mcp')).servers?.map((a) => a.id),
      ['calc'],
    );
    assert.match(runServers(installed, needs('nope')).blocked!, /nope .*not installed/);
    assert.match(runServers(installed, needs('off')).blocked!, /off .*turned off/);
    const disabled = app('r', { type: 'automation', requires: { mcps: [{ id: 'nope', enabled: false }] } });
    assert.deepEqual(runServers(installed, disabled), { servers: [], blocked: null });
    // Whether the installed servers need listing at all: not for none, turned off or built in.
    assert.equal(needsInstalledServers(needs('calc-mcp')), true);
    assert.equal(needsInstalledServers(needs()), false);
    assert.equal(needsInstalledServers(needs('ai-browser')), false);
    assert.equal(needsInstalledServers(disabled), false);
    assert.equal(needsInstalledServers(app('plain', { type: 'automation' })), false);
  });

  it("reads the configuration's mcpServers: validated, named for tools, disabled kept apart", () => {
    const servers = configuredServers(
      {
        'My Files': { command: 'node', args: ['srv.js'], env: { A: '1' } },
        remote: { type: 'http', url: 'https://h/mcp', disabled: true, description: 'Remote tools' },
        broken: { url: 'ftp://x' },
      },
      mcpServer,
    );
    assert.deepEqual(
      servers.map((s) => [s.key, s.name, s.disabled, s.description]),
      [
        ['My Files', 'my-files', false, null],
        ['remote', 'remote', true, 'Remote tools'],
      ],
      'a bad stored entry is skipped when reading',
    );
    assert.throws(() => configuredServers({ broken: { url: 'ftp://x' } }, mcpServer, true), /mcpServers\.broken\.url/);
    assert.throws(() => configuredServers({ x: { command: 'a', disabled: 'yes' } }, mcpServer, true), /disabled/);
    assert.throws(() => configuredServers([], mcpServer, true), /must be an object/);
    assert.deepEqual(configuredServers(undefined, mcpServer), []);
    assert.equal(namesConfigured('My Files', 'my-files'), true);
    assert.equal(namesConfigured('My Files', 'other'), false);
  });

  it('the command policy looks only at stdio servers added or changed', () => {
    const read = (b: unknown) => configuredServers(b, mcpServer, true);
    const stored = read({ a: { command: 'x' }, h: { url: 'https://h/mcp' } });
    assert.deepEqual(changedCommandServers(read({ a: { command: 'x' }, h: { url: 'https://h/mcp' } }), stored), []);
    assert.deepEqual(changedCommandServers(read({ a: { command: 'x', args: ['1'] } }), stored), ['a']);
    assert.deepEqual(changedCommandServers(read({ b: { command: 'y' }, h2: { url: 'https://o/mcp' } }), stored), ['b']);
  });

  it("a stdio server's cwd must be relative and stay inside the space", () => {
    assert.equal(mcpServer({ command: 'x', cwd: 'sub/dir' }, 'f').cwd, 'sub/dir');
    for (const cwd of ['../up', '/etc', 'a/../../b', 'C:/x', 'a\\b'])
      assert.throws(() => mcpServer({ command: 'x', cwd }, 'mcp_server'), /mcp_server\.cwd must be a relative path/);
  });
});
