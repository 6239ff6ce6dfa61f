import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, q } from './api.js';
import { highlightCode } from './markdown.js';

/** Rows shown of a CSV or TSV file; the rest is named in a note (Download or Edit as text has it all). */
export const MAX_TABLE_ROWS = 1000;

/**
 * Delimited text (RFC 4180) as rows of cells: quoted fields may hold the delimiter, line breaks and
 * doubled quotes (`""`); records end at LF or CRLF; a final line break adds no empty record.
 */
export function parseDelimited(text: string, delimiter = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte-order mark is not part of the first cell
  const endRow = () => {
    row.push(cell);
    rows.push(row);
    row = [];
    cell = '';
  };
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c !== '"') cell += c;
      else if (text[i + 1] === '"') {
        cell += '"';
        i++;
      } else quoted = false;
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === delimiter) {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRow();
    } else cell += c;
  }
  if (cell !== '' || row.length > 0 || quoted) endRow();
  return rows;
}

/** A CSV or TSV file as a table: the first line is the header; scrolls sideways inside its own box. */
export function CsvPreview(props: { name: string; text: string; delimiter: string }) {
  const rows = useMemo(() => parseDelimited(props.text, props.delimiter), [props.text, props.delimiter]);
  if (rows.length === 0) return <p class="muted">{props.name} is empty.</p>;
  const [header, ...body] = rows;
  const shown = body.slice(0, MAX_TABLE_ROWS);
  const more = body.length - shown.length;
  return (
    <div class="stack">
      {/* Focusable so a keyboard can scroll it (a scrollable region needs focus to scroll). */}
      <div class="table-scroll" role="region" aria-label={`Table of ${props.name}`} tabIndex={0}>
        <table class="data">
          <thead>
            <tr>
              {header!.map((cell, i) => (
                <th key={i} scope="col">
                  {cell}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((row, r) => (
              <tr key={r}>
                {row.map((cell, i) => (
                  <td key={i}>{cell}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="muted">
        {more > 0
          ? `Showing the first ${shown.length.toLocaleString('en')} of ${body.length.toLocaleString('en')} rows: ${more.toLocaleString('en')} more. Use Edit as text or Download to see them all.`
          : `${body.length.toLocaleString('en')} ${body.length === 1 ? 'row' : 'rows'}.`}
      </p>
    </div>
  );
}

/** Source code, read-only and highlighted (highlight.js escapes the text it is given). */
export function CodePreview(props: { name: string; text: string; language: string }) {
  const html = useMemo(() => highlightCode(props.text, props.language), [props.text, props.language]);
  return (
    <div
      class="code-view"
      role="region"
      aria-label={`Code of ${props.name}`}
      tabIndex={0}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}

/**
 * A PDF in the browser's own viewer. The download route wants the token in a header, so the bytes
 * are fetched here and shown from a blob: URL, given up when the preview goes.
 */
export function PdfPreview(props: { name: string; path: string }) {
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let live = true;
    let made: string | null = null;
    setUrl(null);
    setError('');
    api.blob(`/api/artifacts/download?path=${q(props.path)}`).then(
      (blob) => {
        if (!live) return;
        // The viewer goes by the blob's type, whatever the response said: the one fetched blob,
        // retyped by a slice (the same bytes, not a second copy) only where it needs to be.
        made = URL.createObjectURL(
          blob.type === 'application/pdf' ? blob : blob.slice(0, blob.size, 'application/pdf'),
        );
        setUrl(made);
      },
      (err: ApiError) => live && setError(err.message),
    );
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [props.path]);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!url) return <p class="muted">Loading {props.name}…</p>;
  return <iframe class="pdf-frame" src={url} title={`PDF preview of ${props.name}`} />;
}
