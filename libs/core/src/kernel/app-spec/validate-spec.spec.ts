import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../../errors/domain-error.js';
import { parseSpecYaml, specToYaml } from './spec-yaml.js';
import { validateSpec } from './validate-spec.js';

const NOW = Date.UTC(2026, 0, 5, 12, 0, 0);

/** A minimal valid automation spec; tests change one thing at a time. */
const base = (): Record<string, unknown> => ({
  name: 'Price Watcher',
  version: '1.0.0',
  author: 'alice',
  description: 'Watches a price.',
  type: 'automation',
  system_prompt: 'Check the price and report.',
});

function rejected(spec: unknown, field: string, status: 'unprocessable' | 'invalid' = 'unprocessable'): void {
  assert.throws(
    () => validateSpec(spec, NOW),
    (err: unknown) => {
      assert.ok(err instanceof DomainError, String(err));
      assert.equal(err.kind, status);
      assert.equal(err.code, 'VALIDATION_FAILED');
      assert.ok(err.message.startsWith(field), `"${err.message}" should name ${field}`);
      return true;
    },
  );
}

const schedule = (config: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  ...base(),
  subscriptions: [{ id: 's', source: { type: 'schedule', config }, ...extra }],
});

describe('validateSpec: required fields per type', () => {
  it('accepts the minimal automation spec and fills spec_version', () => {
    const spec = validateSpec(base(), NOW);
    assert.equal(spec.spec_version, '1');
    assert.equal(spec.name, 'Price Watcher');
    assert.equal(spec.type, 'automation');
  });

  it('names each missing or empty required field', () => {
    for (const field of ['name', 'version', 'author', 'description', 'system_prompt']) {
      const missing = base();
      delete missing[field];
      rejected(missing, field);
      rejected({ ...base(), [field]: '  ' }, field);
    }
    const noType = base();
    delete noType.type;
    rejected(noType, 'type');
    rejected({ ...base(), type: 'robot' }, 'type');
    rejected({ ...base(), name: 42 }, 'name');
  });

  it('a skill needs no author; an mcp app needs mcp_server.command, not a prompt; an extension neither', () => {
    const skill: Record<string, unknown> = { ...base(), type: 'skill' };
    delete skill.author;
    assert.equal(validateSpec(skill, NOW).author, undefined);
    rejected({ ...skill, system_prompt: undefined }, 'system_prompt');
    const mcp = { ...base(), type: 'mcp', system_prompt: undefined };
    rejected(mcp, 'mcp_server');
    rejected({ ...mcp, mcp_server: { args: [] } }, 'mcp_server.command');
    rejected({ ...mcp, mcp_server: { command: 'npx', args: 'x' } }, 'mcp_server.args');
    assert.equal(
      validateSpec({ ...mcp, mcp_server: { command: 'npx', args: ['-y', 'x'] } }, NOW).mcp_server?.command,
      'npx',
    );
    // Streamable HTTP: `url` and `headers`, with or without `type: http`.
    assert.deepEqual(
      validateSpec({ ...mcp, mcp_server: { url: 'https://h/mcp', headers: { A: 'b' } } }, NOW).mcp_server,
      {
        type: 'http',
        url: 'https://h/mcp',
        headers: { A: 'b' },
      },
    );
    rejected({ ...mcp, mcp_server: { type: 'http', url: 'ftp://h' } }, 'mcp_server.url');
    rejected({ ...mcp, mcp_server: { type: 'http', command: 'npx', url: 'https://h' } }, 'mcp_server.command');
    rejected({ ...mcp, mcp_server: { command: 'npx', url: 'https://h' } }, 'mcp_server.url');
    rejected({ ...mcp, mcp_server: { type: 'sse', url: 'https://h' } }, 'mcp_server.type');
    rejected({ ...mcp, mcp_server: { url: 'https://h', headers: { A: 1 } } }, 'mcp_server.headers.A');
    assert.equal(validateSpec({ ...base(), type: 'extension', system_prompt: undefined }, NOW).type, 'extension');
  });

  it('refuses a spec that is not an object', () => {
    for (const value of [null, 'text', 5, ['a']]) rejected(value, 'spec');
  });

  it('reads numeric versions as text', () => {
    assert.equal(validateSpec({ ...base(), version: 2, spec_version: 1 }, NOW).version, '2');
  });
});

