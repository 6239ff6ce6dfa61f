import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { containsNulByte, detectFileType, isTextualMime, mimeForName, SNIFF_BYTES } from './file-types.js';

const text = Buffer.from('hello\nworld\n');
const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00]);

describe('file types', () => {
  it('classifies by name and bytes', () => {
    const cases: Array<[string, Buffer, boolean, string, string, boolean]> = [
      ['notes.md', text, true, 'markdown', 'text/markdown', true],
      ['page.html', text, true, 'html', 'text/html', true],
      ['data.json', text, true, 'json', 'application/json', true],
      ['main.ts', text, true, 'code', 'text/typescript', true],
      ['app.py', text, true, 'code', 'text/x-python', true],
      ['style.css', text, true, 'code', 'text/css', true],
      ['table.csv', text, true, 'csv', 'text/csv', true],
      ['plain.txt', text, true, 'text', 'text/plain', true],
      ['Makefile', text, true, 'code', 'text/plain', true],
      ['LICENSE', text, true, 'text', 'text/plain', true],
      ['no-extension-text', text, true, 'text', 'text/plain', true],
      ['no-extension-bin', binary, false, 'binary', 'application/octet-stream', false],
      ['image.png', binary, false, 'image', 'image/png', true],
      ['photo.JPG', binary, false, 'image', 'image/jpeg', true],
      ['logo.svg', Buffer.from('<svg/>'), true, 'image', 'image/svg+xml', true],
      ['doc.pdf', Buffer.from('%PDF-1.7\n'), false, 'pdf', 'application/pdf', true],
      ['archive.zip', binary, false, 'binary', 'application/zip', false],
      ['clip.mp4', binary, false, 'video', 'video/mp4', false],
      ['song.mp3', binary, false, 'audio', 'audio/mpeg', false],
    ];
    for (const [name, head, isText, contentType, mimeType, canViewInCanvas] of cases) {
      assert.deepEqual(detectFileType(name, head), { isText, canViewInCanvas, contentType, mimeType }, name);
    }
  });

  it('treats a text-named file holding NUL bytes as binary', () => {
    const info = detectFileType('looks.txt', Buffer.from('abc\0def'));
    assert.equal(info.isText, false);
    assert.equal(info.contentType, 'binary');
    assert.equal(info.canViewInCanvas, false);
  });

  it('sniffs only the first 8 KB', () => {
    const head = Buffer.alloc(SNIFF_BYTES + 10, 0x61);
    head[SNIFF_BYTES + 5] = 0;
    assert.equal(detectFileType('x.txt', head).isText, true);
    head[SNIFF_BYTES - 1] = 0;
    assert.equal(detectFileType('x.txt', head).isText, false);
  });

  it('knows textual MIME types', () => {
    for (const t of [
      'text/plain',
      'application/json',
      'image/svg+xml',
      'application/vnd.api+json',
      'application/xml',
    ]) {
      assert.equal(isTextualMime(t), true, t);
    }
    for (const t of ['image/png', 'application/pdf', 'application/zip', 'application/octet-stream', 'video/mp4']) {
      assert.equal(isTextualMime(t), false, t);
    }
    assert.equal(containsNulByte(new Uint8Array([1, 2, 0])), true);
    assert.equal(containsNulByte(new Uint8Array([])), false);
    assert.equal(mimeForName('x.unknownext'), null);
    assert.equal(mimeForName('a.TS'), 'text/typescript');
  });
});
