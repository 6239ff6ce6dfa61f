import type { KeywordHit } from './knowledge.ports.js';

/** Reciprocal rank fusion: a hit at rank r (from 1) in a list adds 1 / (RRF_K + r). */
export const RRF_K = 60;

/** Fuses ranked lists by reciprocal rank: each hit's score is the sum of 1 / (RRF_K + rank) over the lists holding it. */
export function fuseByRank(lists: KeywordHit[][], topK: number): KeywordHit[] {
  const fused = new Map<string, { hit: KeywordHit; score: number; best: number }>();
  for (const list of lists) {
    list.forEach((hit, i) => {
      const entry = fused.get(hit.chunkId) ?? { hit, score: 0, best: Infinity };
      entry.score += 1 / (RRF_K + i + 1);
      entry.best = Math.min(entry.best, i);
      fused.set(hit.chunkId, entry);
    });
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.best - b.best || (a.hit.chunkId < b.hit.chunkId ? -1 : 1))
    .slice(0, topK)
    .map((e) => ({ ...e.hit, score: Number(e.score.toFixed(6)) }));
}
