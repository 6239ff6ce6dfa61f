import type { App } from '../kernel/app.js';
import type { AppSpec, ConfigField } from '../kernel/app-spec/app-spec.js';
import { classifyFrequency } from '../kernel/app-spec/schedule-rules.js';
import { nextOccurrence } from '../triggers/schedule-timing.js';
import { parseApprovalPolicy } from '../approvals/approval-policy.js';
import { isMap, specError } from '../kernel/app-spec/spec-fields.js';
import { validateSpec } from '../kernel/app-spec/validate-spec.js';
import { automationState, runsAutomatically } from '../kernel/app-state.js';

export { automationState, runsAutomatically };

/** Pure rules of installed apps: settings, overrides, schedules, state. No I/O here. */

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** The longest email address there is (RFC 5321). */
const MAX_EMAIL_LENGTH = 254;

/**
 * A full set of setting values checked against the spec's `config_schema`: unknown keys and
 * wrong types are refused naming `<field>.<key>`, missing keys get their default, and a
 * required setting with neither value nor default is refused.
 */
export function resolveConfig(
  schema: readonly ConfigField[] | undefined,
  values: unknown,
  field: string,
): Record<string, unknown> {
  if (values === undefined || values === null) values = {};
  if (!isMap(values)) throw specError(field, 'must be an object');
  const fields = new Map((schema ?? []).map((f) => [f.key, f]));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    const def = fields.get(key);
    if (!def) throw specError(`${field}.${key}`, 'is not a setting of this digital human');
    if (value === null || value === undefined) continue;
    out[key] = checkSetting(def, value, `${field}.${key}`);
  }
  for (const def of fields.values()) {
    if (out[def.key] !== undefined) continue;
    if (def.default !== undefined) out[def.key] = def.default;
    else if (def.required) throw specError(`${field}.${def.key}`, 'is required');
  }
  return out;
}

function checkSetting(def: ConfigField, value: unknown, field: string): unknown {
  // An optional text-like setting may be left empty.
  if (value === '' && !def.required && def.type !== 'number' && def.type !== 'boolean' && def.type !== 'select')
    return value;
  switch (def.type) {
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw specError(field, 'must be a number');
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw specError(field, 'must be true or false');
      return value;
    case 'select': {
      const allowed = (def.options ?? []).map((o) => o.value);
      if (!allowed.includes(value as never)) throw specError(field, `must be one of ${allowed.join(', ')}`);
      return value;
    }
    case 'url':
      if (typeof value !== 'string' || !isHttpUrl(value)) throw specError(field, 'must be an http:// or https:// URL');
      return value;
    case 'email':
      // The length first: the pattern backtracks in time quadratic in the length of a value that almost matches.
      if (typeof value !== 'string' || value.length > MAX_EMAIL_LENGTH || !EMAIL.test(value))
        throw specError(field, 'must be an email address');
      return value;
    default:
      if (typeof value !== 'string') throw specError(field, 'must be a string');
      return value;
  }
}

