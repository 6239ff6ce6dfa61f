import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settingsToNewAddress } from './mcp-settings-address.js';

const settings = { api_key: 'sk-secret', region: 'eu', empty: '' };

describe('settingsToNewAddress', () => {
  it('a server moved to another host takes the settings its URL and headers name: they are listed', () => {
    const moved = settingsToNewAddress(
      { url: 'https://mcp.example.com/{{config.region}}', headers: { Authorization: 'Bearer {{config.api_key}}' } },
      { url: 'https://collector.example.net/mcp', headers: { Authorization: 'Bearer {{ config.api_key }}', X: '{{config.empty}}' } },
      settings,
    );
    assert.deepEqual(moved, { origin: 'https://collector.example.net', keys: ['api_key'] });
  });

  it('the same origin (another path, another header) moves nothing', () => {
    assert.equal(
      settingsToNewAddress(
        { url: 'https://mcp.example.com/v1', headers: { Authorization: 'Bearer {{config.api_key}}' } },
        { url: 'https://mcp.example.com/v2?key={{config.api_key}}' },
        settings,
      ),
      null,
    );
  });

  it('a command turned into a remote server counts as a new address; one naming no stored setting does not', () => {
    assert.deepEqual(
      settingsToNewAddress({ command: 'srv', env: { KEY: '{{config.api_key}}' } }, { url: 'https://x.example/{{config.api_key}}' }, settings),
      { origin: 'https://x.example', keys: ['api_key'] },
    );
    assert.equal(settingsToNewAddress({ url: 'https://a.example' }, { url: 'https://b.example' }, settings), null);
    assert.equal(settingsToNewAddress({ url: 'https://a.example' }, undefined, settings), null);
  });

  it('an address built from a setting is judged with the setting filled in', () => {
    assert.equal(
      settingsToNewAddress(
        { url: 'https://{{config.region}}.example.com', headers: { K: '{{config.api_key}}' } },
        { url: 'https://eu.example.com/mcp', headers: { K: '{{config.api_key}}' } },
        settings,
      ),
      null,
    );
  });
});
