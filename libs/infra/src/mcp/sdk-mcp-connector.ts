import { Injectable } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { guardedFetch } from '../common/guarded-fetch.js';
import { loadOnce } from '../common/load-once.js';
import { boundedText, type McpLaunch, McpTexts, tailText } from '#core/mcp/mcp-rules.js';
import {
  type McpCallResult,
  type McpConnection,
  McpConnectionLost,
  McpConnector,
  type McpToolInfo,
} from '#core/ports/mcp-connector.port.js';

/** How long connecting (start, handshake, tool list) may take. */
const CONNECT_TIMEOUT_MS = 30_000;
/** How long one tool call may take without progress. */
const CALL_TIMEOUT_MS = 300_000;
const CLIENT_INFO = { name: 'svc-server', version: '1' };

interface Sdk {
  Client: typeof Client;
  StdioClientTransport: typeof StdioClientTransport;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  StreamableHTTPError: typeof StreamableHTTPError;
  McpError: typeof McpError;
  ErrorCode: typeof ErrorCode;
}

/**
 * The SDK, loaded at the first connection rather than with the server: many starts connect
 * no MCP server, and importing it is a noticeable share of the start-up time.
 */
const loadSdk = loadOnce(async (): Promise<Sdk> => {
  const [client, stdio, http, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    StreamableHTTPError: http.StreamableHTTPError,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
  };
});

/** MCP connections through the official SDK's client: stdio processes and streamable HTTP. */
@Injectable()
export class SdkMcpConnector extends McpConnector {
  async connect(launch: McpLaunch, onLost: (reason: string) => void): Promise<McpConnection> {
    const sdk = await loadSdk();
    const { Client, StdioClientTransport, StreamableHTTPClientTransport, ...errors } = sdk;
    let stderr = '';
    const transport: Transport =
      launch.transport === 'stdio'
        ? new StdioClientTransport({
            command: launch.command,
            args: launch.args,
            env: launch.env,
            cwd: launch.cwd,
            stderr: 'pipe',
          })
        : new StreamableHTTPClientTransport(new URL(launch.url), {
            requestInit: { headers: launch.headers },
            ...(launch.refuseAddress ? { fetch: guardedFetch(launch.refuseAddress) } : {}),
          });
    if (transport instanceof StdioClientTransport) {
      // Only the latest output is kept: it says why a process stopped, and a chatty one cannot fill memory.
      transport.stderr?.on('data', (chunk: Buffer) => {
        stderr = tailText(stderr + chunk.toString('utf8'));
      });
    }
    const client = new Client(CLIENT_INFO);
    let closing = false;
    let lost = false;
    const reason = () => (stderr.trim() ? `${McpTexts.exited} ${stderr.trim()}` : McpTexts.exited);
    client.onclose = () => {
      if (closing || lost) return;
      lost = true;
      onLost(reason());
    };
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
      const tools = await listAllTools(client);
      const connection: McpConnection = {
        tools,
        call: async (tool, args, signal) => {
          try {
            return resultText(
              await client.callTool({ name: tool, arguments: args }, undefined, {
                signal,
                timeout: CALL_TIMEOUT_MS,
                resetTimeoutOnProgress: true,
              }),
            );
          } catch (err) {
            if (signal.aborted) throw err;
            if (lost || isConnectionFailure(errors, err)) throw new McpConnectionLost(lost ? reason() : messageOf(err));
            throw err;
          }
        },
        close: async () => {
          closing = true;
          await client.close();
        },
      };
      return connection;
    } catch (err) {
      closing = true;
      await client.close().catch(() => undefined);
      if (launch.transport === 'http') throw new Error(httpFailure(sdk, err), { cause: err });
      const detail = stderr.trim() ? ` (${tailText(stderr.trim(), 500)})` : '';
      throw new Error(`${messageOf(err)}${detail}`, { cause: err });
    }
  }
}

async function listAllTools(client: Client): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout: CONNECT_TIMEOUT_MS });
    for (const tool of page.tools) {
      tools.push({
        name: tool.name,
        description: tool.description ?? tool.title ?? tool.name,
        inputSchema: tool.inputSchema as Record<string, unknown>,
      });
    }
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** The call's content as text: text parts as they are, other parts named, structured content as JSON. */
function resultText(result: Record<string, unknown>): McpCallResult {
  const parts: string[] = [];
  for (const item of (result.content as Array<Record<string, unknown>> | undefined) ?? []) {
    if (item.type === 'text' && typeof item.text === 'string') parts.push(item.text);
    else if (item.type === 'resource' && typeof (item.resource as { text?: unknown })?.text === 'string')
      parts.push((item.resource as { text: string }).text);
    else if (item.type === 'resource_link') parts.push(`[resource ${String(item.uri)}]`);
    else parts.push(`[${String(item.type)} content]`);
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  if (parts.length === 0 && 'toolResult' in result) parts.push(JSON.stringify(result.toolResult));
  return { text: boundedText(parts.join('\n')), isError: result.isError === true };
}

/** The server is gone or unreachable (as opposed to the tool or its arguments failing). */
function isConnectionFailure({ McpError, ErrorCode }: Pick<Sdk, 'McpError' | 'ErrorCode'>, err: unknown): boolean {
  if (err instanceof McpError) return err.code === ErrorCode.ConnectionClosed;
  if (!(err instanceof Error)) return false;
  return (
    err instanceof TypeError ||
    /StreamableHTTP|ECONNREFUSED|ECONNRESET|fetch failed/i.test(`${err.name} ${err.message}`)
  );
}

/**
 * Why connecting to an HTTP server failed, in words of our own: its status, or the network
 * error, or an MCP error it sent, never the body of what it answered (the address may be a
 * service that is not an MCP server at all, and its reply is none of the caller's business).
 */
function httpFailure(
  { StreamableHTTPError, McpError }: Pick<Sdk, 'StreamableHTTPError' | 'McpError'>,
  err: unknown,
): string {
  if (err instanceof StreamableHTTPError) {
    return typeof err.code === 'number' && err.code > 0
      ? `The server answered HTTP ${err.code} (its reply is not shown)`
      : 'The server did not answer as an MCP server';
  }
  if (err instanceof McpError) return err.message.slice(0, 300);
  if (err instanceof TypeError) {
    const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
    const why = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
    return `Could not connect to the server${why ? ` (${tailText(why, 200)})` : ''}`;
  }
  return 'The server did not answer as an MCP server';
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
