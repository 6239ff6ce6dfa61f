import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/**
 * The tools of the test MCP servers (written with the MCP SDK's server side):
 * - `add {a, b}` answers the sum;
 * - `whereami {}` answers the process's folder and environment names (JSON);
 * - `fail {}` answers a tool error;
 * - `big {size}` answers `size` characters;
 * - `crash {}` writes to stderr and ends the process in the middle of the call (stdio only).
 */
export function registerTestTools(server: McpServer, options: { crash: boolean }): void {
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool('whereami', { description: 'Tells the folder and environment of the server' }, async () => ({
    content: [
      {
        type: 'text',
        text: JSON.stringify({
          cwd: process.cwd(),
          env: Object.keys(process.env).sort(),
          greeting: process.env.GREETING,
        }),
      },
    ],
  }));
  server.registerTool('fail', { description: 'Always fails' }, async () => ({
    content: [{ type: 'text', text: 'the tool failed on purpose' }],
    isError: true,
  }));
  server.registerTool(
    'big',
    { description: 'Answers many characters', inputSchema: { size: z.number() } },
    async ({ size }) => ({ content: [{ type: 'text', text: 'x'.repeat(size) }] }),
  );
  if (options.crash) {
    server.registerTool('crash', { description: 'Ends the server process mid-call' }, async () => {
      process.stderr.write('boom: the test server crashed\n');
      process.exit(3);
    });
  }
}
