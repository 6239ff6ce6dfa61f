import { APP_TYPES } from '#contracts/apps.js';
import type {
  AppSpec,
  BrowserLogin,
  ConfigField,
  FilterRule,
  I18nBlock,
  McpRequirement,
  McpServerDefinition,
  MemoryField,
  OutputSettings,
  SkillRequirement,
  StoreInfo,
  Subscription,
} from './app-spec.js';
import {
  CONFIG_FIELD_TYPES,
  FILTER_OPS,
  KNOWN_PERMISSIONS,
  MCP_TRANSPORTS,
  NOTIFY_CHANNELS,
  SOURCE_TYPES,
  SUBSCRIPTIONS_MAX,
} from './app-spec.js';
import { isTimeZone, nextCronRun, parseDuration } from './schedule-rules.js';
import { globPatternProblem } from '../glob.js';
import {
  at,
  bool,
  isMap,
  list,
  map,
  nonEmpty,
  oneOf,
  optional,
  type Raw,
  specError,
  stringList,
  text,
  url,
  versionText,
} from './spec-fields.js';

/**
 * The one spec validator (docs/api/digital-humans.md, "The spec file"): reads a parsed spec, accepts
 * the older field names, drops fields it does not know, fills defaults and checks every rule.
 * A failure is a 422 VALIDATION_FAILED whose message starts with the offending field.
 * `nowMs` is when the spec is saved: a cron expression must have a run after it.
 */
export function validateSpec(input: unknown, nowMs: number): AppSpec {
  const raw = withCanonicalNames(map(input, 'spec'));
  const type = oneOf(raw.type, APP_TYPES, 'type');
  const spec: Raw = {
    spec_version:
      raw.spec_version === undefined || raw.spec_version === null ? '1' : versionText(raw.spec_version, 'spec_version'),
    name: nonEmpty(raw.name, 'name'),
    version: versionText(raw.version, 'version'),
  };
  if (type !== 'skill' || (raw.author !== undefined && raw.author !== null))
    spec.author = nonEmpty(raw.author, 'author');
  spec.description = nonEmpty(raw.description, 'description');
  spec.type = type;
  optional(spec, raw, 'display_name', 'display_name', text);
  optional(spec, raw, 'icon', 'icon', text);
  if (type === 'automation' || type === 'skill') spec.system_prompt = nonEmpty(raw.system_prompt, 'system_prompt');
  else optional(spec, raw, 'system_prompt', 'system_prompt', nonEmpty);
  if (type === 'mcp') spec.mcp_server = mcpServer(raw.mcp_server, 'mcp_server');
  optional(spec, raw, 'permissions', 'permissions', permissions);
  optional(spec, raw, 'requires', 'requires', requirements);
  optional(spec, raw, 'config_schema', 'config_schema', configSchema);
  optional(spec, raw, 'store', 'store', store);
  optional(spec, raw, 'i18n', 'i18n', i18n);
  const keys = new Set(((spec.config_schema as ConfigField[] | undefined) ?? []).map((f) => f.key));
  optional(spec, raw, 'subscriptions', 'subscriptions', (v, f) => subscriptions(v, f, keys, nowMs));
  optional(spec, raw, 'filters', 'filters', filters);
  optional(spec, raw, 'memory_schema', 'memory_schema', memorySchema);
  optional(spec, raw, 'output', 'output', output);
  optional(spec, raw, 'escalation', 'escalation', escalation);
  optional(spec, raw, 'recommended_model', 'recommended_model', text);
  optional(spec, raw, 'browser_login', 'browser_login', browserLogin);
  return spec as unknown as AppSpec;
}

/**
 * Older names accepted on read: `inputs` → `config_schema`, `required_mcps` / `required_skills`
 * (and `requires.mcp` / `requires.skill`) → `requires.mcps` / `requires.skills`. The canonical
 * name wins when both are present.
 */
