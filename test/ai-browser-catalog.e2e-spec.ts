import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseSpecYaml } from '#core/kernel/app-spec/spec-yaml.js';
import { AgentHarness } from '#testing/agent-harness.js';
import { chromiumSkipReason } from '#testing/browser.js';
import type { RecordedModelRequest } from '#testing/scripted-model-server.js';
import { printServerLines, REPO_ROOT } from '#testing/test-server.js';
import { waitFor } from '#testing/wait.js';

/**
 * The real public catalog's digital humans (`../shared/reference/dhp-catalog`, never copied into
 * the repository) installed from their package folders and each triggered once with a scripted
 * model: those that ask for the AI browser get its tools, open a page served by this test,
 * read it, run one of their bundled skills where they have one, and report; none is skipped
 * for a missing `ai-browser` server.
 */
const CATALOG = join(REPO_ROOT, '..', 'shared', 'reference', 'dhp-catalog', 'packages', 'digital-humans');
const skip = existsSync(CATALOG) ? chromiumSkipReason() : `no catalog at ${CATALOG}`;

const BROWSER_TOOLS = [
  'browser_navigate',
  'browser_wait_for',
  'browser_click',
  'browser_fill',
  'browser_hover',
  'browser_press_key',
  'browser_upload_file',
  'browser_snapshot',
  'browser_screenshot',
  'browser_evaluate',
  'browser_run',
  'browser_tab',
  'browser_inspect',
  'browser_download',
  'browser_new_page',
  'browser_list_pages',
  'browser_select_page',
  'browser_close_page',
  'browser_fill_form',
  'browser_drag',
  'browser_resize',
  'browser_wait',
].map((t) => `mcp__ai-browser__${t}`);

type Block = { type?: string; name?: string; id?: string; tool_use_id?: string; content?: unknown; input?: unknown };

