import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addsCommand, refusesCommand, serverOf } from './mcp-command-policy.js';

describe('the MCP command policy', () => {
  const cmd = { command: 'node', args: ['server.js'], env: { A: '1', B: '2' } };

  it('a new command, a server turned into a command, or a changed launch adds a command', () => {
    assert.equal(addsCommand(cmd), true);
    assert.equal(addsCommand(cmd, { type: 'http', url: 'https://h/mcp' }), true);
    assert.equal(addsCommand({ ...cmd, command: '/bin/sh' }, cmd), true);
    assert.equal(addsCommand({ ...cmd, args: ['-c', 'id'] }, cmd), true);
    assert.equal(addsCommand({ ...cmd, env: { NODE_OPTIONS: '--require x' } }, cmd), true);
    assert.equal(addsCommand({ ...cmd, cwd: 'sub' }, cmd), true);
  });

  it('the stored command kept as it is (env keys in another order) or an HTTP server adds none', () => {
    assert.equal(addsCommand({ ...cmd, env: { B: '2', A: '1' } }, cmd), false);
    assert.equal(addsCommand({ type: 'http', url: 'https://h/mcp' }), false);
    assert.equal(addsCommand({ type: 'http', url: 'https://h/mcp' }, cmd), false);
    assert.equal(addsCommand(undefined, cmd), false);
  });

  it('refuses only where the operator does not allow commands; only MCP apps have a server', () => {
    assert.equal(refusesCommand(false, cmd), true);
    assert.equal(refusesCommand(true, cmd), false);
    assert.equal(serverOf({ type: 'mcp', mcp_server: cmd }), cmd);
    assert.equal(serverOf({ type: 'automation', mcp_server: cmd }), undefined);
    assert.equal(serverOf(undefined), undefined);
  });
});