describe('validateSpec: schedules', () => {
  it('accepts every with units s, m, h, d', () => {
    for (const every of ['30s', '5m', '2h', '1d']) {
      assert.equal(validateSpec(schedule({ every }), NOW).subscriptions?.[0]?.source.config.every, every);
    }
  });

  it('refuses bad intervals, naming source.config.every', () => {
    for (const every of ['1w', '1.5h', '30 min', '1hour', 'h', '0m', '', 5]) {
      rejected(schedule({ every }), 'subscriptions[0].source.config.every');
    }
  });

  it('accepts 5-field and 6-field cron, refuses others and those without a future run', () => {
    assert.ok(validateSpec(schedule({ cron: '0 9 * * 1-5' }), NOW));
    assert.ok(validateSpec(schedule({ cron: '30 0 9 * * *' }), NOW));
    for (const cron of ['* * * *', '0 0 1 1 * 2030 7', 'a b c d e', '61 * * * *', '0 0 31 4 *', '0 0 30 2 *', '']) {
      rejected(schedule({ cron }), 'subscriptions[0].source.config.cron');
    }
  });

  it('needs one of every and cron; with both, every wins', () => {
    rejected(schedule({}), 'subscriptions[0].source.config');
    rejected({ ...base(), subscriptions: [{ source: { type: 'schedule' } }] }, 'subscriptions[0].source.config');
    const both = validateSpec(schedule({ every: '1h', cron: 'not checked' }), NOW);
    assert.deepEqual(both.subscriptions?.[0]?.source.config, { every: '1h' });
  });

  it('checks frequency durations and workday_calendar', () => {
    rejected(schedule({ every: '1h' }, { frequency: {} }), 'subscriptions[0].frequency.default');
    rejected(
      schedule({ every: '1h' }, { frequency: { default: '1h', min: 'soon' } }),
      'subscriptions[0].frequency.min',
    );
    rejected(
      schedule({ cron: '0 9 * * *', workday_calendar: 'yes' }),
      'subscriptions[0].source.config.workday_calendar',
    );
    const ok = validateSpec(schedule({ every: '1h' }, { frequency: { default: '1h', min: '15m', max: '1d' } }), NOW);
    assert.deepEqual(ok.subscriptions?.[0]?.frequency, { default: '1h', min: '15m', max: '1d' });
  });
});

describe('validateSpec: subscriptions', () => {
  it('numbers subscriptions without ids and refuses duplicate ids', () => {
    const spec = validateSpec(
      {
        ...base(),
        subscriptions: [{ source: { type: 'webhook', config: { path: 'a' } } }, { source: { type: 'file' } }],
      },
      NOW,
    );
    assert.deepEqual(
      spec.subscriptions?.map((s) => s.id),
      ['0', '1'],
    );
    assert.deepEqual(spec.subscriptions?.[1]?.source.config, {});
    rejected(
      {
        ...base(),
        subscriptions: [
          { id: 'x', source: { type: 'file' } },
          { id: 'x', source: { type: 'webhook' } },
        ],
      },
      'subscriptions[1].id',
    );
  });

  it('needs a known source type', () => {
    rejected({ ...base(), subscriptions: [{ id: 'a' }] }, 'subscriptions[0].source');
    rejected({ ...base(), subscriptions: [{ source: { type: 'email' } }] }, 'subscriptions[0].source.type');
    rejected(
      { ...base(), subscriptions: [{ source: { type: 'file', config: 'x' } }] },
      'subscriptions[0].source.config',
    );
    rejected({ ...base(), subscriptions: 'daily' }, 'subscriptions');
    for (const type of ['webpage', 'rss', 'custom', 'wecom']) {
      assert.ok(validateSpec({ ...base(), subscriptions: [{ source: { type, config: { url: 'x' } } }] }, NOW));
    }
  });

  it('config_key must name a config_schema key', () => {
    const schema = [{ key: 'url', label: 'URL', type: 'url' }];
    rejected(
      { ...base(), config_schema: schema, subscriptions: [{ source: { type: 'file' }, config_key: 'nope' }] },
      'subscriptions[0].config_key',
    );
    rejected(
      { ...base(), subscriptions: [{ source: { type: 'file' }, config_key: 'url' }] },
      'subscriptions[0].config_key',
    );
    const ok = validateSpec(
      { ...base(), config_schema: schema, subscriptions: [{ source: { type: 'file' }, config_key: 'url' }] },
      NOW,
    );
    assert.equal(ok.subscriptions?.[0]?.config_key, 'url');
  });
});

