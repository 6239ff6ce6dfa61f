import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { DataSource } from 'typeorm';
import type { QueuedDelivery } from '#core/ports/trigger-store.port.js';
import { createDataSource, migrateUnderLock } from '#infra/database/database.js';
import { TypeormTriggerStore } from '#infra/triggers/typeorm-trigger.store.js';
import { type FreshDatabase, freshDatabase } from '#testing/fresh-database.js';
import { testMode } from '#testing/test-env.js';

const MINUTE = 60_000;

/** A webhook delivery of `appId` as the triggers service records it. */
const delivery = (appId: string, n: number): Omit<QueuedDelivery, 'seq' | 'startedMs'> => ({
  appId,
  subscriptionId: 'hook',
  kind: 'webhook',
  runId: randomUUID(),
  payload: { n },
  receivedMs: 1_000 + n,
});

/**
 * The trigger store on a real database: the webhook intake's claims and queue entry taken in
 * one step (`acceptDelivery`), exact when replicas accept together; schedule rows written in bulk.
 */
describe(`trigger store: webhook deliveries and schedule rows (${testMode()})`, () => {
  let db: FreshDatabase | undefined;
  let ds: DataSource | undefined;
  let store: TypeormTriggerStore;

  before(async () => {
    db = await freshDatabase();
    ds = createDataSource(db.url, 6);
    await ds.initialize();
    await migrateUnderLock(ds);
    store = new TypeormTriggerStore(ds);
  });

  after(async () => {
    if (ds?.isInitialized) await ds.destroy().catch(() => undefined);
    await db?.dispose();
  });

  it('the same delivery accepted ten times at once is recorded once; the others are repeats', async () => {
    const appId = randomUUID();
    const claims = [
      { key: `race:${appId}:id`, windowMs: MINUTE },
      { key: `race:${appId}:body`, windowMs: MINUTE },
    ];
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, n) => store.acceptDelivery(claims, delivery(appId, n), null, 5_000)),
    );
    assert.deepEqual(outcomes.map((o) => o.outcome).sort(), ['queued', ...Array(9).fill('repeat')].sort());
    assert.equal(await store.countDeliveries(appId), 1);
  });

  it('the bound of a queue holds when deliveries are accepted together, and a refused one keeps no claim', async () => {
    const appId = randomUUID();
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, n) =>
        store.acceptDelivery([{ key: `bound:${appId}:${n}`, windowMs: MINUTE }], delivery(appId, n), 5, 5_000),
      ),
    );
    const full = outcomes.flatMap((o, n) => (o.outcome === 'full' ? [n] : []));
    assert.equal(outcomes.filter((o) => o.outcome === 'queued').length, 5);
    assert.equal(full.length, 7);
    assert.equal(await store.countDeliveries(appId), 5);
    // Its sender's retry is not a repeat: the refused delivery's claim was given back.
    assert.equal(await store.claim(`bound:${appId}:${full[0]}`, appId, 6_000, MINUTE), true);
  });

  it('a repeat found at a later claim records nothing and keeps the claims taken before it', async () => {
    const appId = randomUUID();
    assert.equal(await store.claim(`later:${appId}:body`, appId, 5_000, MINUTE), true);
    const outcome = await store.acceptDelivery(
      [
        { key: `later:${appId}:id`, windowMs: MINUTE },
        { key: `later:${appId}:body`, windowMs: MINUTE },
      ],
      delivery(appId, 1),
      null,
      5_500,
    );
    assert.deepEqual(outcome, { outcome: 'repeat' });
    assert.equal(await store.countDeliveries(appId), 0);
    assert.equal(await store.claim(`later:${appId}:id`, appId, 5_600, MINUTE), false, 'the first claim stays taken');
  });

  it('a claim older than its window is taken again; one without a window never', async () => {
    const appId = randomUUID();
    const windowed = [{ key: `window:${appId}`, windowMs: MINUTE }];
    const forever = [{ key: `forever:${appId}`, windowMs: Infinity }];
    assert.equal((await store.acceptDelivery(windowed, delivery(appId, 1), null, 10_000)).outcome, 'queued');
    assert.equal(
      (await store.acceptDelivery(windowed, delivery(appId, 2), null, 10_000 + MINUTE - 1)).outcome,
      'repeat',
    );
    assert.equal(
      (await store.acceptDelivery(windowed, delivery(appId, 3), null, 10_000 + MINUTE + 1)).outcome,
      'queued',
    );
    assert.equal((await store.acceptDelivery(forever, delivery(appId, 4), null, 10_000)).outcome, 'queued');
    assert.equal(
      (await store.acceptDelivery(forever, delivery(appId, 5), null, 10_000 + 100 * MINUTE)).outcome,
      'repeat',
    );
    const first = await store.nextDelivery(appId);
    assert.deepEqual(first?.payload, { n: 1 }, 'recorded whole, in order');
  });

  it('addSchedules writes many first rows at once (over several statements) and leaves an existing row as it is', async () => {
    const rows = Array.from({ length: 2_500 }, (_, n) => ({
      appId: randomUUID(),
      subscriptionId: 'tick',
      signature: `every:${n}`,
      nextMs: 1_000_000 + n,
    }));
    await store.putSchedule({ ...rows[1_700]!, signature: 'paused', nextMs: 5 });
    await store.addSchedules(rows);
    const stored = new Map((await store.schedules()).map((r) => [r.appId, r]));
    assert.equal(stored.size, 2_500);
    assert.deepEqual(stored.get(rows[0]!.appId), rows[0]);
    assert.deepEqual(stored.get(rows[2_499]!.appId), rows[2_499]);
    assert.deepEqual(stored.get(rows[1_700]!.appId), { ...rows[1_700]!, signature: 'paused', nextMs: 5 });
    await store.addSchedules([]);
  });
});
