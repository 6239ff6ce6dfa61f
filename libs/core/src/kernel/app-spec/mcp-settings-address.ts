import type { McpServerDefinition } from './app-spec.js';

const SETTING_REFERENCE = /\{\{\s*config\.([A-Za-z0-9_.-]+)\s*\}\}/g;

/** The setting keys a text names as `{{config.key}}`. */
function settingKeysIn(text: string): string[] {
  return [...text.matchAll(SETTING_REFERENCE)].map((m) => m[1]!);
}

/** Where an HTTP server definition connects, its settings filled in: the URL's origin (null for a command). */
function originOf(def: McpServerDefinition | undefined, settings: Record<string, unknown>): string | null {
  if (def?.url === undefined) return null;
  const url = def.url.replace(SETTING_REFERENCE, (_, key: string) => {
    const value = settings[key];
    return value === undefined || value === null ? '' : String(value);
  });
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** The stored settings a new version would send to another address, and that address. */
export interface SettingsToNewAddress {
  origin: string;
  keys: string[];
}

/**
 * Whether a new version of an app's MCP server sends the user's stored settings (the values its
 * URL and headers name as `{{config.key}}`, API keys above all) to an address they do not go to
 * today. A stored secret goes only where it was given for (docs/security.md): an update that moves
 * the server must not carry the settings along unasked. Null when nothing moves.
 */
export function settingsToNewAddress(
  current: McpServerDefinition | undefined,
  next: McpServerDefinition | undefined,
  settings: Record<string, unknown>,
): SettingsToNewAddress | null {
  const nextOrigin = originOf(next, settings);
  if (nextOrigin === null || nextOrigin === originOf(current, settings)) return null;
  const named = [next!.url!, ...Object.values(next!.headers ?? {})].flatMap(settingKeysIn);
  const keys = [...new Set(named)].filter((key) => {
    const value = settings[key];
    return value !== undefined && value !== null && value !== '';
  });
  return keys.length === 0 ? null : { origin: nextOrigin, keys: keys.sort() };
}
