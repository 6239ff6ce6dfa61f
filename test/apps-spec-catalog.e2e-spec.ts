import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseSpecYaml } from '#core/kernel/app-spec/spec-yaml.js';
import { validateSpec } from '#core/kernel/app-spec/validate-spec.js';
import { REPO_ROOT } from '#testing/test-server.js';

/**
 * Every real digital human of the reference catalog passes the validator. The catalog lives
 * beside the repository (`../shared/reference/dhp-catalog`) and is never copied into it.
 */
const CATALOG = join(REPO_ROOT, '..', 'shared', 'reference', 'dhp-catalog', 'packages');

function specFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) specFiles(full, out);
    else if (name === 'spec.yaml') out.push(full);
  }
  return out;
}

describe('real catalog specs', { skip: existsSync(CATALOG) ? false : `no catalog at ${CATALOG}` }, () => {
  it('every spec.yaml of the catalog validates', (t) => {
    const files = specFiles(CATALOG);
    assert.ok(files.length > 0, 'the catalog holds spec files');
    const failures: string[] = [];
    for (const file of files) {
      try {
        const spec = validateSpec(parseSpecYaml(readFileSync(file, 'utf8')), Date.now());
        assert.ok(spec.name && spec.system_prompt);
      } catch (err) {
        failures.push(`${file}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    assert.deepEqual(failures, []);
    t.diagnostic(`${files.length} catalog specs validated`);
  });
});
