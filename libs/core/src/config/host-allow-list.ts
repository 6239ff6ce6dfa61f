import { isIP } from 'node:net';

/**
 * An operator's list of hosts that an outbound fetch may reach although they are loopback,
 * private or link-local (`SVC_MCP_ALLOW`): comma-separated host names (`mcp.internal`),
 * `*.domain` (the domain's sub-domains, not the domain itself), IP addresses and CIDR ranges
 * (`10.0.0.0/8`, `fd00::/8`).
 */
export interface HostAllowList {
  /** The entries as written (for messages). */
  readonly entries: readonly string[];
  /** Whether `host` (a name as in the URL, lower case) or one of its resolved `address`es is listed. */
  allows(host: string, address?: string): boolean;
}

type Entry =
  | { kind: 'name'; name: string }
  | { kind: 'suffix'; suffix: string }
  | { kind: 'range'; bytes: Uint8Array; bits: number };

/** Parses the list; answers the problem with the first bad entry instead. */
export function parseHostAllowList(raw: string | undefined): HostAllowList | string {
  const items = (raw ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  const entries: Entry[] = [];
  for (const item of items) {
    const entry = parseEntry(item);
    if (entry === null) return `"${item}" is not a host name, *.domain, IP address or CIDR range`;
    entries.push(entry);
  }
  return {
    entries: items,
    allows(host: string, address?: string): boolean {
      const name = host
        .replace(/^\[|\]$/g, '')
        .replace(/\.$/, '')
        .toLowerCase();
      for (const entry of entries) {
        if (entry.kind === 'name' && entry.name === name) return true;
        if (entry.kind === 'suffix' && name.endsWith(entry.suffix)) return true;
        if (entry.kind === 'range') {
          for (const candidate of [name, address]) {
            const bytes = candidate === undefined ? null : addressBytes(candidate);
            if (bytes && inRange(bytes, entry)) return true;
          }
        }
      }
      return false;
    },
  };
}

function parseEntry(item: string): Entry | null {
  if (item.startsWith('*.')) {
    const domain = item.slice(2);
    return isHostName(domain) ? { kind: 'suffix', suffix: `.${domain}` } : null;
  }
  const slash = item.indexOf('/');
  const addressPart = (slash >= 0 ? item.slice(0, slash) : item).replace(/^\[|\]$/g, '');
  const bytes = addressBytes(addressPart);
  if (bytes) {
    const max = bytes.length * 8;
    const bitsText = slash >= 0 ? item.slice(slash + 1) : String(max);
    if (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > max) return null;
    return { kind: 'range', bytes, bits: Number(bitsText) };
  }
  return slash < 0 && isHostName(item) ? { kind: 'name', name: item.replace(/\.$/, '') } : null;
}

function isHostName(name: string): boolean {
  return /^(?=.{1,253}\.?$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/.test(
    name,
  );
}

/** An IP address as bytes (IPv4-mapped IPv6 addresses as their IPv4 bytes); null when it is not one. */
function addressBytes(text: string): Uint8Array | null {
  const ip = text.replace(/^\[|\]$/g, '').split('%')[0]!;
  const family = isIP(ip);
  if (family === 4) return Uint8Array.from(ip.split('.').map(Number));
  if (family !== 6) return null;
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const groups = (s: string | undefined): number[] => {
    if (s === undefined || s === '') return [];
    const out: number[] = [];
    for (const part of s.split(':')) {
      if (part.includes('.')) {
        const v4 = part.split('.').map(Number);
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else out.push(parseInt(part, 16));
    }
    return out;
  };
  const left = groups(head);
  const right = groups(tail);
  const all =
    tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  const mapped = bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}

function inRange(bytes: Uint8Array, range: { bytes: Uint8Array; bits: number }): boolean {
  if (bytes.length !== range.bytes.length) return false;
  for (let bit = 0; bit < range.bits; bit++) {
    const mask = 0x80 >> (bit % 8);
    if ((bytes[bit >> 3]! & mask) !== (range.bytes[bit >> 3]! & mask)) return false;
  }
  return true;
}
