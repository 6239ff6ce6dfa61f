import type { HostAllowList } from '../config/host-allow-list.js';

export const McpAddressTexts = {
  internal: (host: string, address: string) =>
    `Refused: ${host} is a loopback, private or link-local address (${address}); an MCP server given to test-mcp may reach it only when the operator allows it with SVC_MCP_ALLOW.`,
} as const;

/**
 * Why an MCP server given inline to `test-mcp` may not be connected to, or null: its host is,
 * or resolves to, a loopback, private or link-local address (`blockedAddressOf`, the store's
 * rule) that the operator's allow-list does not name. The name is resolved again when the
 * connection opens; the check keeps a caller from pointing the server at this host's or its
 * network's internal services and reading what they answer.
 */
export async function internalAddressProblem(
  url: string,
  allow: HostAllowList,
  blockedAddressOf: (hostname: string) => Promise<string | null>,
): Promise<string | null> {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return null; // the definition's own check answers a bad URL
  }
  if (allow.allows(host)) return null;
  const blocked = await blockedAddressOf(host);
  if (blocked === null || allow.allows(host, blocked)) return null;
  return McpAddressTexts.internal(host, blocked);
}
