/**
 * A digital human's run reading its own messages as its run history grows. Build first, then:
 * `node dist/bench/run-history.js` (embedded PGlite; SVC_TEST_MODE=services: Postgres).
 *
 * Every run of a digital human appends to one run conversation, and each run's plan reads the
 * messages of its own run. This seeds that conversation with BENCH_RUNS runs (default 2,000) of
 * BENCH_RUN_MESSAGES messages each (default 5, BENCH_MESSAGE_BYTES of text each, default 1,000),
 * then times the read of the newest run's messages, BENCH_READS times (default 20), two ways side
 * by side: the whole conversation read and filtered (what a run did before
 * `ConversationRepository.findRunMessages`), the reference; and `findRunMessages`. It does so
 * after 1 % of the runs were seeded and after all of them, BENCH_ROUNDS times (default 3), and
 * prints each read's median and the ratio of the two at the full history; beside them, the
 * conversation's look-up, which a run's start makes and which counts the messages.
 *
 * Then the same conversation as a long chat thread compacted at its end (a compaction summary
 * and BENCH_AFTER_SUMMARY messages after it, default 4): a turn's read of its history, whole
 * (what a chat or channel turn read before `ConversationRepository.findWithHistory`: every
 * message, the summary cutting them only in memory) against `findWithHistory`.
 */
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { COMPACTION_KIND, isCompactionSummary } from '#core/kernel/conversation.js';
import { createDataSource, migrateUnderLock } from '#infra/database/database.js';
import { TypeormConversationRepository } from '#infra/conversations/typeorm-conversation.repository.js';
import { freshDatabase } from '#testing/fresh-database.js';
import { testMode } from '#testing/test-env.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 2000);
const RUN_MESSAGES = Number(process.env.BENCH_RUN_MESSAGES ?? 5);
const MESSAGE_BYTES = Number(process.env.BENCH_MESSAGE_BYTES ?? 1000);
const READS = Number(process.env.BENCH_READS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const AFTER_SUMMARY = Number(process.env.BENCH_AFTER_SUMMARY ?? 4);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Runs `from` (inclusive) to `to` (exclusive), their messages at consecutive positions. */
async function seedRuns(ds: DataSource, conversationId: string, from: number, to: number): Promise<void> {
  const BATCH = 500;
  for (let start = from; start < to; start += BATCH) {
    const end = Math.min(to, start + BATCH);
    await ds.query(
      `INSERT INTO "conversation_message" ("id", "conversation_id", "position", "role", "content", "meta")
       SELECT gen_random_uuid(), $1, r * $2 + m,
         CASE WHEN m = 0 THEN 'user' ELSE 'assistant' END,
         repeat('x', $3), jsonb_build_object('runId', 'run-' || r)
       FROM generate_series($4::int, $5::int - 1) AS r, generate_series(0, $2 - 1) AS m`,
      [conversationId, RUN_MESSAGES, MESSAGE_BYTES, start, end],
    );
  }
}

async function timeReads(read: () => Promise<number>): Promise<{ ms: number; messages: number }> {
  const samples: number[] = [];
  let messages = 0;
  for (let i = 0; i < READS; i++) {
    const t = performance.now();
    messages = await read();
    samples.push(performance.now() - t);
  }
  return { ms: median(samples), messages };
}

interface Reads {
  whole: number;
  own: number;
  /** The conversation's look-up (a run's start opens it), which counts its messages. */
  lookUp: number;
  /** findWithHistory while nothing is compacted: the whole conversation, and the look-up for a summary. */
  history: number;
}

interface Round {
  small: Reads;
  full: Reads;
  /** A turn's history after a compaction at the end of the full conversation. */
  thread: { whole: number; history: number };
}

async function round(ds: DataSource): Promise<Round> {
  const conversations = new TypeormConversationRepository(ds);
  const spaceId = `bench-${randomUUID()}`;
  await ds.query(
    `INSERT INTO "space" ("id", "name", "icon", "path", "sort_order", "preferences") VALUES ($1, 'bench', 'x', $1, 0, '{}')`,
    [spaceId],
  );
  const conversationId = randomUUID();
  await conversations.create({ id: conversationId, spaceId, title: 'runs', ephemeral: false, reasoningEffort: null });
  const measure = async (runs: number): Promise<Reads> => {
    const runId = `run-${runs - 1}`;
    const whole = await timeReads(async () => {
      const found = await conversations.findWithMessages(conversationId);
      return (found?.messages ?? []).filter((m) => m.meta.runId === runId).length;
    });
    const own = await timeReads(async () => (await conversations.findRunMessages(conversationId, runId)).length);
    if (whole.messages !== RUN_MESSAGES || own.messages !== RUN_MESSAGES)
      throw new Error(`expected ${RUN_MESSAGES} messages of ${runId}, read ${whole.messages} and ${own.messages}`);
    const lookUp = await timeReads(async () => ((await conversations.findById(conversationId)) ? 1 : 0));
    const history = await timeReads(
      async () => (await conversations.findWithHistory(conversationId))?.messages.length ?? 0,
    );
    if (history.messages !== runs * RUN_MESSAGES) throw new Error(`findWithHistory read ${history.messages} messages`);
    return { whole: whole.ms, own: own.ms, lookUp: lookUp.ms, history: history.ms };
  };
  const first = Math.max(1, Math.floor(RUNS / 100));
  await seedRuns(ds, conversationId, 0, first);
  await ds.query('ANALYZE "conversation_message"');
  const small = await measure(first);
  await seedRuns(ds, conversationId, first, RUNS);
  await ds.query('ANALYZE "conversation_message"');
  const full = await measure(RUNS);
  await conversations.appendMessage(conversationId, {
    role: 'system',
    content: 'summary',
    meta: { kind: COMPACTION_KIND },
  });
  for (let i = 0; i < AFTER_SUMMARY; i++)
    await conversations.appendMessage(conversationId, {
      role: i % 2 ? 'assistant' : 'user',
      content: 'after',
      meta: {},
    });
  await ds.query('ANALYZE "conversation_message"');
  const wholeThread = await timeReads(async () => {
    const found = await conversations.findWithMessages(conversationId);
    const messages = found?.messages ?? [];
    return messages.length - messages.findLastIndex(isCompactionSummary);
  });
  const history = await timeReads(
    async () => (await conversations.findWithHistory(conversationId))?.messages.length ?? 0,
  );
  if (wholeThread.messages !== AFTER_SUMMARY + 1 || history.messages !== AFTER_SUMMARY + 1)
    throw new Error(
      `expected ${AFTER_SUMMARY + 1} messages of history, read ${wholeThread.messages} and ${history.messages}`,
    );
  await ds.query(`DELETE FROM "space" WHERE "id" = $1`, [spaceId]);
  return { small, full, thread: { whole: wholeThread.ms, history: history.ms } };
}

async function main(): Promise<void> {
  const db = await freshDatabase();
  const ds = createDataSource(db.url, 4);
  await ds.initialize();
  const rounds: Round[] = [];
  try {
    await migrateUnderLock(ds);
    for (let i = 0; i < ROUNDS; i++) rounds.push(await round(ds));
  } finally {
    await ds.destroy();
    await db.dispose();
  }
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  const kb = Math.round((RUNS * RUN_MESSAGES * MESSAGE_BYTES) / 1024);
  out(
    `\nA run reading its own ${RUN_MESSAGES} messages (${testMode()}), ${READS} reads each, median per round, ${ROUNDS} rounds`,
  );
  const small = Math.max(1, Math.floor(RUNS / 100));
  const row = (label: string, pick: (r: Round) => number): void => {
    const values = rounds.map(pick);
    out(
      `  ${label.padEnd(58)} ${values.map((v) => v.toFixed(2).padStart(8)).join(' ')}  median ${median(values).toFixed(2)} ms`,
    );
  };
  row(`after ${small} runs: whole conversation read, filtered (reference)`, (r) => r.small.whole);
  row(`after ${small} runs: findRunMessages`, (r) => r.small.own);
  row(`after ${RUNS} runs (${kb} KB): whole conversation read, filtered`, (r) => r.full.whole);
  row(`after ${RUNS} runs (${kb} KB): findRunMessages`, (r) => r.full.own);
  row(`after ${small} runs: the conversation looked up (its messages counted)`, (r) => r.small.lookUp);
  row(`after ${RUNS} runs: the conversation looked up (its messages counted)`, (r) => r.full.lookUp);
  const ratio = median(rounds.map((r) => r.full.whole / r.full.own));
  const growth = median(rounds.map((r) => r.full.own / r.small.own));
  out(
    `  at ${RUNS} runs findRunMessages takes 1/${ratio.toFixed(0)} of the reference; from ${small} to ${RUNS} runs it grows ${growth.toFixed(2)}×`,
  );
  out(
    `\nA turn's history in a conversation of ${RUNS * RUN_MESSAGES + AFTER_SUMMARY + 1} messages compacted at its end (the summary and ${AFTER_SUMMARY} after it)`,
  );
  row('the whole conversation read, cut at the summary in memory (reference)', (r) => r.thread.whole);
  row('findWithHistory', (r) => r.thread.history);
  row(
    `never compacted, ${small} runs: findWithHistory (all of it, and the look-up for a summary)`,
    (r) => r.small.history,
  );
  row(`never compacted, ${RUNS} runs: findWithHistory`, (r) => r.full.history);
  out(
    `  findWithHistory takes 1/${median(rounds.map((r) => r.thread.whole / r.thread.history)).toFixed(0)} of the reference`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
