/**
 * Weights of a keyword query's words, and which chunks to rank (docs/api/knowledge.md, "Search").
 * `ts_rank_cd` alone counts how often and how close any query word occurs, whatever the word: a
 * question's common words ("the", "how", "year", 的, 天…) then outrank the one chunk holding its
 * rare ones (a name, a product), and the ranked candidates themselves may miss it. Each word gets
 * the inverse document frequency weight of BM25 from the number of chunks holding it (kept at
 * write time: `knowledge_lexeme`), a chunk's score is the sum of the weights of the words it
 * holds, and the candidates to rank are first every chunk holding the rarest words.
 */

export interface KeywordPlan {
  /** Each lexeme's weight, in the query's order. */
  idf: number[];
  /** The lexemes whose every chunk is ranked (rarest first, their counts adding up within the candidate budget). */
  rare: string[];
  /** The other lexemes some chunk holds (rarest first). */
  others: string[];
  /** Most chunks ranked among those holding `others` but none of `rare`. */
  othersBudget: number;
}

/**
 * `counts[i]`: chunks holding `lexemes[i]` (exact); `chunks`: chunks searched; `budget`: most
 * candidates ranked; `limit`: hits wanted.
 *
 * The chunks holding a rare word are all ranked; the rest of the budget goes to chunks holding
 * only other words, in the order the index finds them. When those cannot reach the hits wanted
 * (every rare-word chunk scores at least the smallest rare weight, which is more than all other
 * weights together) only as many are ranked as may fill the hits the rare words leave empty.
 */
export function keywordPlan(
  lexemes: readonly string[],
  counts: readonly number[],
  chunks: number,
  budget: number,
  limit: number,
): KeywordPlan {
  const n = Math.max(chunks, ...counts);
  const idf = counts.map((df) => Math.log(1 + (n - df + 0.5) / (df + 0.5)));
  const rare: number[] = [];
  const others: number[] = [];
  let total = 0;
  for (const i of lexemes.map((_, i) => i).sort((a, b) => counts[a]! - counts[b]! || a - b)) {
    const df = counts[i]!;
    if (df === 0) continue;
    if (others.length === 0 && total + df <= budget) {
      total += df;
      rare.push(i);
    } else others.push(i);
  }
  let othersBudget = others.length === 0 ? 0 : budget - total;
  if (rare.length > 0 && others.length > 0) {
    const rareFloor = Math.min(...rare.map((i) => idf[i]!));
    const othersCeiling = others.reduce((sum, i) => sum + idf[i]!, 0);
    // Chunks holding a rare word: at least the largest rare count of them.
    const rareChunks = Math.max(...rare.map((i) => counts[i]!));
    if (rareFloor > othersCeiling) othersBudget = Math.min(othersBudget, Math.max(0, limit - rareChunks));
  }
  return { idf, rare: rare.map((i) => lexemes[i]!), others: others.map((i) => lexemes[i]!), othersBudget };
}

/** A lexeme as written in a tsquery literal (`'it''s'`, lexemes.ts) back to its text (`it's`). */
export function unquoteLexeme(quoted: string): string {
  return quoted.slice(1, -1).replace(/''/g, "'").replace(/\\\\/g, '\\');
}
