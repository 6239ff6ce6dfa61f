/**
 * A real stdio MCP server for the tests (run as `node dist/libs/testing/src/mcp-stdio-server.js`):
 * the tools of `registerTestTools`, `crash` included. Logs go to stderr only.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { registerTestTools } from './mcp-tools.js';

const server = new McpServer({ name: 'svc-test-stdio', version: '1.0.0' });
registerTestTools(server, { crash: true });
await server.connect(new StdioServerTransport());
process.stderr.write('test stdio MCP server ready\n');
