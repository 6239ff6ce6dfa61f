/** Wire shapes of MCP servers (docs/api/mcp-and-skills.md, "MCP servers"). */

export const MCP_STATUS_CHANNEL = 'agent:mcp-status';

/** `connecting` while starting, `connected` with its tools, `failed` with the error, `stopped` once closed. */
export type McpServerState = 'connecting' | 'connected' | 'failed' | 'stopped';

export interface McpToolDto {
  name: string;
  description: string;
}

export interface McpServerStatusDto {
  /** The server's name as its tools carry it (`mcp__<name>__<tool>`). */
  name: string;
  status: McpServerState;
  tools: McpToolDto[];
  error: string | null;
  /** The `mcp` app that defines it; absent for servers given to test-mcp. */
  appId?: string;
}

/** `agent:mcp-status`: every server this process knows, after one of them changed. */
export interface McpStatusEvent {
  servers: McpServerStatusDto[];
  timestamp: number;
}
