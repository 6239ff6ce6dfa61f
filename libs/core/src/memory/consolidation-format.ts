/**
 * The consolidation exchange with the model, as pure functions: the prompt that shows the
 * current memory, the reply format, and the checks a reply must pass before anything on
 * disk changes.
 *
 * Reply format (the same one the prompt uses to show the current files):
 *
 *     === FILE: memory.md ===
 *     # now
 *     …
 *     === FILE: topics/<slug>.md ===
 *     …
 *     === KEEP: topics/<slug>.md ===
 *     === END ===
 *
 * `FILE` sections carry the whole new content of a file; `KEEP` keeps an existing topic page
 * as it is (so a large, still-accurate page need not be written out again). The reply is the
 * complete new set: an existing topic page neither written nor kept is removed (the snapshot
 * still has it). Text before the first marker and after `=== END ===` is ignored, as are code
 * fences around the whole reply or around one section.
 */

export const MEMORY_FILE = 'memory.md';
export const TOPICS_FOLDER = 'topics';
/** More topic pages than this in one reply is taken for a runaway reply. */
export const MAX_TOPICS = 200;
/** The longest topic slug. */
export const MAX_SLUG_LENGTH = 80;
/** A reply may drop at most this share of the content (merging duplicates, removing stale notes). */
export const MAX_SHRINK = 0.6;

/** The memory of a space as read from disk. Topic keys are file names without `.md`, as on disk. */
export interface MemoryContent {
  memory: string | null;
  topics: ReadonlyMap<string, string>;
}

export type ConsolidationFailure = 'invalid-response' | 'invalid-path' | 'too-many-topics' | 'shrunk' | 'changed';

export interface ParsedReply {
  memory: string;
  /** Slug → content of each written topic page. */
  topics: Map<string, string>;
  /** Slugs of existing topic pages to keep unchanged. */
  keep: Set<string>;
}

/** What a validated reply changes. */
export interface ConsolidationPlan {
  memory: string;
  /** Topic pages to write: slug → content. */
  write: Map<string, string>;
  /** Existing topic pages (names as on disk) kept as they are. */
  keep: Set<string>;
  /** Existing topic pages (names as on disk) to remove. */
  remove: Set<string>;
  oldBytes: number;
  newBytes: number;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; reason: ConsolidationFailure; detail: string };

const fail = (
  reason: ConsolidationFailure,
  detail: string,
): { ok: false; reason: ConsolidationFailure; detail: string } => ({
  ok: false,
  reason,
  detail,
});

export const bytesOf = (text: string): number => Buffer.byteLength(text, 'utf8');

export function totalBytes(content: MemoryContent): number {
  let total = content.memory === null ? 0 : bytesOf(content.memory);
  for (const text of content.topics.values()) total += bytesOf(text);
  return total;
}

/** A topic name as a file name: lower case, letters and digits of any script, single hyphens. */
export function slugifyTopic(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/-+$/, '');
}

// -------------------------------------------------------------------------------------------
// Prompt

export const CONSOLIDATION_SYSTEM_PROMPT = [
  "You consolidate the long-term memory of a workspace: notes an AI assistant keeps across every conversation in it (facts, decisions, the user's preferences, open work, history).",
  'You receive the current memory files and answer with the complete reorganized set, in exactly this format and nothing else:',
  '',
  '=== FILE: memory.md ===',
  '<full content of memory.md>',
  '=== FILE: topics/<slug>.md ===',
  '<full content of one topic page>',
  '=== KEEP: topics/<slug>.md ===',
  '=== END ===',
  '',
  'Rules:',
  '- memory.md is required. It starts with "# now" and holds only the current working state: a one-line summary of where things stand, the active subjects, patterns that keep applying, open problems. Keep it short (about 60 lines at most) and point to topic pages for detail.',
  '- Move durable detail and older history into topic pages, one page per subject. A slug is lower case with hyphens (for example "topics/build-setup.md"); only topics/<slug>.md pages exist, no other paths and no sub-folders.',
  '- "=== KEEP: topics/<slug>.md ===" (no content after it) keeps an existing topic page unchanged; use it for pages that need no change. Any existing page you neither write nor keep is deleted.',
  '- Preserve every fact, decision, preference, name, path, date and number that may still matter. Merge duplicates and drop only what is clearly obsolete or superseded. Never invent anything.',
  '- Write the notes in the language they are written in. Do not wrap the answer in code fences and do not comment on it.',
].join('\n');