function withCanonicalNames(raw: Raw): Raw {
  const out: Raw = { ...raw };
  if (out.config_schema === undefined && out.inputs !== undefined) out.config_schema = out.inputs;
  const legacyMcps = out.required_mcps;
  const legacySkills = out.required_skills;
  if (out.requires !== undefined && out.requires !== null && !isMap(out.requires)) return out;
  const requires: Raw = { ...((out.requires as Raw | undefined) ?? {}) };
  if (requires.mcps === undefined) requires.mcps = requires.mcp ?? legacyMcps;
  if (requires.skills === undefined) requires.skills = requires.skill ?? legacySkills;
  const present = Object.entries(requires).filter(([k, v]) => (k === 'mcps' || k === 'skills') && v !== undefined);
  if (present.length > 0 || out.requires !== undefined) out.requires = Object.fromEntries(present);
  return out;
}

function requirements(value: unknown, field: string): AppSpec['requires'] {
  const raw = map(value, field);
  const out: Raw = {};
  optional(out, raw, 'mcps', at(field, 'mcps'), (v, f) =>
    list(v, f).map((item, i) => requirement(item, `${f}[${i}]`, 'enabled', bool) as McpRequirement),
  );
  optional(out, raw, 'skills', at(field, 'skills'), (v, f) =>
    list(v, f).map((item, i) => requirement(item, `${f}[${i}]`, 'files', stringList) as SkillRequirement),
  );
  return out;
}

/**
 * One MCP or skill dependency: a bare id (the older string-array form) or `{id, reason?,
 * bundled?}` plus the one field its kind adds (`enabled` for MCPs, `files` for skills).
 */
function requirement(
  value: unknown,
  field: string,
  extra: string,
  readExtra: (value: unknown, field: string) => unknown,
): { id: string } {
  if (typeof value === 'string') return { id: nonEmpty(value, field) };
  const raw = map(value, field);
  const out: Raw = { id: nonEmpty(raw.id, at(field, 'id')) };
  optional(out, raw, 'reason', at(field, 'reason'), text);
  optional(out, raw, 'bundled', at(field, 'bundled'), bool);
  optional(out, raw, extra, at(field, extra), readExtra);
  return out as { id: string };
}

function configSchema(value: unknown, field: string): ConfigField[] {
  const seen = new Set<string>();
  return list(value, field).map((item, i) => {
    const f = `${field}[${i}]`;
    const raw = map(item, f);
    const key = nonEmpty(raw.key, at(f, 'key'));
    if (seen.has(key)) throw specError(at(f, 'key'), `"${key}" is used twice`);
    seen.add(key);
    const out: Raw = {
      key,
      label: nonEmpty(raw.label, at(f, 'label')),
      type: oneOf(raw.type, CONFIG_FIELD_TYPES, at(f, 'type')),
    };
    optional(out, raw, 'description', at(f, 'description'), text);
    optional(out, raw, 'placeholder', at(f, 'placeholder'), text);
    optional(out, raw, 'required', at(f, 'required'), bool);
    if (raw.default !== undefined) out.default = raw.default;
    if (out.type === 'select') {
      const options = raw.options === undefined || raw.options === null ? [] : list(raw.options, at(f, 'options'));
      if (options.length === 0) throw specError(at(f, 'options'), 'needs at least one option for a select setting');
    }
    optional(out, raw, 'options', at(f, 'options'), (v, of) =>
      list(v, of).map((option, j) => {
        const o = map(option, `${of}[${j}]`);
        const optionValue = o.value;
        if (!['string', 'number', 'boolean'].includes(typeof optionValue)) {
          throw specError(`${of}[${j}].value`, 'must be a string, number or boolean');
        }
        return { label: nonEmpty(o.label, `${of}[${j}].label`), value: optionValue };
      }),
    );
    return out as unknown as ConfigField;
  });
}

function store(value: unknown, field: string): StoreInfo {
  const raw = map(value, field);
  const out: Raw = { tags: [] };
  for (const key of ['slug', 'category', 'locale', 'license'] as const) optional(out, raw, key, at(field, key), text);
  optional(out, raw, 'min_app_version', at(field, 'min_app_version'), versionText);
  // YAML reads a tag like 12306 as a number; it is kept as the text written.
  optional(out, raw, 'tags', at(field, 'tags'), (v, f) => list(v, f).map((tag, i) => versionText(tag, `${f}[${i}]`)));
  optional(out, raw, 'homepage', at(field, 'homepage'), url);
  optional(out, raw, 'repository', at(field, 'repository'), url);
  return out as unknown as StoreInfo;
}

