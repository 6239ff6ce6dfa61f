import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../errors/domain-error.js';
import { type App, IDLE_AUTOMATION } from '../kernel/app.js';
import { automationState, checkOverrides, nextRunOf, resolveConfig, withFrequency } from './app-rules.js';
import type { ConfigField } from '../kernel/app-spec/app-spec.js';
import { validateSpec } from '../kernel/app-spec/validate-spec.js';

const NOW = Date.UTC(2026, 0, 5, 10, 30, 0);

const SCHEMA: ConfigField[] = [
  { key: 'url', label: 'URL', type: 'url', required: true },
  { key: 'count', label: 'Count', type: 'number', default: 3 },
  { key: 'on', label: 'On', type: 'boolean' },
  { key: 'mail', label: 'Mail', type: 'email' },
  {
    key: 'mode',
    label: 'Mode',
    type: 'select',
    options: [
      { label: 'A', value: 'a' },
      { label: 'One', value: 1 },
    ],
  },
  { key: 'note', label: 'Note', type: 'text' },
];

function refused(fn: () => unknown, field: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DomainError);
    assert.equal(err.code, 'VALIDATION_FAILED');
    assert.ok(err.message.startsWith(field), `"${err.message}" should name ${field}`);
    return true;
  });
}

function app(spec: unknown, extra: Partial<App> = {}): App {
  return {
    id: '3f1e0e52-0000-4000-8000-000000000001',
    spaceId: null,
    spec: validateSpec(spec, NOW),
    status: 'active',
    userConfig: {},
    userOverrides: {},
    permissions: { granted: [], denied: [] },
    upgradeStrategy: 'notify',
    builtIn: false,
    automation: { ...IDLE_AUTOMATION },
    installedAt: new Date(Date.UTC(2026, 0, 5, 10, 0, 0)),
    updatedAt: new Date(NOW),
    uninstalledAt: null,
    ...extra,
  };
}

const automation = (config: Record<string, unknown>) => ({
  name: 'A',
  version: '1',
  author: 'b',
  description: 'c',
  type: 'automation',
  system_prompt: 'p',
  subscriptions: [
    { id: 's', source: { type: 'schedule', config }, frequency: { default: '1h' } },
    { id: 'w', source: { type: 'webhook' } },
  ],
});

describe('resolveConfig', () => {
  it('fills defaults and keeps given values', () => {
    assert.deepEqual(resolveConfig(SCHEMA, { url: 'https://x.example', mode: 1, on: false, note: '' }, 'config'), {
      url: 'https://x.example',
      mode: 1,
      on: false,
      note: '',
      count: 3,
    });
    assert.deepEqual(resolveConfig(undefined, undefined, 'config'), {});
  });

  it('refuses wrong types, unknown keys and missing required values, naming the key', () => {
    const ok = { url: 'https://x.example' };
    refused(() => resolveConfig(SCHEMA, 'x', 'config'), 'config');
    refused(() => resolveConfig(SCHEMA, {}, 'userConfig'), 'userConfig.url');
    refused(() => resolveConfig(SCHEMA, { url: 'x.example' }, 'config'), 'config.url');
    refused(() => resolveConfig(SCHEMA, { ...ok, count: '3' }, 'config'), 'config.count');
    refused(() => resolveConfig(SCHEMA, { ...ok, on: 'yes' }, 'config'), 'config.on');
    refused(() => resolveConfig(SCHEMA, { ...ok, mail: 'nobody' }, 'config'), 'config.mail');
    // An address that almost matches, too long to be one: refused at once.
    const started = Date.now();
    refused(() => resolveConfig(SCHEMA, { ...ok, mail: `a@${'.'.repeat(200_000)}@` }, 'config'), 'config.mail');
    assert.ok(Date.now() - started < 500, `took ${Date.now() - started} ms`);
    refused(() => resolveConfig(SCHEMA, { ...ok, mode: 'b' }, 'config'), 'config.mode');
    refused(() => resolveConfig(SCHEMA, { ...ok, note: 5 }, 'config'), 'config.note');
    refused(() => resolveConfig(SCHEMA, { ...ok, other: 1 }, 'config'), 'config.other');
  });
});

describe('checkOverrides', () => {
  it('accepts known keys with values of their kind and refuses the rest', () => {
    assert.deepEqual(checkOverrides({ modelId: 'm', memory: { enabled: true, cadence: 'daily' } }), {
      modelId: 'm',
      memory: { enabled: true, cadence: 'daily' },
    });
    refused(() => checkOverrides({ modelId: '' }), 'modelId');
    refused(() => checkOverrides({ disabledTools: [1] }), 'disabledTools');
    refused(() => checkOverrides({ memory: { depth: 1 } }), 'memory.depth');
    refused(() => checkOverrides({ theme: 'dark' }), 'theme');
  });
});

describe('withFrequency', () => {
  const spec = () => app(automation({ every: '1h' })).spec;

  it('an interval becomes every (frequency.default follows); a cron expression replaces it', () => {
    const hourly = withFrequency(spec(), 's', '30m', NOW);
    assert.deepEqual(hourly.subscriptions?.[0], {
      id: 's',
      source: { type: 'schedule', config: { every: '30m' } },
      frequency: { default: '30m' },
    });
    const cron = withFrequency(spec(), 's', '0 8 * * *', NOW);
    assert.deepEqual(cron.subscriptions?.[0]?.source.config, { cron: '0 8 * * *' });
    assert.equal(cron.subscriptions?.[0]?.frequency?.default, '1h', 'a cron leaves the suggested interval alone');
  });

  it('refuses unknown or non-schedule subscriptions and bad timings', () => {
    refused(() => withFrequency(spec(), 'nope', '1h', NOW), 'subscriptionId');
    refused(() => withFrequency(spec(), 'w', '1h', NOW), 'subscriptionId');
    refused(() => withFrequency(spec(), 's', '1w', NOW), 'frequency');
    refused(() => withFrequency(spec(), 's', '0 0 31 4 *', NOW), 'frequency');
    refused(() => withFrequency(spec(), 's', '', NOW), 'frequency');
  });
});

describe('nextRunOf and automationState', () => {
  it('an interval counts from the install time; nothing when paused or not an automation', () => {
    // Installed 10:00, now 10:30, every 1h → 11:00.
    assert.equal(nextRunOf(app(automation({ every: '1h' })), NOW), Date.UTC(2026, 0, 5, 11, 0, 0));
    assert.equal(nextRunOf(app(automation({ cron: '0 12 * * *' })), NOW) !== null, true);
    assert.equal(nextRunOf(app(automation({ every: '1h' }), { status: 'paused' }), NOW), null);
  });

  it('maps record status and run counters to the automation state', () => {
    const running = app(automation({ every: '1h' }), { automation: { ...IDLE_AUTOMATION, runningCount: 1 } });
    assert.equal(automationState(running).status, 'running');
    assert.equal(automationState(running).automaticEnabled, true);
    assert.equal(automationState(app(automation({ every: '1h' }))).status, 'idle');
    const waiting = automationState(app(automation({ every: '1h' }), { status: 'waiting_user' }));
    assert.equal(waiting.status, 'waiting_user');
    assert.equal(waiting.automaticEnabled, false);
  });
});