describe('validateSpec: config_schema', () => {
  it('checks key, label, type, duplicate keys and select options', () => {
    const field = { key: 'k', label: 'K', type: 'string' };
    rejected({ ...base(), config_schema: [{ ...field, key: '' }] }, 'config_schema[0].key');
    rejected({ ...base(), config_schema: [{ ...field, label: undefined }] }, 'config_schema[0].label');
    rejected({ ...base(), config_schema: [{ ...field, type: 'password' }] }, 'config_schema[0].type');
    rejected({ ...base(), config_schema: [field, { ...field }] }, 'config_schema[1].key');
    rejected({ ...base(), config_schema: [{ ...field, type: 'select' }] }, 'config_schema[0].options');
    rejected({ ...base(), config_schema: [{ ...field, type: 'select', options: [] }] }, 'config_schema[0].options');
    rejected(
      { ...base(), config_schema: [{ ...field, type: 'select', options: [{ label: 'A', value: { x: 1 } }] }] },
      'config_schema[0].options[0].value',
    );
    rejected(
      { ...base(), config_schema: [{ ...field, type: 'select', options: [{ value: 'a' }] }] },
      'config_schema[0].options[0].label',
    );
    rejected({ ...base(), config_schema: [{ ...field, required: 'yes' }] }, 'config_schema[0].required');
    const ok = validateSpec(
      { ...base(), config_schema: [{ ...field, type: 'select', default: 'a', options: [{ label: 'A', value: 'a' }] }] },
      NOW,
    );
    assert.equal(ok.config_schema?.[0]?.default, 'a');
  });
});

describe('validateSpec: URLs and other sections', () => {
  it('browser_login url and label, store homepage and repository must be URLs', () => {
    rejected({ ...base(), browser_login: [{ url: 'not a url', label: 'X' }] }, 'browser_login[0].url');
    rejected({ ...base(), browser_login: [{ url: 'https://x.example' }] }, 'browser_login[0].label');
    rejected({ ...base(), store: { homepage: 'example.com' } }, 'store.homepage');
    rejected({ ...base(), store: { repository: 'ftp://example.com/r' } }, 'store.repository');
    rejected({ ...base(), store: { tags: 'a,b' } }, 'store.tags');
    const ok = validateSpec({ ...base(), store: { homepage: 'https://example.com', category: 'dev' } }, NOW);
    assert.deepEqual(ok.store, { tags: [], homepage: 'https://example.com', category: 'dev' });
  });

  it('checks escalation, filters, memory_schema, output, requires and permissions', () => {
    rejected({ ...base(), escalation: { timeout_hours: 0 } }, 'escalation.timeout_hours');
    rejected({ ...base(), escalation: { timeout_hours: '2' } }, 'escalation.timeout_hours');
    rejected({ ...base(), escalation: { enabled: 'no' } }, 'escalation.enabled');
    rejected({ ...base(), filters: [{ field: 'a', op: 'like', value: 1 }] }, 'filters[0].op');
    rejected({ ...base(), filters: [{ field: 'a', op: 'eq' }] }, 'filters[0].value');
    rejected({ ...base(), memory_schema: { notes: { description: 'x' } } }, 'memory_schema.notes.type');
    rejected({ ...base(), output: { notify: { channels: ['pager'] } } }, 'output.notify.channels[0]');
    rejected({ ...base(), requires: { mcps: [{ reason: 'x' }] } }, 'requires.mcps[0].id');
    rejected({ ...base(), requires: 'ai-browser' }, 'requires');
    rejected({ ...base(), permissions: ['ai-browser', 3] }, 'permissions[1]');
    rejected({ ...base(), permissions: ['read', 'root'] }, 'permissions[1]');
    rejected({ ...base(), permissions: ['../x'] }, 'permissions[0]');
    assert.deepEqual(validateSpec({ ...base(), permissions: ['ai-browser', 'web_fetch', 'bash'] }, NOW).permissions, [
      'ai-browser',
      'web_fetch',
      'bash',
    ]);
  });

  it('caps subscriptions and keeps file-trigger patterns inside the space', () => {
    const tick = (i: number) => ({ id: `t${i}`, source: { type: 'schedule', config: { every: '1h' } } });
    rejected({ ...base(), subscriptions: Array.from({ length: 51 }, (_, i) => tick(i)) }, 'subscriptions');
    assert.equal(
      validateSpec({ ...base(), subscriptions: Array.from({ length: 50 }, (_, i) => tick(i)) }, NOW).subscriptions
        ?.length,
      50,
    );
    const file = (pattern: string) => ({
      ...base(),
      subscriptions: [{ source: { type: 'file', config: { pattern } } }],
    });
    for (const pattern of ['/etc/**', '../**/*.md', 'docs/../../x', 'C:/x', '\\\\host\\share']) {
      rejected(file(pattern), 'subscriptions[0].source.config.pattern');
    }
    validateSpec(file('**/*.md'), NOW);
    rejected(file('{a,b}'.repeat(40)), 'subscriptions[0].source.config.pattern');
    rejected({ ...base(), i18n: { 'zh-CN': { name: 5 } } }, 'i18n.zh-CN.name');
  });
});

