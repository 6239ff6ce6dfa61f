import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileSubscriptionMatches } from './file-trigger-rules.js';

const change = (relativePath: string, root = '/data/spaces/s1') => ({ path: `${root}/${relativePath}`, relativePath });

describe('file subscriptions', () => {
  it('matches a glob on the path inside the space; a pattern without / matches the name at any depth', () => {
    assert.equal(fileSubscriptionMatches({ pattern: '*.md' }, change('notes.md')), true);
    assert.equal(fileSubscriptionMatches({ pattern: '*.md' }, change('docs/deep/notes.md')), true);
    assert.equal(fileSubscriptionMatches({ pattern: '*.md' }, change('notes.txt')), false);
    assert.equal(fileSubscriptionMatches({ pattern: 'inbox/**/*.csv' }, change('inbox/2026/a.csv')), true);
    assert.equal(fileSubscriptionMatches({ pattern: 'inbox/**/*.csv' }, change('outbox/a.csv')), false);
  });

  it('path is a part of the absolute path; no pattern or path matches every change', () => {
    assert.equal(fileSubscriptionMatches({ path: '/data/spaces/s1' }, change('a.txt')), true);
    assert.equal(fileSubscriptionMatches({ path: '/data/spaces/s2' }, change('a.txt')), false);
    assert.equal(fileSubscriptionMatches({}, change('a.txt')), true);
  });

  it('never the server folder .svc', () => {
    assert.equal(fileSubscriptionMatches({}, change('.svc/state.json')), false);
    assert.equal(fileSubscriptionMatches({ pattern: '**/*.json' }, change('sub/.svc/x.json')), false);
  });

  it('a pattern with many stars is matched in linear time; one the matcher refuses never matches', () => {
    const started = Date.now();
    const stars = '*a*a*a*a*a*a*a*a*a*a*b';
    assert.equal(fileSubscriptionMatches({ pattern: stars }, change('a'.repeat(200))), false);
    assert.equal(fileSubscriptionMatches({ pattern: stars }, change(`x/${'a'.repeat(20)}b`)), true);
    assert.ok(Date.now() - started < 500, `took ${Date.now() - started} ms`);
    assert.equal(fileSubscriptionMatches({ pattern: '{a,b}'.repeat(12) }, change('ab')), false);
  });
});
