import { createHash } from 'node:crypto';

/**
 * The scripted model server's embeddings: a deterministic "hashed bag of concepts". Each word
 * (lower-cased; a Han or Kana character counts as a word) is mapped to its concept — the first word
 * of the synonym group holding it, or itself — and the concept adds ±1 to one of `dimensions`
 * coordinates picked by its hash; the vector is scaled to unit length. Texts sharing words or
 * synonyms are near (cosine > 0); texts with neither are (nearly) orthogonal. Tests give synonym
 * groups to make "semantic" nearness without shared words.
 */
export const SCRIPTED_EMBEDDING_DIMENSIONS = 64;

export function scriptedEmbedding(
  text: string,
  synonyms: readonly (readonly string[])[] = [],
  dimensions = SCRIPTED_EMBEDDING_DIMENSIONS,
): number[] {
  const concept = new Map<string, string>();
  for (const group of synonyms) for (const word of group) concept.set(word.toLowerCase(), group[0]!.toLowerCase());
  const v = new Array<number>(dimensions).fill(0);
  const words =
    text.toLowerCase().match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]|[\p{L}\p{N}]+/gu) ?? [];
  for (const word of words) {
    const digest = createHash('sha256')
      .update(concept.get(word) ?? word)
      .digest();
    v[digest.readUInt32BE(0) % dimensions]! += digest[4]! & 1 ? 1 : -1;
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return norm === 0 ? v : v.map((x) => x / norm);
}