describe('validateSpec: older names and unknown fields', () => {
  it('reads inputs, required_mcps, required_skills, requires.mcp, input and the schedule shorthand', () => {
    const spec = validateSpec(
      {
        ...base(),
        inputs: [{ key: 'repo', label: 'Repo', type: 'string' }],
        required_mcps: ['ai-browser'],
        required_skills: [{ id: 'summarize', reason: 'sums' }],
        subscriptions: [{ type: 'schedule', config: { every: '1h' }, input: 'repo' }],
      },
      NOW,
    );
    assert.equal(spec.config_schema?.[0]?.key, 'repo');
    assert.deepEqual(spec.requires, { mcps: [{ id: 'ai-browser' }], skills: [{ id: 'summarize', reason: 'sums' }] });
    assert.deepEqual(spec.subscriptions?.[0], {
      id: '0',
      source: { type: 'schedule', config: { every: '1h' } },
      config_key: 'repo',
    });
    const singular = validateSpec({ ...base(), requires: { mcp: [{ id: 'm' }], skill: ['s'] } }, NOW);
    assert.deepEqual(singular.requires, { mcps: [{ id: 'm' }], skills: [{ id: 's' }] });
  });

  it('drops fields it does not know, at every level', () => {
    const spec = validateSpec(
      {
        ...base(),
        colour: 'blue',
        config_schema: [{ key: 'k', label: 'K', type: 'string', secret: true }],
        store: { slug: 'x', meta: { a: 1 } },
        subscriptions: [{ id: 's', source: { type: 'file', config: { pattern: '*.md' } }, weight: 3 }],
      },
      NOW,
    ) as unknown as Record<string, unknown>;
    assert.equal('colour' in spec, false);
    assert.deepEqual((spec.config_schema as unknown[])[0], { key: 'k', label: 'K', type: 'string' });
    assert.deepEqual(spec.store, { tags: [], slug: 'x' });
    assert.deepEqual((spec.subscriptions as unknown[])[0], {
      id: 's',
      source: { type: 'file', config: { pattern: '*.md' } },
    });
  });
});

describe('parseSpecYaml and specToYaml', () => {
  it("writes every section in the authors' order, whatever order the stored keys came back in", () => {
    const full = validateSpec(
      {
        ...base(),
        display_name: 'Watcher',
        icon: '🛒',
        permissions: ['ai-browser'],
        requires: { mcps: [{ id: 'ai-browser' }], skills: ['sum'] },
        config_schema: [{ key: 'u', label: 'U', type: 'url' }],
        subscriptions: [{ id: 's', source: { type: 'schedule', config: { every: '1h' } }, config_key: 'u' }],
        filters: [{ field: 'a', op: 'eq', value: 1 }],
        memory_schema: { notes: { type: 'string' } },
        output: { format: 'x' },
        escalation: { timeout_hours: 2 },
        recommended_model: 'm',
        browser_login: [{ url: 'https://x.example', label: 'X' }],
        store: { category: 'c' },
        i18n: { 'zh-CN': { name: 'N' } },
      },
      NOW,
    );
    const shuffled = Object.fromEntries(Object.entries(full).reverse()) as typeof full;
    const yaml = specToYaml(shuffled);
    assert.match(yaml, /^spec_version: "1"\nname: Price Watcher\n/);
    assert.deepEqual(validateSpec(parseSpecYaml(yaml), NOW), full);
  });

  it('a YAML syntax error is a 400 INVALID_YAML naming the line', () => {
    assert.throws(
      () => parseSpecYaml('name: a\n  bad: : indent\n- x'),
      (err: unknown) =>
        err instanceof DomainError && err.kind === 'invalid' && err.code === 'INVALID_YAML' && /line/.test(err.message),
    );
    assert.throws(
      () => parseSpecYaml('a: 1\na: 2'),
      (err: unknown) => err instanceof DomainError && err.code === 'INVALID_YAML',
    );
  });

  it('an alias bomb, a NUL or an unpaired surrogate is a 400 INVALID_YAML, not a crash', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++)
      bomb.push(
        `${'b'.repeat(i)}: &${'b'.repeat(i)} [${Array(10)
          .fill(i === 1 ? '*a' : `*${'b'.repeat(i - 1)}`)
          .join(', ')}]`,
      );
    for (const source of [bomb.join('\n'), 'name: a\u0000b', 'name: \ud800x']) {
      assert.throws(
        () => parseSpecYaml(source),
        (err: unknown) => err instanceof DomainError && err.kind === 'invalid' && err.code === 'INVALID_YAML',
        JSON.stringify(source.slice(0, 40)),
      );
    }
  });

  it('keeps version text as written and round-trips through export', () => {
    const parsed = parseSpecYaml(
      'name: A\nversion: 1.0\nauthor: b\ndescription: d\ntype: automation\nsystem_prompt: |\n  line one\n  line two\n',
    );
    const spec = validateSpec(parsed, NOW);
    assert.equal(spec.version, '1.0');
    const again = validateSpec(parseSpecYaml(specToYaml(spec)), NOW);
    assert.deepEqual(again, spec);
  });
});
