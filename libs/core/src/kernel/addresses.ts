/**
 * Which IP addresses are internal: loopback, private, link-local (cloud metadata),
 * unique-local, unspecified, multicast and reserved. Every outbound fetch that must not reach
 * inside (Store sources, MCP servers, the AI browser) asks these after DNS resolution.
 */

function ipv4Parts(ip: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return null;
  const p = m.slice(1).map(Number);
  return p.every((n) => n <= 255) ? p : null;
}

function blockedV4([a, b]: number[]): boolean {
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b! >= 64 && b! <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b! >= 16 && b! <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) || // IETF protocol assignments
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a! >= 224 // multicast, reserved, broadcast
  );
}

/** Expands an IPv6 text form into eight 16-bit groups (null when it is not IPv6). */
function ipv6Groups(ip: string): number[] | null {
  let text = ip
    .replace(/^\[|\]$/g, '')
    .split('%')[0]!
    .toLowerCase();
  let tail: number[] = [];
  const v4 = /:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (v4) {
    const p = ipv4Parts(v4[1]!);
    if (!p) return null;
    tail = [(p[0]! << 8) | p[1]!, (p[2]! << 8) | p[3]!];
    text = text.slice(0, v4.index) + ':';
    if (text.endsWith('::')) text += '';
    else if (text.endsWith(':')) text = text.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const toGroups = (s: string) => (s === '' ? [] : s.split(':'));
  const head = toGroups(halves[0]!);
  const rest = halves.length === 2 ? toGroups(halves[1]!) : [];
  const want = 8 - tail.length;
  if (halves.length === 1 && head.length !== want) return null;
  if (head.length + rest.length > want) return null;
  const fill = halves.length === 2 ? new Array<string>(want - head.length - rest.length).fill('0') : [];
  const groups = [...head, ...fill, ...rest];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return [...groups.map((g) => parseInt(g, 16)), ...tail];
}

/** True for loopback, private, link-local, unique-local, unspecified, multicast and reserved addresses. */
export function isBlockedAddress(ip: string): boolean {
  const v4 = ipv4Parts(ip);
  if (v4) return blockedV4(v4);
  const g = ipv6Groups(ip);
  if (!g) return true; // not an address we understand: refuse
  if (g.every((x) => x === 0)) return true; // ::
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return true; // ::1
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): judge the IPv4 address.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
    return blockedV4([g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff]);
  }
  // IPv4-translated (::ffff:0:a.b.c.d) carries an IPv4 address too.
  if (g.slice(0, 4).every((x) => x === 0) && g[4] === 0xffff && g[5] === 0) {
    return blockedV4([g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff]);
  }
  if (g[0] === 0x64 && g[1] === 0xff9b) return blockedV4([g[6]! >> 8, g[6]! & 0xff]); // NAT64
  const first = g[0]!;
  return (
    (first & 0xfe00) === 0xfc00 || // unique-local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xffc0) === 0xfec0 || // site-local (deprecated)
    (first & 0xff00) === 0xff00 || // multicast
    first === 0x2002 || // 6to4 can wrap a private IPv4 address
    (first === 0x2001 && g[1] === 0xdb8) // documentation
  );
}

/** True when the text is an IP literal (v4, or v6 with or without brackets). */
export function isIpLiteral(host: string): boolean {
  return ipv4Parts(host) !== null || (host.includes(':') && ipv6Groups(host) !== null);
}