function i18n(value: unknown, field: string): Record<string, I18nBlock> {
  const out: Record<string, I18nBlock> = {};
  for (const [tag, block] of Object.entries(map(value, field))) {
    const f = at(field, tag);
    const raw = map(block, f);
    const entry: Raw = {};
    optional(entry, raw, 'name', at(f, 'name'), text);
    optional(entry, raw, 'description', at(f, 'description'), text);
    optional(entry, raw, 'config_schema', at(f, 'config_schema'), (v, cf) => {
      const fields: Raw = {};
      for (const [key, labels] of Object.entries(map(v, cf))) {
        const lf = at(cf, key);
        const l = map(labels, lf);
        const texts: Raw = {};
        for (const name of ['label', 'description', 'placeholder'] as const)
          optional(texts, l, name, at(lf, name), text);
        optional(texts, l, 'options', at(lf, 'options'), (ov, of) =>
          Object.fromEntries(Object.entries(map(ov, of)).map(([k, t]) => [k, text(t, at(of, k))])),
        );
        fields[key] = texts;
      }
      return fields;
    });
    optional(entry, raw, 'browser_login', at(f, 'browser_login'), (v, bf) =>
      Object.fromEntries(
        Object.entries(map(v, bf)).map(([site, labels]) => {
          const l = map(labels, `${bf}["${site}"]`);
          const texts: Raw = {};
          optional(texts, l, 'label', `${bf}["${site}"].label`, text);
          return [site, texts];
        }),
      ),
    );
    out[tag] = entry as I18nBlock;
  }
  return out;
}

/** Only permissions this server knows: a name it does not know grants nothing and hides a mistake. */
function permissions(value: unknown, field: string): string[] {
  const names = stringList(value, field);
  names.forEach((name, i) => {
    if (!KNOWN_PERMISSIONS.includes(name)) {
      throw specError(`${field}[${i}]`, `"${name}" is not a permission; known: ${KNOWN_PERMISSIONS.join(', ')}`);
    }
  });
  return [...new Set(names)];
}

function subscriptions(value: unknown, field: string, configKeys: ReadonlySet<string>, nowMs: number): Subscription[] {
  const ids = new Set<string>();
  const items = list(value, field);
  if (items.length > SUBSCRIPTIONS_MAX) throw specError(field, `at most ${SUBSCRIPTIONS_MAX} subscriptions`);
  return items.map((item, i) => {
    const f = `${field}[${i}]`;
    const raw = map(item, f);
    const id = raw.id === undefined || raw.id === null ? String(i) : nonEmpty(raw.id, at(f, 'id'));
    if (ids.has(id)) throw specError(at(f, 'id'), `"${id}" is used by another subscription; ids must be unique`);
    ids.add(id);
    // The older shorthand writes `type` and `config` beside the entry instead of under `source`.
    const rawSource = raw.source ?? (raw.type !== undefined ? { type: raw.type, config: raw.config } : undefined);
    if (rawSource === undefined || rawSource === null) throw specError(at(f, 'source'), 'is required');
    const source = map(rawSource, at(f, 'source'));
    const sourceType = oneOf(source.type, SOURCE_TYPES, at(f, 'source.type'));
    const configField = at(f, 'source.config');
    const config = source.config === undefined || source.config === null ? {} : { ...map(source.config, configField) };
    if (sourceType === 'schedule') checkSchedule(config, configField, nowMs);
    if (sourceType === 'webhook') checkWebhook(config, configField);
    if (sourceType === 'file') checkFilePattern(config, configField);
    const out: Raw = { id, source: { type: sourceType, config } };
    optional(out, raw, 'frequency', at(f, 'frequency'), frequency);
    const configKey = raw.config_key ?? raw.input;
    if (configKey !== undefined && configKey !== null) {
      const key = nonEmpty(configKey, at(f, 'config_key'));
      if (!configKeys.has(key)) throw specError(at(f, 'config_key'), `"${key}" is not a config_schema key`);
      out.config_key = key;
    }
    return out as unknown as Subscription;
  });
}

