import type { StoreEntry, StoreListingDto } from '#contracts/store.js';

export const PAGE_SIZE_DEFAULT = 20;
export const PAGE_SIZE_MAX = 100;

/** An entry with the source it came from, as held in memory for queries. */
export interface SourcedEntry {
  registryId: string;
  entry: StoreEntry;
  /** Lower-cased name, description, tags and i18n names: what `search` matches. */
  haystack: string;
  /** Lower-cased names in every language: a match here ranks first. */
  names: string;
}

export interface StoreQuery {
  search?: string;
  type?: string;
  category?: string;
  /** Comma-separated list for the legacy list; an entry matches with any one. */
  tags?: string[];
  locale?: string;
  page?: number;
  pageSize?: number;
}

export interface QueryPage {
  items: StoreListingDto[];
  total: number;
  hasMore: boolean;
  groups: Array<{ type: string; count: number; hasMore: boolean }>;
}

export function sourced(registryId: string, entry: StoreEntry): SourcedEntry {
  const words = [entry.name, entry.display_name ?? '', entry.description, entry.slug, ...entry.tags];
  const names = [entry.name, entry.display_name ?? '', entry.slug];
  for (const block of Object.values(entry.i18n ?? {})) {
    words.push(block.name ?? '', block.description ?? '');
    names.push(block.name ?? '');
  }
  return { registryId, entry, haystack: words.join('\n').toLowerCase(), names: names.join('\n').toLowerCase() };
}

/**
 * The i18n block for a locale: the exact tag, else the first tag of the same language
 * (`en` finds `en-US`, `en-GB` finds `en-US`), else none (the entry's own text is canonical).
 */
export function resolveLocale(
  i18n: StoreEntry['i18n'],
  locale: string | undefined,
): { name?: string; description?: string } | null {
  if (!i18n || !locale) return null;
  const wanted = locale.toLowerCase();
  const tags = Object.keys(i18n);
  const exact = tags.find((t) => t.toLowerCase() === wanted);
  if (exact) return i18n[exact]!;
  const language = wanted.split(/[-_]/)[0];
  const sameLanguage = tags.find((t) => t.toLowerCase().split(/[-_]/)[0] === language);
  return sameLanguage ? i18n[sameLanguage]! : null;
}

/** The entry as listed for a locale: name and description translated where the entry has them. */
export function localized(item: SourcedEntry, locale: string | undefined): StoreListingDto {
  const block = resolveLocale(item.entry.i18n, locale);
  return {
    ...item.entry,
    ...(block?.name ? { name: block.name } : {}),
    ...(block?.description ? { description: block.description } : {}),
    registryId: item.registryId,
  };
}

/** Every search word must occur in the entry's text (any order, case-insensitive). */
function matches(item: SourcedEntry, q: StoreQuery, words: string[], withType: boolean): boolean {
  const e = item.entry;
  if (withType && q.type && e.type !== q.type) return false;
  if (q.category && e.category !== q.category) return false;
  if (q.tags && q.tags.length > 0) {
    const tags = new Set(e.tags.map((t) => t.toLowerCase()));
    if (!q.tags.some((t) => tags.has(t.toLowerCase()))) return false;
  }
  return words.every((w) => item.haystack.includes(w));
}

export function searchWords(search: string | undefined): string[] {
  return (search ?? '')
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== '');
}

/**
 * Orders search hits (stable): the whole phrase in a name first, then every word in a name,
 * then the rest in catalog order.
 */
function rank(hits: SourcedEntry[], words: string[]): void {
  const phrase = words.join(' ');
  const score = (item: SourcedEntry) =>
    item.names.includes(phrase) ? 2 : words.every((w) => item.names.includes(w)) ? 1 : 0;
  const scored = hits.map((item, i) => ({ item, i, s: score(item) }));
  scored.sort((a, b) => b.s - a.s || a.i - b.i);
  scored.forEach((x, i) => (hits[i] = x.item));
}

/** Every entry matching the filters (the legacy non-paginated list): search hits ranked, else catalog order. */
export function filterEntries(entries: readonly SourcedEntry[], q: StoreQuery): StoreListingDto[] {
  const words = searchWords(q.search);
  const hits = entries.filter((item) => matches(item, q, words, true));
  if (words.length > 0) rank(hits, words);
  return hits.map((item) => localized(item, q.locale));
}

/**
 * One page of the federated catalog. `groups` counts the matches of each type with every
 * filter but `type` applied, so a client can show per-type tabs; `hasMore` of a group says
 * whether it has more than one page.
 */
export function queryEntries(entries: readonly SourcedEntry[], q: StoreQuery): QueryPage {
  const page = Math.max(1, Math.floor(q.page ?? 1));
  const pageSize = Math.min(PAGE_SIZE_MAX, Math.max(1, Math.floor(q.pageSize ?? PAGE_SIZE_DEFAULT)));
  const words = searchWords(q.search);
  const counts = new Map<string, number>();
  const hits: SourcedEntry[] = [];
  for (const item of entries) {
    if (!matches(item, q, words, false)) continue;
    counts.set(item.entry.type, (counts.get(item.entry.type) ?? 0) + 1);
    if (!q.type || item.entry.type === q.type) hits.push(item);
  }
  if (words.length > 0) rank(hits, words);
  const start = (page - 1) * pageSize;
  return {
    items: hits.slice(start, start + pageSize).map((item) => localized(item, q.locale)),
    total: hits.length,
    hasMore: start + pageSize < hits.length,
    groups: [...counts].map(([type, count]) => ({ type, count, hasMore: count > pageSize })),
  };
}

/** Slash-command names are the skills context's rule (a skill's folder is its command). */
export { commandName } from '../skills/skill-rules.js';
