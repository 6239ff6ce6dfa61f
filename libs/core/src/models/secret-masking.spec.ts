import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isSecretKey,
  maskSecrets,
  maskSecretsInText,
  maskUrlPasswords,
  MovedSecretError,
  restoreMaskedSecrets,
} from './secret-masking.js';

describe('isSecretKey', () => {
  it('recognizes secret-bearing keys in every naming style', () => {
    for (const key of [
      'apiKey',
      'api_key',
      'API_KEY',
      'OPENAI_API_KEY',
      'apikey',
      'APIKey',
      'token',
      'accessToken',
      'refresh_token',
      'GITHUB_TOKEN',
      'password',
      'remotePassword',
      'secret',
      'clientSecret',
      'webhook-secret',
      'privateKey',
      'private_key',
      'Authorization',
      'credentials',
    ]) {
      assert.equal(isSecretKey(key), true, key);
    }
  });

  it('recognizes environment-style names that end in a secret word, and auth', () => {
    for (const key of [
      'PGPASSWORD',
      'MYSQL_PWD',
      'dbpassword',
      'REDISPASSWORD',
      'csrftoken',
      'auth',
      'proxy_auth',
      'AUTH',
    ]) {
      assert.equal(isSecretKey(key), true, key);
    }
  });

  it('leaves counters, hints and plain names alone', () => {
    for (const key of [
      'maxOutputTokens',
      'inputTokens',
      'tokenExpires',
      'passwordHint',
      'key',
      'config_key',
      'apiUrl',
      'model',
      'name',
      'keyboard',
      'secretary',
      'tokenizer',
      'authType',
      'author',
      'oauthUrl',
    ]) {
      assert.equal(isSecretKey(key), false, key);
    }
  });
});

describe('maskSecrets', () => {
  it('masks secrets at any depth and inside arrays, without touching the input', () => {
    const input = {
      aiSources: {
        currentId: 'a',
        sources: [
          { id: 'a', apiKey: 'sk-live-1', model: 'm', modelOverrides: { m: { maxOutputTokens: 4096 } } },
          { id: 'b', apiKey: '', model: 'n' },
        ],
      },
      mcpServers: { gh: { command: 'x', env: { GITHUB_TOKEN: 'ghp_secret', LOG_LEVEL: 'debug' } } },
      remoteAccess: { enabled: true, password: 'Hunter2-Hunter2' },
      headers: [{ Authorization: 'Bearer abc' }],
      nested: { deeper: { clientSecret: 12345, accessToken: { value: 'obj' } } },
    };
    const before = JSON.stringify(input);
    const masked = maskSecrets(input);
    assert.equal(JSON.stringify(input), before, 'input untouched');
    assert.equal(masked.aiSources.sources[0]!.apiKey, '***');
    assert.equal(masked.aiSources.sources[1]!.apiKey, '', 'an empty key stays empty');
    assert.equal(masked.aiSources.sources[0]!.modelOverrides?.m.maxOutputTokens, 4096);
    assert.equal(masked.mcpServers.gh.env.GITHUB_TOKEN, '***');
    assert.equal(masked.mcpServers.gh.env.LOG_LEVEL, 'debug');
    assert.equal(masked.remoteAccess.password, '***');
    assert.equal(masked.headers[0]!.Authorization, '***');
    assert.equal(masked.nested.deeper.clientSecret, '***' as unknown);
    assert.equal(masked.nested.deeper.accessToken, '***' as unknown, 'a secret object is masked whole');
    const text = JSON.stringify(masked);
    for (const secret of ['sk-live-1', 'ghp_secret', 'Hunter2', 'Bearer abc', '12345', 'obj']) {
      assert.ok(!text.includes(secret), secret);
    }
  });

  it('keeps a "__proto__" key as data', () => {
    const input = JSON.parse('{"__proto__": {"token": "t"}, "a": 1}') as Record<string, unknown>;
    const masked = maskSecrets(input);
    assert.deepEqual(Object.keys(masked), ['__proto__', 'a']);
    assert.equal(Object.getPrototypeOf(masked), Object.prototype);
    assert.deepEqual(JSON.parse(JSON.stringify(masked)), JSON.parse('{"__proto__": {"token": "***"}, "a": 1}'));
  });
});

