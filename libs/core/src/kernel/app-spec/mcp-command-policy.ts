import type { McpServerDefinition } from './app-spec.js';

/**
 * The MCP command policy: the one rule every door that can set or change an MCP server
 * definition asks before anything is stored or started (install, import, packages, the Store
 * and its updates, spec and override edits, reinstall, the configuration's `mcpServers`,
 * `test-mcp` with inline servers).
 *
 * A definition that runs a command on this host (stdio) is allowed only where the operator
 * allows it (SVC_ALLOW_MCP_COMMANDS=1) — unless it is exactly the command already stored for the
 * same server, which an edit of other fields (a description, a prompt) keeps as it is. Streamable
 * HTTP servers are always allowed.
 */
export function runsCommand(def: McpServerDefinition | null | undefined): boolean {
  return typeof def?.command === 'string';
}

/** What starts the process: command, arguments, environment and folder (key order ignored). */
function launchIdentity(def: McpServerDefinition): string {
  const env = Object.entries(def.env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([def.command, def.args ?? [], env, def.cwd ?? null]);
}

/**
 * Whether `next` would run a command that `current` (the stored definition of the same server,
 * if any) does not already run as it is.
 */
export function addsCommand(
  next: McpServerDefinition | null | undefined,
  current?: McpServerDefinition | null,
): boolean {
  if (!runsCommand(next)) return false;
  return !runsCommand(current) || launchIdentity(next!) !== launchIdentity(current!);
}

/** A spec's server definition, for an MCP app only (the other types start no server). */
export function serverOf(spec: { type: string; mcp_server?: McpServerDefinition } | null | undefined) {
  return spec?.type === 'mcp' ? spec.mcp_server : undefined;
}

/** Whether the policy refuses `next` given what is stored (`current`) and the operator's switch. */
export function refusesCommand(
  allowMcpCommands: boolean,
  next: McpServerDefinition | null | undefined,
  current?: McpServerDefinition | null,
): boolean {
  return !allowMcpCommands && addsCommand(next, current);
}

export const McpPolicyTexts = {
  install:
    'Installing an MCP server that runs a command on this computer is blocked for remote requests by this server (the operator can allow it with SVC_ALLOW_MCP_COMMANDS=1).',
  change:
    'Changing an MCP server to run a command on this computer is blocked for remote requests by this server (the operator can allow it with SVC_ALLOW_MCP_COMMANDS=1).',
  update: (version: string) =>
    `Version ${version} runs its MCP server as a command on this computer, which this server blocks (the operator can allow it with SVC_ALLOW_MCP_COMMANDS=1); the update is held.`,
} as const;
