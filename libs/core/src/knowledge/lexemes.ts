/**
 * The words of a text for the keyword index, made by the server rather than by Postgres' text
 * parser, so that both database modes index alike and languages written without spaces
 * (Chinese, Japanese, Thai…) are split into words: `Intl.Segmenter` (ICU data ships with Node)
 * finds the words, which are lower-cased and kept whole (the 'simple' configuration: no stemming,
 * no stop words). The index holds them as a `tsvector` literal with positions; a query becomes a
 * `tsquery` that matches any of its words, ranked by how rare the words a chunk holds are, then by
 * `ts_rank_cd` (docs/api/knowledge.md, "Search").
 */

const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' });

/** Postgres' limits: a lexeme is at most 2 KB, positions go up to 16383, at most 256 per lexeme. */
const MAX_LEXEME_CHARS = 200;
const MAX_POSITION = 16383;
const MAX_POSITIONS_PER_LEXEME = 255;

/** Letters or digits (of any script) somewhere in the segment: a word, not punctuation or space. */
const WORDY = /[\p{L}\p{N}]/u;
/** Characters of scripts written without spaces between words: each such word is also indexed by its characters. */
const HAN_KANA = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/** The words of `text`, in order, lower-cased. */
export function words(text: string): string[] {
  const out: string[] = [];
  // Runs of two or more punctuation or symbol characters carry no word: one space each, so a
  // text made of them (say two million `&`) is not segmented character by character.
  const plain = text.normalize('NFKC').replace(/[^\p{L}\p{N}\p{M}\s]{2,}/gu, ' ');
  for (const seg of segmenter.segment(plain)) {
    if (!seg.isWordLike && !WORDY.test(seg.segment)) continue;
    const word = seg.segment.toLowerCase().replace(/[^\p{L}\p{N}\p{M}_]/gu, '');
    if (word === '' || word.length > MAX_LEXEME_CHARS) continue;
    out.push(word);
  }
  return out;
}

/**
 * The lexemes of one word: the word, plus its single characters when it is a Han or Kana word
 * of several (ICU's dictionary may join what a query splits, or the other way round; single
 * characters keep such a query finding the text, ranked below whole-word matches).
 */
function lexemesOf(word: string): string[] {
  if (!HAN_KANA.test(word) || [...word].length < 2) return [word];
  return [word, ...[...word].filter((c) => HAN_KANA.test(c))];
}

/** A lexeme quoted for a tsvector or tsquery literal. */
function quote(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** The `tsvector` literal of a text: each lexeme with its positions. */
export function tsvectorLiteral(text: string): string {
  const positions = new Map<string, number[]>();
  let position = 0;
  for (const word of words(text)) {
    position = Math.min(position + 1, MAX_POSITION);
    for (const lexeme of lexemesOf(word)) {
      const list = positions.get(lexeme) ?? [];
      if (list.length < MAX_POSITIONS_PER_LEXEME && list[list.length - 1] !== position) list.push(position);
      positions.set(lexeme, list);
    }
  }
  return [...positions].map(([lexeme, list]) => `${quote(lexeme)}:${list.join(',')}`).join(' ');
}

/**
 * The `tsquery` literal of a question: any of its words (whole words, and for Han/Kana words their
 * characters), or null when it has none.
 */
export function tsqueryLiteral(query: string): string | null {
  const lexemes = new Set<string>();
  for (const word of words(query)) for (const lexeme of lexemesOf(word)) lexemes.add(lexeme);
  if (lexemes.size === 0) return null;
  return [...lexemes].slice(0, 64).map(quote).join(' | ');
}
