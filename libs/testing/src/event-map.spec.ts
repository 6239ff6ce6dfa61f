import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as agent from '#contracts/agent.js';
import * as apps from '#contracts/apps.js';
import * as artifacts from '#contracts/artifacts.js';
import * as browser from '#contracts/browser.js';
import * as channels from '#contracts/channels.js';
import * as events from '#contracts/events.js';
import { CONVERSATION_CHANNELS, EVENT_CHANNELS, isEventChannel, STATUS_CHANNELS } from '#contracts/events.js';
import * as knowledge from '#contracts/knowledge.js';
import * as mcp from '#contracts/mcp.js';
import * as models from '#contracts/models.js';
import * as spaces from '#contracts/spaces.js';
import * as store from '#contracts/store.js';
import * as teams from '#contracts/teams.js';

/** Repository root: this file runs as dist/libs/testing/src/event-map.spec.js. */
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CHANNEL = /^[a-z][a-z-]*(?::[a-z_-]+)+$/;

/** Every channel the contracts name: string constants that look like one, and the `…Channels` objects. */
function namedChannels(): Map<string, string> {
  const named = new Map<string, string>();
  const modules = { agent, apps, artifacts, browser, channels, events, knowledge, mcp, models, spaces, store, teams };
  for (const [file, exports] of Object.entries(modules)) {
    for (const [name, value] of Object.entries(exports)) {
      if (typeof value === 'string' && CHANNEL.test(value)) named.set(`${file}.${name}`, value);
      if (name.endsWith('Channels') && typeof value === 'object' && value !== null) {
        for (const [key, channel] of Object.entries(value)) named.set(`${name}.${key}`, String(channel));
      }
    }
  }
  return named;
}

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) sources(full, out);
    else if (name.endsWith('.ts') && !name.endsWith('.spec.ts')) out.push(full);
  }
  return out;
}

describe('EventMap', () => {
  it('lists every channel the contracts name, and the socket routing sets name none beside it', () => {
    for (const [name, channel] of namedChannels()) assert.ok(isEventChannel(channel), `${name} = ${channel}`);
    for (const channel of [...CONVERSATION_CHANNELS, ...STATUS_CHANNELS]) assert.ok(isEventChannel(channel), channel);
    assert.equal(new Set(EVENT_CHANNELS).size, EVENT_CHANNELS.length);
  });

  it('is where the server publishes: no channel constant outside the contracts, no literal the map lacks', () => {
    const files = [...sources(join(ROOT, 'libs/core/src')), ...sources(join(ROOT, 'apps/server/src'))];
    assert.ok(files.length > 50, `sources found under ${ROOT}`);
    const problems: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const at = relative(ROOT, file);
      // A channel constant belongs in libs/contracts, beside the map.
      for (const m of text.matchAll(/export const (\w+)\s*=\s*['`]([^'`]*)['`]/g)) {
        if (CHANNEL.test(m[2]!) && /CHANNEL|CHANGED|UPDATE/.test(m[1]!))
          problems.push(`${at}: constant ${m[1]} = ${m[2]}`);
      }
      // Channels given as literals to a publish, an emit or a fire.
      for (const m of text.matchAll(/\.(?:publish|publishLogged|emit|fire)\(\s*(?:[\w.]+,\s*){0,2}'([^']+)'/g)) {
        if (CHANNEL.test(m[1]!) && !isEventChannel(m[1]!)) problems.push(`${at}: publishes ${m[1]}`);
      }
      // Every `XChannels.key` names a channel of the map.
      for (const m of text.matchAll(/\b(\w+Channels)\.(\w+)\b/g)) {
        const named = namedChannels().get(`${m[1]}.${m[2]}`);
        if (named === undefined || !isEventChannel(named)) problems.push(`${at}: ${m[1]}.${m[2]}`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
