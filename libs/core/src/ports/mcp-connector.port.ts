/** How one MCP server is started, resolved from an app's `mcp_server` and settings. */
export type McpLaunch =
  | {
      transport: 'stdio';
      command: string;
      args: string[];
      env: Record<string, string>;
      /** Where the process runs: the spec's `cwd` inside `root`, else `root` (checked by the path guard before it starts). */
      cwd: string;
      /** The app's space folder, which `cwd` must stay inside. */
      root: string;
    }
  | {
      transport: 'http';
      url: string;
      headers: Record<string, string>;
      /**
       * Checked against each address the connection itself resolves (no DNS rebinding between a
       * check and the connect): why that address is refused, or null.
       */
      refuseAddress?: (host: string, address: string) => string | null;
    };

/** One tool an MCP server offers, with its JSON schema. */
export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** A tool call's outcome as text for the model (content joined, bounded). */
export interface McpCallResult {
  text: string;
  isError: boolean;
}

/** The call failed because the connection is gone (the process died, the endpoint is unreachable). */
export class McpConnectionLost extends Error {}

/** A live connection to one MCP server. */
export interface McpConnection {
  /** The tools listed when the connection opened. */
  readonly tools: McpToolInfo[];
  /**
   * Calls a tool. A tool's own failure resolves with `isError`; a lost connection rejects
   * with McpConnectionLost; the signal aborts the call.
   */
  call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallResult>;
  /** Closes the connection (a stdio process is ended). */
  close(): Promise<void>;
}

/** Opens MCP client connections (stdio processes or streamable HTTP) with the MCP SDK. */
export abstract class McpConnector {
  /**
   * Connects and lists the tools. `onLost` is called once if the connection ends without
   * `close()` (say, the process crashed), with what it last wrote to stderr.
   */
  abstract connect(launch: McpLaunch, onLost: (reason: string) => void): Promise<McpConnection>;
}
