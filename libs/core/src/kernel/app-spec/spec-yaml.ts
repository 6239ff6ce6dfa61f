import { isScalar, parseDocument, stringify } from 'yaml';
import { ErrorCodes } from '#contracts/errors.js';
import { DomainError } from '../../errors/domain-error.js';
import { unsafeTextReason } from '../../errors/text-rules.js';
import { type AppSpec, TOP_LEVEL_FIELDS } from './app-spec.js';

/** Largest spec file accepted: prompts are long, but a spec is not a data file. */
export const SPEC_YAML_MAX_CHARS = 256 * 1024;

/** Fields whose YAML numbers (`version: 1.0`) are read as the text written, not as a number. */
const VERSION_FIELDS = ['version', 'spec_version'];

/**
 * Reads a spec file. YAML that does not parse (or is not a single document) is a 400
 * INVALID_YAML naming the line; what it holds is checked afterwards by `validateSpec`.
 */
export function parseSpecYaml(source: string): unknown {
  if (source.length > SPEC_YAML_MAX_CHARS) {
    throw new DomainError(
      'invalid',
      `yamlContent must be at most ${SPEC_YAML_MAX_CHARS} characters`,
      ErrorCodes.INVALID_YAML,
    );
  }
  const unsafe = unsafeTextReason(source);
  if (unsafe) throw new DomainError('invalid', `yamlContent ${unsafe}`, ErrorCodes.INVALID_YAML);
  const doc = parseDocument(source, { uniqueKeys: true, prettyErrors: true });
  const problem = doc.errors[0];
  if (problem) {
    const line = problem.linePos?.[0]?.line;
    throw new DomainError(
      'invalid',
      `yamlContent is not valid YAML${line ? ` (line ${line})` : ''}: ${problem.message.split('\n')[0]}`,
      ErrorCodes.INVALID_YAML,
    );
  }
  for (const key of VERSION_FIELDS) {
    const node = doc.get(key, true);
    if (isScalar(node) && typeof node.value === 'number' && typeof node.source === 'string') {
      doc.set(key, node.source);
    }
  }
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // An alias bomb (aliases of aliases that would expand without end) stops here.
    throw new DomainError(
      'invalid',
      `yamlContent is not valid YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
      ErrorCodes.INVALID_YAML,
    );
  }
}

/** The spec as a YAML file (export-spec): canonical names, block style, long prompts kept as blocks. */
export function specToYaml(spec: AppSpec): string {
  // Stored specs come back from jsonb with their keys reordered; a file lists them as authors do.
  const ordered = Object.fromEntries(
    TOP_LEVEL_FIELDS.filter((key) => spec[key] !== undefined).map((key) => [key, spec[key]]),
  );
  return stringify(ordered, { lineWidth: 0, blockQuote: 'literal' });
}
