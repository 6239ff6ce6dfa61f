/** SHA-1 of a UTF-8 string (hex): small, synchronous, and available outside secure contexts (unlike crypto.subtle). */
export function sha1Hex(text: string): string {
  const bytes = new TextEncoder().encode(text);
  const words = new Uint32Array((((bytes.length + 8) >> 6) + 1) * 16);
  bytes.forEach((b, i) => (words[i >> 2]! |= b << (24 - (i % 4) * 8)));
  words[bytes.length >> 2]! |= 0x80 << (24 - (bytes.length % 4) * 8);
  words[words.length - 1] = bytes.length * 8;
  const h = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
  const w = new Uint32Array(80);
  const rotl = (x: number, n: number) => (x << n) | (x >>> (32 - n));
  for (let block = 0; block < words.length; block += 16) {
    for (let t = 0; t < 80; t++)
      w[t] = t < 16 ? words[block + t]! : rotl(w[t - 3]! ^ w[t - 8]! ^ w[t - 14]! ^ w[t - 16]!, 1);
    let [a, b, c, d, e] = h as [number, number, number, number, number];
    for (let t = 0; t < 80; t++) {
      const f = t < 20 ? (b & c) | (~b & d) : t < 40 ? b ^ c ^ d : t < 60 ? (b & c) | (b & d) | (c & d) : b ^ c ^ d;
      const k = t < 20 ? 0x5a827999 : t < 40 ? 0x6ed9eba1 : t < 60 ? 0x8f1bbcdc : 0xca62c1d6;
      const next = (rotl(a, 5) + f + e + k + w[t]!) | 0;
      [e, d, c, b, a] = [d, c, rotl(b, 30), a, next];
    }
    h[0] = (h[0]! + a) | 0;
    h[1] = (h[1]! + b) | 0;
    h[2] = (h[2]! + c) | 0;
    h[3] = (h[3]! + d) | 0;
    h[4] = (h[4]! + e) | 0;
  }
  return h.map((x) => (x >>> 0).toString(16).padStart(8, '0')).join('');
}

/**
 * Whether a model source came from the SVC_AI_* environment variables: its id is the seed id of
 * its own provider, URL and model (the server's `isSeededSource`, libs/core model-source-rules).
 */
export function isFromEnvironment(source: { id: string; provider: string; apiUrl: string; model: string }): boolean {
  const hex = sha1Hex(`svc:model-source-seed\n${source.provider}\n${source.apiUrl}\n${source.model}`).slice(0, 32);
  const bytes = hex.match(/../g)!.map((x) => parseInt(x, 16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const s = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
  return source.id === `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}