const toolsOf = (req: RecordedModelRequest): string[] =>
  ((req.body.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
const blocksOf = (req: RecordedModelRequest): Block[] =>
  ((req.body.messages ?? []) as Array<{ content: unknown }>).flatMap((m) =>
    Array.isArray(m.content) ? (m.content as Block[]) : [],
  );
const textOfResult = (b: Block): string =>
  typeof b.content === 'string'
    ? b.content
    : Array.isArray(b.content)
      ? (b.content as Block[]).map((c) => (c as { text?: string }).text ?? '').join('')
      : '';
/** A value for each required setting of a catalog spec (what a person fills in when importing it). */
function requiredSettings(specFile: string): Record<string, unknown> {
  const spec = parseSpecYaml(readFileSync(specFile, 'utf8')) as {
    config_schema?: Array<{ key: string; type?: string; required?: boolean; default?: unknown; options?: unknown[] }>;
  };
  const out: Record<string, unknown> = {};
  for (const field of spec.config_schema ?? []) {
    if (!field.required || field.default !== undefined) continue;
    const option = field.options?.[0];
    out[field.key] =
      option !== undefined
        ? typeof option === 'object' && option !== null && 'value' in option
          ? (option as { value: unknown }).value
          : option
        : field.type === 'number'
          ? 1
          : field.type === 'boolean'
            ? true
            : field.type === 'url'
              ? 'https://example.com/'
              : 'stand-in';
  }
  return out;
}

const systemOf = (req: RecordedModelRequest): string => JSON.stringify(req.body.system ?? '');

describe('the catalog digital humans with the AI browser', { skip }, () => {
  const h = new AgentHarness();
  let site: Server;
  let siteUrl = '';
  let spaceId = '';
  let spacePath = '';

  before(async () => {
    site = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<!doctype html><title>Catalog stand-in</title><h1>Hot topics</h1><a href="/next">Next page</a>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
    await h.start({ SVC_BROWSER_ALLOW: '127.0.0.1' });
    const space = h.okData<{ id: string; path: string }>(await h.api.post('/api/spaces', { name: 'Catalog' }));
    spaceId = space.id;
    spacePath = space.path;
    // Each run: open the stand-in page, read it, run a bundled skill (if any), report.
    h.model.respond((req) => {
      const tools = toolsOf(req);
      const used = blocksOf(req).filter((b) => b.type === 'tool_use');
      const names = used.map((b) => b.name);
      if (names.includes('report_to_user')) return { steps: [{ text: 'Done.' }] };
      const report = {
        toolCall: { name: 'report_to_user', input: { type: 'complete', summary: 'Read the stand-in page.' } },
      };
      if (!tools.includes('mcp__ai-browser__browser_navigate')) return { steps: [report] };
      if (used.length === 0)
        return { steps: [{ toolCall: { name: 'mcp__ai-browser__browser_navigate', input: { url: siteUrl } } }] };
      if (!names.includes('mcp__ai-browser__browser_snapshot'))
        return { steps: [{ toolCall: { name: 'mcp__ai-browser__browser_snapshot', input: {} } }] };
      const skill = /\.claude\/skills\/([\w-]+)\/index\.js/.exec(systemOf(req))?.[0];
      if (skill && !names.includes('mcp__ai-browser__browser_run'))
        return {
          steps: [
            { toolCall: { name: 'mcp__ai-browser__browser_run', input: { file: skill, params: {}, timeout: 5000 } } },
          ],
        };
      return { steps: [report] };
    });
  });

  /** What a run that did not end was doing: its state, its session, the model's last exchanges, the server's lines. */
  async function printRunDiagnostics(appId: string, runId: string, requestsBefore: number): Promise<void> {
    const state = (await h.api.get(`/api/apps/${appId}/state`)).body as unknown;
    const session = (await h.api.get(`/api/apps/${appId}/runs/${runId}/session`)).body as unknown;
    const exchanges = h.model.requests.slice(requestsBefore).map((r) =>
      blocksOf(r)
        .map((b) => (b.type === 'tool_use' ? `use ${b.name}` : b.type))
        .slice(-3)
        .join(', '),
    );
    process.stdout.write(
      `run ${runId} of ${appId}\nstate: ${JSON.stringify(state)}\nsession: ${JSON.stringify(session).slice(0, 2000)}\n` +
        `model requests since its trigger (last blocks of each):\n  ${exchanges.join('\n  ')}\n`,
    );
    printServerLines(h.server, 60, /browser|run|turn|warn|error|lease|queue/i);
  }

  after(async () => {
    await h.stop();
    await new Promise<void>((resolve) => site.close(() => resolve()));
  });

  it('installs all 34, runs each once, none skipped for ai-browser; browser ones navigate, snapshot and run their skills', async (t) => {
    const folders = readdirSync(CATALOG).sort();
    assert.equal(folders.length, 34, 'the catalog snapshot holds 34 digital humans');
    const installed: Array<{ id: string; folder: string; browser: boolean }> = [];
    for (const folder of folders) {
      const { appId } = h.okData<{ appId: string }>(
        await h.api.post('/api/store/import-dhpkg', {
          filePath: join(CATALOG, folder),
          spaceId,
          userConfig: requiredSettings(join(CATALOG, folder, 'spec.yaml')),
        }),
      );
      const app = h.okData<{ id: string; spec: { permissions?: string[] } }>(await h.api.get(`/api/apps/${appId}`));
      const perms = app.spec.permissions;
      installed.push({ id: app.id, folder, browser: perms === undefined || perms.includes('ai-browser') });
    }
    assert.equal(installed.filter((a) => a.browser).length >= 27, true, 'at least 27 ask for the AI browser');
    // Bundled skills land where browser_run paths name them.
    assert.ok(existsSync(join(spacePath, '.claude', 'skills', 'xhs-search', 'index.js')), 'xhs-search installed');

    const skippedForBrowser: string[] = [];
    const skillRuns: string[] = [];
    for (const app of installed) {
      const before = h.model.requests.length;
      // A schedule of the catalog's may have started a run of this app meanwhile: let it end first.
      let started = h.okData<{ outcome: string; reason?: string; runId: string }>(
        await h.api.post(`/api/apps/${app.id}/trigger`),
      );
      for (
        let tries = 0;
        started.outcome !== 'started' && /already running/.test(started.reason ?? '') && tries < 60;
        tries++
      ) {
        await new Promise((r) => setTimeout(r, 500));
        started = h.okData(await h.api.post(`/api/apps/${app.id}/trigger`));
      }
      if (started.outcome !== 'started') {
        if (/ai-browser/.test(started.reason ?? '')) skippedForBrowser.push(`${app.folder}: ${started.reason}`);
        continue;
      }
      // The run is over once its last turn is (the model's reply after the report included).
      await waitFor(
        async () =>
          h.okData<{ runningCount: number }>(await h.api.get(`/api/apps/${app.id}/state`)).runningCount === 0 &&
          (await h.api.get(`/api/apps/${app.id}/runs/${started.runId}/session`)).body.data?.active === false,
        60_000,
        `the run of ${app.folder} ends`,
      ).catch(async (error: unknown) => {
        await printRunDiagnostics(app.id, started.runId, before);
        throw error;
      });
      // This run's requests: from its manual trigger on, with its system prompt (a scheduled run
      // of another app may have asked the model meanwhile).
      const since = h.model.requests.slice(before);
      const first = since.find((r) => /Run started by a manual trigger/.test(JSON.stringify(r.body.messages ?? [])));
      assert.ok(first, `${app.folder} asked the model`);
      const marker = /You are \\"(.*?)\\", a digital human/.exec(systemOf(first))?.[0];
      assert.ok(marker, `${app.folder}'s prompt names it`);
      const requests = since.filter((r) => systemOf(r).includes(marker));
      const offered = toolsOf(requests[0]!);
      if (!app.browser) {
        assert.ok(!offered.some((t) => t.startsWith('mcp__ai-browser__')), `${app.folder} has no browser`);
        continue;
      }
      assert.deepEqual(
        BROWSER_TOOLS.filter((t) => !offered.includes(t)),
        [],
        `${app.folder} is offered every browser tool`,
      );
      // Each tool's result by the tool's name.
      const blocks = blocksOf(requests.at(-1)!);
      const resultOf = (name: string): string | undefined => {
        const use = blocks.find((b) => b.type === 'tool_use' && b.name === `mcp__ai-browser__${name}`);
        const result = use && blocks.find((b) => b.type === 'tool_result' && b.tool_use_id === use.id);
        return result ? textOfResult(result) : undefined;
      };
      const results = [resultOf('browser_navigate'), resultOf('browser_snapshot'), resultOf('browser_run')];
      assert.match(
        results[0] ?? '',
        /^Created page: Catalog stand-in - http:\/\/127\.0\.0\.1/,
        `${app.folder} navigated`,
      );
      assert.match(
        results[1] ?? '',
        /^# Page: Catalog stand-in\nURL: http:\/\/127\.0\.0\.1.*\n\n.*heading "Hot topics"/s,
      );
      if (results[2] !== undefined) {
        assert.match(results[2], /^Script execut(ed successfully|ion failed)/, `${app.folder} ran its skill`);
        skillRuns.push(app.folder);
      }
      const state = h.okData<{ lastStatus: string; lastError: string | null }>(
        await h.api.get(`/api/apps/${app.id}/state`),
      );
      assert.equal(state.lastStatus, 'ok', `${app.folder}: ${state.lastError}`);
    }
    assert.deepEqual(skippedForBrowser, []);
    // Every package whose prompt names a bundled skill's script ran one in the page.
    const namingSkills = folders.filter((f) =>
      readFileSync(join(CATALOG, f, 'spec.yaml'), 'utf8').includes('.claude/skills/'),
    );
    assert.ok(namingSkills.length >= 4);
    assert.deepEqual(skillRuns, namingSkills);
    t.diagnostic(
      `${installed.length} installed; ${installed.filter((a) => a.browser).length} with the browser; skills run by ${skillRuns.join(', ')}`,
    );
    const activity = h.okData<Array<{ type: string; content: { reason?: string } }>>(
      await h.api.get(`/api/apps/${installed[0]!.id}/activity`),
    );
    assert.ok(!activity.some((e) => e.type === 'run_skipped' && /ai-browser/.test(e.content.reason ?? '')));
  });
});