/** A schedule needs `every` or `cron`; with both, `every` wins and `cron` is dropped unchecked. */
function checkSchedule(config: Raw, field: string, nowMs: number): void {
  const hasEvery = config.every !== undefined && config.every !== null;
  const hasCron = config.cron !== undefined && config.cron !== null;
  if (!hasEvery && !hasCron) throw specError(field, 'needs every or cron for a schedule');
  if (config.workday_calendar !== undefined) bool(config.workday_calendar, at(field, 'workday_calendar'));
  if (config.timezone !== undefined && config.timezone !== null && !isTimeZone(config.timezone)) {
    throw specError(at(field, 'timezone'), 'must be an IANA time zone such as Asia/Shanghai or Europe/Berlin');
  }
  if (hasEvery) {
    if (parseDuration(config.every) === null) {
      throw specError(at(field, 'every'), 'must be a whole number with a unit s, m, h or d, like 30m, 2h, 1d');
    }
    delete config.cron;
    return;
  }
  const expression = nonEmpty(config.cron, at(field, 'cron'));
  const next = nextCronRun(expression, nowMs, isTimeZone(config.timezone) ? config.timezone : undefined);
  if ('error' in next) throw specError(at(field, 'cron'), next.error);
}

/**
 * A webhook's `path` (after `/hooks/`): one or more `/`-separated segments of lower case
 * URL-safe characters (`github/push`), none of them `.` or `..`; `secret` a non-empty string.
 */
function checkWebhook(config: Raw, field: string): void {
  if (config.path !== undefined && config.path !== null) {
    const path = nonEmpty(config.path, at(field, 'path'))
      .trim()
      .replace(/^\/+|\/+$/g, '');
    if (!WEBHOOK_PATH.test(path) || path.split('/').some((s) => s === '.' || s === '..')) {
      throw specError(
        at(field, 'path'),
        'must be segments of lower case letters, digits and - _ . ~ separated by /, like github-events or github/push',
      );
    }
    config.path = path;
  }
  if (config.secret !== undefined && config.secret !== null) nonEmpty(config.secret, at(field, 'secret'));
}

/** A file trigger watches its space: its `pattern` is relative to the space folder, never above it. */
function checkFilePattern(config: Raw, field: string): void {
  if (config.pattern === undefined || config.pattern === null) return;
  const pattern = nonEmpty(config.pattern, at(field, 'pattern'));
  if (/^([/\\]|[a-zA-Z]:)/.test(pattern) || pattern.split(/[/\\]/).includes('..')) {
    throw specError(
      at(field, 'pattern'),
      'must be relative to the space folder, like **/*.md (no leading / and no ..)',
    );
  }
  // The matcher's own limits (length, states, brace expansion): refused here, not silently never matching.
  const problem = globPatternProblem(pattern);
  if (problem) throw specError(at(field, 'pattern'), problem);
}

const WEBHOOK_PATH = /^[a-z0-9._~-]+(?:\/[a-z0-9._~-]+)*$/;

function duration(value: unknown, field: string): string {
  const s = nonEmpty(value, field).trim();
  if (parseDuration(s) === null)
    throw specError(field, 'must be a whole number with a unit s, m, h or d, like 30m, 2h, 1d');
  return s;
}

function frequency(value: unknown, field: string): Subscription['frequency'] {
  const raw = map(value, field);
  const out: Raw = { default: duration(raw.default, at(field, 'default')) };
  optional(out, raw, 'min', at(field, 'min'), duration);
  optional(out, raw, 'max', at(field, 'max'), duration);
  return out as Subscription['frequency'];
}

function filters(value: unknown, field: string): FilterRule[] {
  return list(value, field).map((item, i) => {
    const f = `${field}[${i}]`;
    const raw = map(item, f);
    if (!('value' in raw)) throw specError(at(f, 'value'), 'is required');
    return { field: nonEmpty(raw.field, at(f, 'field')), op: oneOf(raw.op, FILTER_OPS, at(f, 'op')), value: raw.value };
  });
}