/** The files as the model sees them, in the reply format. */
export function renderMemory(content: MemoryContent): string {
  const parts: string[] = [];
  parts.push(`=== FILE: ${MEMORY_FILE} ===`, (content.memory ?? '').trimEnd());
  for (const [name, text] of [...content.topics.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    parts.push(`=== FILE: ${TOPICS_FOLDER}/${name}.md ===`, text.trimEnd());
  }
  parts.push('=== END ===');
  return parts.join('\n');
}

export function consolidationRequest(content: MemoryContent, now: Date): string {
  return [
    `Current date: ${now.toISOString().slice(0, 10)}`,
    `The workspace memory holds ${totalBytes(content)} bytes in memory.md and ${content.topics.size} topic page(s):`,
    '',
    renderMemory(content),
    '',
    'Reorganize it following the rules and answer in the format.',
  ].join('\n');
}

// -------------------------------------------------------------------------------------------
// Reply

const MARKER = /^\s*={3,}\s*(FILE|KEEP)\s*:\s*(.*?)\s*={3,}\s*$/i;
/**
 * Longer lines are never a marker or END: the marker pattern backtracks in time cubic in the
 * length of a line that almost matches (`=== FILE: ` and thousands of `=`).
 */
const MAX_MARKER_LINE = 1_000;
const END = /^\s*={3,}\s*END\s*={3,}\s*$/i;
const FENCE_OPEN = /^\s*(`{3,}|~{3,})[\w+-]*\s*$/;
const FENCE_CLOSE = /^\s*(`{3,}|~{3,})\s*$/;

type Target = { kind: 'memory' } | { kind: 'topic'; slug: string };

/** Where a section header points: memory.md or a topic page; null for anything else. */
export function sectionTarget(raw: string): Target | null {
  let path = raw
    .trim()
    .replace(/^[`'"]+|[`'"]+$/g, '')
    .replace(/\\/g, '/')
    .trim();
  path = path.replace(/^(\.\/)+/, '');
  if (path.startsWith('.svc/')) path = path.slice('.svc/'.length);
  if (path.startsWith('memory/topics/')) path = path.slice('memory/'.length);
  if (path.toLowerCase() === MEMORY_FILE) return { kind: 'memory' };
  const match = /^topics\/([^/]+)$/i.exec(path);
  if (!match) return null;
  const name = match[1]!.replace(/\.md$/i, '');
  if (name === '.' || name === '..') return null;
  const slug = slugifyTopic(name);
  return slug === '' ? null : { kind: 'topic', slug };
}

/** Drops blank lines around a section and a code fence wrapped around all of it. */
function sectionBody(lines: string[]): string {
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start]!.trim() === '') start++;
  while (end > start && lines[end - 1]!.trim() === '') end--;
  if (end - start >= 2 && FENCE_OPEN.test(lines[start]!) && FENCE_CLOSE.test(lines[end - 1]!)) {
    start++;
    end--;
  }
  const body = lines.slice(start, end).join('\n');
  return body === '' ? '' : `${body}\n`;
}

/** Reads a reply in the format; refuses one without a usable memory.md or with a path outside the topics. */
export function parseConsolidationReply(reply: string): Checked<ParsedReply> {
  const lines = reply.replace(/\r\n?/g, '\n').split('\n');
  const sections: Array<{ verb: 'FILE' | 'KEEP'; path: string; lines: string[] }> = [];
  let fencedAround = false;
  let ended = false;
  for (const line of lines) {
    const short = line.length <= MAX_MARKER_LINE;
    const marker = short ? MARKER.exec(line) : null;
    if (marker) {
      sections.push({ verb: marker[1]!.toUpperCase() as 'FILE' | 'KEEP', path: marker[2]!, lines: [] });
      continue;
    }
    if (short && END.test(line)) {
      ended = true;
      break;
    }
    const current = sections[sections.length - 1];
    if (current) current.lines.push(line);
    else if (FENCE_OPEN.test(line)) fencedAround = true;
  }
  if (sections.length === 0) return fail('invalid-response', 'the reply has no "=== FILE: … ===" sections');
  // A fence opened before the first section closes after the last one when the reply has no END.
  const last = sections[sections.length - 1]!;
  if (fencedAround && !ended) {
    let end = last.lines.length;
    while (end > 0 && last.lines[end - 1]!.trim() === '') end--;
    if (end > 0 && FENCE_CLOSE.test(last.lines[end - 1]!)) last.lines.length = end - 1;
  }

  let memory: string | null = null;
  const topics = new Map<string, string>();
  const keep = new Set<string>();
  for (const section of sections) {
    const target = sectionTarget(section.path);
    if (!target)
      return fail(
        'invalid-path',
        `the reply writes "${section.path.slice(0, 200)}", which is not memory.md or topics/<name>.md`,
      );
    const body = sectionBody(section.lines);
    if (section.verb === 'KEEP') {
      if (target.kind === 'memory') return fail('invalid-response', 'memory.md cannot be kept; it must be rewritten');
      keep.add(target.slug);
      continue;
    }
    if (target.kind === 'memory') {
      if (memory !== null) return fail('invalid-response', 'the reply has memory.md twice');
      memory = body;
      continue;
    }
    if (body.trim() === '') continue; // an empty page is no page
    const previous = topics.get(target.slug);
    topics.set(target.slug, previous === undefined ? body : `${previous.trimEnd()}\n\n${body}`);
  }
  if (memory === null) return fail('invalid-response', 'the reply has no memory.md section');
  if (memory.trim() === '') return fail('invalid-response', 'the reply has an empty memory.md');
  for (const slug of topics.keys()) keep.delete(slug);
  if (topics.size > MAX_TOPICS)
    return fail('too-many-topics', `the reply has ${topics.size} topic pages (at most ${MAX_TOPICS})`);
  return { ok: true, value: { memory, topics, keep } };
}

/**
 * Checks a parsed reply against the memory it reorganizes and says what changes: pages kept
 * are matched to the existing ones by slug, the others are removed; a result that lost more
 * than MAX_SHRINK of the content is refused.
 */
export function planConsolidation(
  current: MemoryContent,
  reply: ParsedReply,
  maxShrink = MAX_SHRINK,
): Checked<ConsolidationPlan> {
  const bySlug = new Map<string, string>();
  for (const name of current.topics.keys()) if (!bySlug.has(slugifyTopic(name))) bySlug.set(slugifyTopic(name), name);
  const keep = new Set<string>();
  for (const slug of reply.keep) {
    const existing = bySlug.get(slug);
    if (existing !== undefined) keep.add(existing);
  }
  // Pages neither kept nor overwritten under their own name go; they are removed before the
  // new ones are written, so a differently-cased old name on a case-insensitive file system
  // cannot take the new page with it.
  const remove = new Set<string>();
  for (const name of current.topics.keys()) {
    if (!keep.has(name) && !reply.topics.has(name)) remove.add(name);
  }
  const oldBytes = totalBytes(current);
  let newBytes = bytesOf(reply.memory);
  for (const text of reply.topics.values()) newBytes += bytesOf(text);
  for (const name of keep) newBytes += bytesOf(current.topics.get(name) ?? '');
  if (oldBytes > 0 && newBytes < oldBytes * (1 - maxShrink)) {
    return fail(
      'shrunk',
      `the result holds ${newBytes} of ${oldBytes} bytes (at least ${Math.round((1 - maxShrink) * 100)}% must remain)`,
    );
  }
  return { ok: true, value: { memory: reply.memory, write: new Map(reply.topics), keep, remove, oldBytes, newBytes } };
}

/**
 * The plan adjusted to what happened on disk while the model worked: text appended to
 * memory.md meanwhile (a conversation noting something) is carried over at the end of the
 * new memory.md; any other change refuses the result, as merging it is guesswork.
 */
export function reconcileConcurrentChanges(
  sent: MemoryContent,
  now: MemoryContent,
  plan: ConsolidationPlan,
): Checked<ConsolidationPlan> {
  if (!sameTopics(sent.topics, now.topics)) return fail('changed', 'topic pages changed while consolidating');
  const before = sent.memory ?? '';
  const after = now.memory ?? '';
  if (after === before) return { ok: true, value: plan };
  if (!after.startsWith(before)) return fail('changed', 'memory.md changed while consolidating');
  const appended = after.slice(before.length).trim();
  if (appended === '') return { ok: true, value: plan };
  const memory = `${plan.memory.trimEnd()}\n\n${appended}\n`;
  return { ok: true, value: { ...plan, memory, newBytes: plan.newBytes - bytesOf(plan.memory) + bytesOf(memory) } };
}

function sameTopics(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, text] of a) if (b.get(name) !== text) return false;
  return true;
}