describe('restoreMaskedSecrets', () => {
  it('keeps a stored secret only at the address it was stored with', () => {
    const stored = { remote: { url: 'https://mcp.example/a', headers: { Authorization: 'Bearer s' } } };
    const same = { remote: { url: 'https://mcp.example/a', headers: { Authorization: '***' } } };
    assert.deepEqual(restoreMaskedSecrets(same, stored), stored);
    const moved = { remote: { url: 'https://evil.example/a', headers: { Authorization: '***' } } };
    assert.throws(
      () => restoreMaskedSecrets(moved, stored, 'mcpServers'),
      (err: unknown) =>
        err instanceof MovedSecretError &&
        err.message.startsWith('mcpServers.remote.headers.Authorization must be sent again: mcpServers.remote.url'),
    );
    const resent = { remote: { url: 'https://evil.example/a', headers: { Authorization: 'Bearer new' } } };
    assert.deepEqual(restoreMaskedSecrets(resent, stored), resent);
    const apiUrl = [{ id: 'x', apiUrl: 'https://b.example', apiKey: '***' }];
    assert.throws(() => restoreMaskedSecrets(apiUrl, [{ id: 'x', apiUrl: 'https://a.example', apiKey: 'k' }]));
  });

  it('puts stored secrets back where "***" stands, pairing array items by id', () => {
    const stored = {
      servers: [
        { id: 's1', token: 'one' },
        { id: 's2', token: 'two' },
      ],
      env: { API_KEY: 'k', OTHER: 'x' },
      list: [{ password: 'p0' }, { password: 'p1' }],
    };
    const incoming = {
      servers: [
        { id: 's2', token: '***' },
        { id: 's1', token: 'new-one' },
        { id: 's3', token: '***' },
      ],
      env: { API_KEY: '***', OTHER: '***' },
      list: [{ password: '***' }, { password: '***' }, { password: '***' }],
    };
    assert.deepEqual(restoreMaskedSecrets(incoming, stored), {
      servers: [{ id: 's2', token: 'two' }, { id: 's1', token: 'new-one' }, { id: 's3' }],
      env: { API_KEY: 'k', OTHER: '***' },
      list: [{ password: 'p0' }, { password: 'p1' }, {}],
    });
  });

  it('drops a masked secret when nothing is stored there', () => {
    assert.deepEqual(restoreMaskedSecrets({ a: { token: '***', b: 1 } }, undefined), { a: { b: 1 } });
    assert.deepEqual(restoreMaskedSecrets({ token: '***' }, { token: '' }), {});
  });

  it('mask then restore gives the stored value back', () => {
    const stored = { x: { apiKey: 'sk-1', nested: [{ id: 'a', secret: 's' }] }, y: 2 };
    assert.deepEqual(restoreMaskedSecrets(maskSecrets(stored), stored), stored);
  });
});

describe('passwords inside URLs', () => {
  it('masks the password of any URL with credentials, wherever a string holds one', () => {
    assert.equal(maskUrlPasswords('postgres://u:pw@h:5432/db'), 'postgres://u:***@h:5432/db');
    assert.equal(maskUrlPasswords('redis://:s3cret@redis:6379'), 'redis://:***@redis:6379');
    assert.equal(maskUrlPasswords('https://user:p%40ss@example.com/x'), 'https://user:***@example.com/x');
    assert.equal(
      maskUrlPasswords('primary postgres://a:b@h1/db, replica postgresql://c:d@h2/db'),
      'primary postgres://a:***@h1/db, replica postgresql://c:***@h2/db',
    );
  });

  it('leaves URLs without a password alone', () => {
    for (const text of [
      'https://example.com/a:b@c',
      'postgres://user@h/db',
      'http://h:8080/x',
      'mailto:a@b.c',
      'plain',
    ]) {
      assert.equal(maskUrlPasswords(text), text, text);
    }
  });

  it('maskSecrets masks URL passwords under any key, and restore gives them back', () => {
    const stored = {
      databaseUrl: 'postgres://u:pw@h/db',
      env: { PGPASSWORD: 'x', auth: 'u:p' },
      list: ['redis://:k@r'],
    };
    const masked = maskSecrets(stored);
    assert.deepEqual(masked, {
      databaseUrl: 'postgres://u:***@h/db',
      env: { PGPASSWORD: '***', auth: '***' },
      list: ['redis://:***@r'],
    });
    assert.deepEqual(restoreMaskedSecrets(masked, stored), stored);
    assert.deepEqual(restoreMaskedSecrets({ databaseUrl: 'postgres://u:new@h/db' }, stored), {
      databaseUrl: 'postgres://u:new@h/db',
    });
  });
});

describe('secrets inside other strings', () => {
  it('masks secret query parameters, bearer and basic credentials; leaves the rest of the text', () => {
    assert.equal(
      maskSecretsInText('https://server.smithery.ai/x/mcp?api_key=abc123&profile=p1'),
      'https://server.smithery.ai/x/mcp?api_key=***&profile=p1',
    );
    assert.equal(
      maskSecretsInText('https://h/x?a=1&access_token=t0k&token='),
      'https://h/x?a=1&access_token=***&token=',
    );
    assert.equal(maskSecretsInText('Bearer sk-live_abc.def'), 'Bearer ***');
    assert.equal(maskSecretsInText('use "Basic dXNlcjpwdw==" here'), 'use "Basic ***" here');
    assert.equal(maskSecretsInText('https://h/x?page=2&key=k'), 'https://h/x?page=2&key=k');
    assert.equal(maskSecretsInText('Bearer ***'), 'Bearer ***');
  });

  it('signatures and session ids are secret keys; restore gives the masked strings back', () => {
    assert.equal(isSecretKey('X-Signature'), true);
    assert.equal(isSecretKey('sessionId'), true);
    assert.equal(isSecretKey('session_id'), true);
    assert.equal(isSecretKey('id'), false);
    const stored = {
      url: 'https://h/mcp?api_key=abc',
      headers: { 'X-Signature': 'sig', Other: 'Bearer tok' },
      sessionId: 's-1',
    };
    const masked = maskSecrets(stored);
    assert.deepEqual(masked, {
      url: 'https://h/mcp?api_key=***',
      headers: { 'X-Signature': '***', Other: 'Bearer ***' },
      sessionId: '***',
    });
    assert.deepEqual(restoreMaskedSecrets(masked, stored), stored);
  });
});
