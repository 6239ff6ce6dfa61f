import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseToolInput } from './tool-input.js';

describe('parseToolInput', () => {
  it('parses a JSON object', () => {
    assert.deepEqual(parseToolInput('{"file_path":"a.txt","limit":3}'), { input: { file_path: 'a.txt', limit: 3 } });
  });
  it('reads empty arguments as {}', () => {
    assert.deepEqual(parseToolInput(''), { input: {} });
    assert.deepEqual(parseToolInput('  '), { input: {} });
  });
  it('keeps the raw text and says why when the JSON is broken', () => {
    const parsed = parseToolInput('{"file_path": "a');
    assert.deepEqual(parsed.input, {});
    assert.equal(parsed.rawInput, '{"file_path": "a');
    assert.match(parsed.inputError ?? '', /^The tool input is not valid JSON/);
  });
  it('refuses JSON that is not an object', () => {
    for (const text of ['[1,2]', '"x"', '42', 'null']) {
      const parsed = parseToolInput(text);
      assert.deepEqual(parsed.input, {});
      assert.match(parsed.inputError ?? '', /must be a JSON object/, text);
    }
  });
  it('shortens a huge raw text in the message but keeps it whole in rawInput', () => {
    const text = `{"content": "${'x'.repeat(5000)}`;
    const parsed = parseToolInput(text);
    assert.equal(parsed.rawInput, text);
    assert.ok((parsed.inputError ?? '').length < 2300);
  });
});
