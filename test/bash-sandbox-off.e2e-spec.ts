import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiClient } from '#testing/api-client.js';
import { startServer } from '#testing/test-server.js';

describe('security: without a working sandbox Bash is off unless unsandboxed is chosen', () => {
  for (const [bash, offered] of [
    [undefined, false],
    ['unsandboxed', true],
  ] as const) {
    it(`SVC_AGENT_BASH=${bash ?? '(default)'} and no bwrap: Bash ${offered ? 'offered' : 'off'}`, async () => {
      const server = await startServer({ env: { SVC_AGENT_BWRAP: '/nonexistent/bwrap', SVC_AGENT_BASH: bash } });
      try {
        const caps = (await apiClient(server).get('/api/agent/engine-capabilities')).body.data;
        assert.equal((caps.tools as string[]).includes('Bash'), offered, JSON.stringify(caps.tools));
      } finally {
        await server.stop();
      }
    });
  }
});