function isHttpUrl(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** A problem with an override: the field under the key ('' for the key itself) and what is wrong. */
type OverrideProblem = readonly [subField: string, problem: string] | null;

const problem = (ok: boolean, text: string): OverrideProblem => (ok ? null : ['', text]);

/** Keys the user may override, and what each must hold. */
const OVERRIDE_CHECKS: Readonly<Record<string, (value: unknown) => OverrideProblem>> = {
  notificationLevel: (v) =>
    problem(['all', 'important', 'none'].includes(v as string), 'must be one of all, important, none'),
  modelSourceId: (v) => problem(typeof v === 'string' && v !== '', 'must be a source id'),
  modelId: (v) => problem(typeof v === 'string' && v !== '', 'must be a model id'),
  chatReasoningEffort: (v) =>
    problem(['low', 'medium', 'high'].includes(v as string), 'must be one of low, medium, high'),
  spaceMemoryAccess: (v) => problem(typeof v === 'boolean', 'must be true or false'),
  loginNoticeDismissed: (v) => problem(typeof v === 'boolean', 'must be true or false'),
  // A bad policy is refused by the parser itself, with a 400 naming the field (as POST /api/config does).
  approvals: (v) => (parseApprovalPolicy(v, 'approvals'), null),
  disabledTools: (v) =>
    problem(Array.isArray(v) && v.every((t) => typeof t === 'string'), 'must be a list of tool names'),
  memory: (v) => {
    if (!isMap(v)) return ['', 'must be an object'];
    for (const [k, x] of Object.entries(v)) {
      if (k === 'enabled' || k === 'autoConsolidate') {
        if (typeof x !== 'boolean') return [`.${k}`, 'must be true or false'];
      } else if (k === 'cadence') {
        if (typeof x !== 'string') return ['.cadence', 'must be a string'];
      } else return [`.${k}`, 'is not a memory setting'];
    }
    return null;
  },
};

/** Overrides after a merge patch must hold only known keys with values of their kind. */
export function checkOverrides(overrides: unknown): Record<string, unknown> {
  if (!isMap(overrides)) throw specError('overrides', 'must be an object');
  for (const [key, value] of Object.entries(overrides)) {
    const check = OVERRIDE_CHECKS[key];
    if (!check) throw specError(key, `is not an override; known: ${Object.keys(OVERRIDE_CHECKS).join(', ')}`);
    const found = check(value);
    if (found) throw specError(`${key}${found[0]}`, found[1]);
  }
  return overrides;
}

/** Permission names: lower-case words with dashes or underscores (`ai-browser`, `web_fetch`). */
const PERMISSION = /^[a-z][a-z0-9_-]{0,63}$/;

export function checkPermissionName(value: unknown): string {
  if (typeof value !== 'string' || !PERMISSION.test(value)) {
    throw specError('permission', 'must be a permission name like ai-browser');
  }
  return value;
}

/** Who installed the same digital human already: same author and name, in the same place. */
export function identityOf(spec: AppSpec): string {
  return `${(spec.author ?? '').trim().toLowerCase()}/${spec.name.trim().toLowerCase()}`;
}

/** The earliest due time of the app's schedules after `nowMs`; null when nothing is scheduled. */
export function nextRunOf(app: App, nowMs: number): number | null {
  if (!runsAutomatically(app)) return null;
  const anchor = app.installedAt.getTime();
  const times = (app.spec.subscriptions ?? [])
    .filter((s) => s.source.type === 'schedule')
    .map((s) => nextOccurrence(s.source.config, anchor, nowMs)?.ms ?? null)
    .filter((t): t is number => t !== null);
  return times.length === 0 ? null : Math.min(...times);
}

/**
 * The spec with one schedule subscription's timing replaced: an interval becomes `every`, a
 * cron expression becomes `cron` (the other is removed), and a `frequency.default` follows an
 * interval. The result is validated again as a whole.
 */
export function withFrequency(spec: AppSpec, subscriptionId: unknown, frequency: unknown, nowMs: number): AppSpec {
  if (typeof subscriptionId !== 'string' || subscriptionId === '') throw specError('subscriptionId', 'is required');
  if (typeof frequency !== 'string' || frequency.trim() === '') throw specError('frequency', 'is required');
  const subscriptions = spec.subscriptions ?? [];
  const index = subscriptions.findIndex((s) => s.id === subscriptionId);
  if (index === -1)
    throw specError('subscriptionId', `"${subscriptionId}" names no subscription of this digital human`);
  const target = subscriptions[index]!;
  if (target.source.type !== 'schedule') throw specError('subscriptionId', `"${subscriptionId}" is not a schedule`);
  const timing = classifyFrequency(frequency, nowMs);
  if ('error' in timing) throw specError('frequency', timing.error);
  const config = { ...target.source.config };
  delete config.every;
  delete config.cron;
  const updated = { ...target, source: { ...target.source, config: { ...config, ...timing } } };
  if ('every' in timing && target.frequency) updated.frequency = { ...target.frequency, default: timing.every };
  const next = subscriptions.map((s, i) => (i === index ? updated : s));
  return validateSpec({ ...spec, subscriptions: next }, nowMs);
}
