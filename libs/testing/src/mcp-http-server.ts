import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { registerTestTools } from './mcp-tools.js';
import { REPO_ROOT } from './test-server.js';

/** The built stdio test server, for `mcp_server: {command: node, args: [MCP_STDIO_SERVER]}`. */
export const MCP_STDIO_SERVER = `${REPO_ROOT}/dist/libs/testing/src/mcp-stdio-server.js`;

/**
 * A real streamable-HTTP MCP server on loopback (stateless: one SDK server per request),
 * answering only requests that carry `Authorization: Bearer <token>`.
 */
export class HttpMcpServer {
  /** Requests that reached it, and how many were refused for a wrong token. */
  requests = 0;
  refused = 0;

  private constructor(
    private readonly server: http.Server,
    readonly token: string,
  ) {}

  static async start(token = 'mcp-test-token'): Promise<HttpMcpServer> {
    const server = http.createServer();
    const mcp = new HttpMcpServer(server, token);
    server.on('request', (req, res) => {
      mcp.requests += 1;
      if (req.headers.authorization !== `Bearer ${token}`) {
        mcp.refused += 1;
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
        return;
      }
      const sdk = new McpServer({ name: 'svc-test-http', version: '1.0.0' });
      registerTestTools(sdk, { crash: false });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void sdk.close();
      });
      void sdk
        .connect(transport)
        .then(() => transport.handleRequest(req, res))
        .catch(() => {
          if (!res.headersSent) res.writeHead(500).end();
        });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return mcp;
  }

  /** The MCP endpoint. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