function memorySchema(value: unknown, field: string): Record<string, MemoryField> {
  const out: Record<string, MemoryField> = {};
  for (const [name, def] of Object.entries(map(value, field))) {
    const f = at(field, name);
    const raw = map(def, f);
    const entry: Raw = { type: nonEmpty(raw.type, at(f, 'type')) };
    optional(entry, raw, 'hint', at(f, 'hint'), text);
    optional(entry, raw, 'description', at(f, 'description'), text);
    out[name] = entry as unknown as MemoryField;
  }
  return out;
}

function output(value: unknown, field: string): OutputSettings {
  const raw = map(value, field);
  const out: Raw = {};
  optional(out, raw, 'notify', at(field, 'notify'), (v, f) => {
    const notify = map(v, f);
    const n: Raw = {};
    optional(n, notify, 'system', at(f, 'system'), bool);
    optional(n, notify, 'channels', at(f, 'channels'), (c, cf) =>
      list(c, cf).map((channel, i) => oneOf(channel, NOTIFY_CHANNELS, `${cf}[${i}]`)),
    );
    return n;
  });
  optional(out, raw, 'format', at(field, 'format'), text);
  return out as OutputSettings;
}

function escalation(value: unknown, field: string): AppSpec['escalation'] {
  const raw = map(value, field);
  const out: Raw = {};
  optional(out, raw, 'enabled', at(field, 'enabled'), bool);
  optional(out, raw, 'timeout_hours', at(field, 'timeout_hours'), (v, f) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw specError(f, 'must be a number greater than 0');
    return v;
  });
  return out;
}

function browserLogin(value: unknown, field: string): BrowserLogin[] {
  return list(value, field).map((item, i) => {
    const f = `${field}[${i}]`;
    const raw = map(item, f);
    return { url: url(raw.url, at(f, 'url')), label: nonEmpty(raw.label, at(f, 'label')) };
  });
}

/**
 * How the MCP server is reached: a local command over stdio (`command`, `args`, `env`, `cwd`)
 * or a streamable-HTTP endpoint (`url`, `headers`). `type` (`stdio` or `http`) may name the
 * transport; without it, `command` means stdio and `url` means HTTP.
 */
/** A stdio server's `cwd`: relative, no `..` segment, no backslash or NUL (the path guard checks it again at launch). */
function isSpaceRelative(path: string): boolean {
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path) || path.includes('\\') || path.includes('\0')) return false;
  return !path.split('/').some((p) => p === '..');
}

export function mcpServer(value: unknown, field: string): McpServerDefinition {
  if (value === undefined || value === null) throw specError(field, 'is required for an mcp app');
  const raw = map(value, field);
  const stringMap = (v: unknown, f: string) =>
    Object.fromEntries(Object.entries(map(v, f)).map(([k, e]) => [k, text(e, at(f, k))]));
  const declared =
    raw.type === undefined || raw.type === null ? null : oneOf(raw.type, MCP_TRANSPORTS, at(field, 'type'));
  const transport = declared ?? (raw.command === undefined && raw.url !== undefined ? 'http' : 'stdio');
  if (transport === 'http') {
    if (raw.command !== undefined)
      throw specError(at(field, 'command'), 'is not allowed for an http server (give url)');
    const out: Raw = { type: 'http', url: url(raw.url, at(field, 'url')) };
    optional(out, raw, 'headers', at(field, 'headers'), stringMap);
    return out as unknown as McpServerDefinition;
  }
  if (raw.url !== undefined) throw specError(at(field, 'url'), 'is not allowed for a stdio server (give command)');
  const out: Raw = { command: nonEmpty(raw.command, at(field, 'command')) };
  if (declared) out.type = declared;
  optional(out, raw, 'args', at(field, 'args'), (v, f) => list(v, f).map((a, i) => text(a, `${f}[${i}]`)));
  optional(out, raw, 'env', at(field, 'env'), stringMap);
  optional(out, raw, 'cwd', at(field, 'cwd'), (v, f) => {
    const cwd = text(v, f);
    if (!isSpaceRelative(cwd))
      throw specError(f, "must be a relative path inside the app's space folder (no .., not absolute)");
    return cwd;
  });
  return out as unknown as McpServerDefinition;
}
