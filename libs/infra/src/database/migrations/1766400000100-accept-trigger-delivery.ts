import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `accept_trigger_delivery`: a webhook delivery's de-duplication claims and its place at the end
 * of its app's queue in one transaction and one round trip (`TriggerStore.acceptDelivery`).
 * Before, the claims, the bound check and the insert were five round trips, and a replica that
 * died between a claim and the insert left the delivery claimed (its sender's retry answered as
 * a repeat) and never run. Claims are taken in order; at the first one already held the answer
 * is `repeat` and the claims taken before it stay, as `claim` one by one kept them. A full queue
 * (`p_max` deliveries waiting; null: no bound, counted under the app's advisory lock so replicas
 * accepting together never pass it) gives back every claim taken and answers `full`.
 */
export class AcceptTriggerDelivery1766400000100 implements MigrationInterface {
  name = 'AcceptTriggerDelivery1766400000100';
  /** A new function only: code without it accepts deliveries as before. */
  readonly backwardCompatible = true;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
CREATE FUNCTION "accept_trigger_delivery"(
  p_keys text[], p_cutoffs bigint[], p_now_ms bigint, p_app_id uuid, p_subscription_id text, p_kind text,
  p_run_id uuid, p_payload jsonb, p_received_ms bigint, p_max bigint)
RETURNS TABLE ("outcome" text, "seq" text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
#variable_conflict use_column
DECLARE
  v_taken boolean;
  v_seq bigint;
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_keys, 1), 0) LOOP
    INSERT INTO "trigger_claim" ("key", "app_id", "claimed_at_ms") VALUES (p_keys[i], p_app_id, p_now_ms)
    ON CONFLICT ("key") DO UPDATE SET "claimed_at_ms" = EXCLUDED."claimed_at_ms"
    WHERE "trigger_claim"."claimed_at_ms" < p_cutoffs[i]
    RETURNING true INTO v_taken;
    IF v_taken IS NULL THEN
      RETURN QUERY SELECT 'repeat'::text, NULL::text;
      RETURN;
    END IF;
    v_taken := NULL;
  END LOOP;
  IF p_max IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hashtext('trigger_delivery:' || p_app_id::text));
    IF (SELECT count(*) FROM "trigger_delivery" WHERE "app_id" = p_app_id) >= p_max THEN
      DELETE FROM "trigger_claim" WHERE "key" = ANY(p_keys) AND "claimed_at_ms" = p_now_ms;
      RETURN QUERY SELECT 'full'::text, NULL::text;
      RETURN;
    END IF;
  END IF;
  INSERT INTO "trigger_delivery" ("app_id", "subscription_id", "kind", "run_id", "payload", "received_ms")
  VALUES (p_app_id, p_subscription_id, p_kind, p_run_id, p_payload, p_received_ms)
  RETURNING "seq" INTO v_seq;
  RETURN QUERY SELECT 'queued'::text, v_seq::text;
END
$fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DROP FUNCTION "accept_trigger_delivery"(text[], bigint[], bigint, uuid, text, text, uuid, jsonb, bigint, bigint)`,
    );
  }
}
