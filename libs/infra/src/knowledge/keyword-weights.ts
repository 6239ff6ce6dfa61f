/**
 * Weights of a keyword query's words (docs/api/knowledge.md, "Search"). `ts_rank_cd` alone counts
 * how often and how close any query word occurs, whatever the word: a question's common words
 * ("the", "how", "year", 的, 天…) then outrank the one chunk holding its rare ones (a name, a
 * product), and the ranked candidates themselves may miss it. Each word gets the inverse document
 * frequency weight of BM25 from the number of chunks holding it (counted up to a cap), a chunk's
 * score is the sum of the weights of the words it holds, and the candidates to rank are first the
 * chunks holding the rarest words.
 */

export interface LexemeWeights {
  /** Each lexeme's weight, in the query's order. */
  idf: number[];
  /** The lexemes whose every match is ranked (rarest first, their counts within the candidate budget). */
  rare: string[];
}

/**
 * `counts[i]`: chunks holding `lexemes[i]`, counted up to `cap` (a count at the cap means "at least");
 * `chunks`: chunks searched; `budget`: most candidates ranked.
 */
export function lexemeWeights(
  lexemes: readonly string[],
  counts: readonly number[],
  chunks: number,
  cap: number,
  budget: number,
): LexemeWeights {
  const n = Math.max(chunks, ...counts);
  const idf = counts.map((df) => Math.log(1 + (n - df + 0.5) / (df + 0.5)));
  const rare: string[] = [];
  let total = 0;
  for (const i of lexemes.map((_, i) => i).sort((a, b) => counts[a]! - counts[b]! || a - b)) {
    const df = counts[i]!;
    if (df === 0) continue;
    // A capped count may stand for any number of chunks: such a word is never "rare".
    if (df >= cap || total + df > budget) break;
    total += df;
    rare.push(lexemes[i]!);
  }
  return { idf, rare };
}

/** A lexeme as written in a tsquery literal (`'it''s'`, lexemes.ts) back to its text (`it's`). */
export function unquoteLexeme(quoted: string): string {
  return quoted.slice(1, -1).replace(/''/g, "'").replace(/\\\\/g, '\\');
}
