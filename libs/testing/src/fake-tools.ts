import { type AssistantApiAnswer, type AssistantApiCall, AssistantApi } from '#core/ports/assistant-api.port.js';
import {
  CatalogFetchError,
  CatalogFetcher,
  type CatalogRequest,
  type CatalogResponse,
} from '#core/ports/catalog-fetcher.port.js';
import {
  type McpCallResult,
  type McpConnection,
  McpConnectionLost,
  McpConnector,
  type McpLaunch,
  type McpToolInfo,
} from '#core/ports/mcp-connector.port.js';
import { type PackageContents, PackageFiles } from '#core/ports/package-files.port.js';
import { type ShellResult, ShellRunner } from '#core/ports/shell-runner.port.js';

/**
 * Runs no process: answers what `respond` says for each command (exit 0 and no output by
 * default) and remembers every call. An aborted signal ends the run as a timeout would.
 */
export class FakeShellRunner extends ShellRunner {
  readonly runs: Array<{ command: string; cwd: string; timeoutMs: number; maxOutputBytes: number }> = [];
  respond: (command: string, cwd: string) => Partial<ShellResult> = () => ({});

  constructor(readonly sandboxed = true) {
    super();
  }

  async run(
    command: string,
    options: { cwd: string; timeoutMs: number; maxOutputBytes: number; signal: AbortSignal },
  ): Promise<ShellResult> {
    const { cwd, timeoutMs, maxOutputBytes } = options;
    this.runs.push({ command, cwd, timeoutMs, maxOutputBytes });
    if (options.signal.aborted) return { exitCode: null, output: '', truncated: false, timedOut: true };
    const answer = { exitCode: 0, output: '', truncated: false, timedOut: false, ...this.respond(command, cwd) };
    const bytes = Buffer.from(answer.output);
    if (bytes.length > maxOutputBytes) {
      return { ...answer, output: bytes.subarray(0, maxOutputBytes).toString('utf8'), truncated: true };
    }
    return answer;
  }
}

/**
 * Store sources served from memory by URL. A file's validators come back with it and a request
 * carrying the current etag gets 'not-modified'; an unknown URL is 'missing'. Hosts in
 * `blockedHosts` (host → address) are refused for user sources, as a private address would be.
 */
export class FakeCatalogFetcher extends CatalogFetcher {
  readonly files = new Map<string, { body: Uint8Array; etag?: string; lastModified?: string }>();
  readonly blockedHosts = new Map<string, string>();
  /** URLs that fail as a network error would. */
  readonly failing = new Set<string>();
  readonly requests: CatalogRequest[] = [];

  /** Serves `body` (JSON-encoded unless a string or bytes) at `url`. */
  serve(url: string, body: unknown, validators: { etag?: string; lastModified?: string } = {}): this {
    const bytes =
      body instanceof Uint8Array ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    this.files.set(url, { body: bytes, ...validators });
    return this;
  }

  async fetch(request: CatalogRequest): Promise<CatalogResponse> {
    this.requests.push(request);
    const host = new URL(request.url).hostname;
    if (request.publicOnly && this.blockedHosts.has(host)) {
      throw new CatalogFetchError(`refused address ${this.blockedHosts.get(host)} of ${host}`);
    }
    if (this.failing.has(request.url)) throw new CatalogFetchError(`could not reach ${request.url}`);
    const file = this.files.get(request.url);
    if (!file) return { status: 'missing' };
    if (request.etag !== undefined && request.etag === file.etag) return { status: 'not-modified' };
    if (file.body.length > request.maxBytes) {
      throw new CatalogFetchError(`${request.url} is larger than ${request.maxBytes} bytes`);
    }
    return {
      status: 'ok',
      body: file.body,
      ...(file.etag ? { etag: file.etag } : {}),
      ...(file.lastModified ? { lastModified: file.lastModified } : {}),
    };
  }

  async blockedAddressOf(hostname: string): Promise<string | null> {
    return this.blockedHosts.get(hostname) ?? null;
  }
}

/**
 * Packages on a pretend disk by path. `pack` writes the contents as JSON; `read` of such bytes
 * (registered with `add`) gives them back, so a pack → read round trip is exact.
 */
export class FakePackageFiles extends PackageFiles {
  readonly packages = new Map<string, PackageContents>();

  add(filePath: string, contents: PackageContents | Uint8Array): this {
    this.packages.set(filePath, contents instanceof Uint8Array ? unpack(contents) : contents);
    return this;
  }

  async read(filePath: string): Promise<PackageContents> {
    const contents = this.packages.get(filePath);
    if (!contents) throw Object.assign(new Error(`ENOENT: ${filePath}`), { code: 'ENOENT' });
    return structuredClone(contents);
  }

  async pack(contents: PackageContents): Promise<Uint8Array> {
    const files = contents.files.map((f) => ({ path: f.path, base64: Buffer.from(f.data).toString('base64') }));
    return Buffer.from(JSON.stringify({ specYaml: contents.specYaml, files }));
  }
}

function unpack(bytes: Uint8Array): PackageContents {
  const raw = JSON.parse(Buffer.from(bytes).toString('utf8')) as {
    specYaml: string;
    files: Array<{ path: string; base64: string }>;
  };
  return {
    specYaml: raw.specYaml,
    files: raw.files.map((f) => ({ path: f.path, data: Buffer.from(f.base64, 'base64') })),
  };
}

/**
 * The assistant's API listener, answered by routes the test adds (`METHOD /api/path`); an
 * unknown route is 404 and an unavailable listener (a worker-only process) refuses every call.
 */
export class FakeAssistantApi extends AssistantApi {
  readonly calls: AssistantApiCall[] = [];
  readonly routes = new Map<string, (call: AssistantApiCall) => AssistantApiAnswer>();

  constructor(private readonly listening = true) {
    super();
  }

  route(operation: string, answer: (call: AssistantApiCall) => AssistantApiAnswer): this {
    this.routes.set(operation, answer);
    return this;
  }

  available(): boolean {
    return this.listening;
  }

  async operations(): Promise<string[]> {
    return [...this.routes.keys()];
  }

  async call(call: AssistantApiCall, signal: AbortSignal): Promise<AssistantApiAnswer> {
    if (!this.listening) throw new Error('the assistant API is not served by this process');
    signal.throwIfAborted();
    this.calls.push(structuredClone(call));
    const answer = this.routes.get(`${call.method.toUpperCase()} ${call.path}`);
    return answer ? answer(call) : { status: 404, body: { error: 'Not found' } };
  }
}

/** A tool of a FakeMcpConnector server: its schema and what a call answers (a thrown error is a tool failure). */
export interface FakeMcpTool extends McpToolInfo {
  run?: (args: Record<string, unknown>) => string | Promise<string>;
}

/**
 * MCP servers in memory, keyed by the launch (`stdio:<command>` or `http:<url>`). A connection
 * lists the server's tools and runs them; `crash(key)` ends its connections as a dying process
 * would (each `onLost` hears the reason once, calls then reject with McpConnectionLost).
 */
export class FakeMcpConnector extends McpConnector {
  readonly servers = new Map<string, FakeMcpTool[]>();
  readonly launches: McpLaunch[] = [];
  private readonly live = new Map<string, Set<{ lost: (reason: string) => void }>>();

  static keyOf(launch: McpLaunch): string {
    return launch.transport === 'stdio' ? `stdio:${launch.command}` : `http:${launch.url}`;
  }

  server(key: string, tools: FakeMcpTool[]): this {
    this.servers.set(key, tools);
    return this;
  }

  /** Open connections to the server. */
  openCount(key: string): number {
    return this.live.get(key)?.size ?? 0;
  }

  crash(key: string, reason = 'process exited with code 1'): void {
    for (const connection of [...(this.live.get(key) ?? [])]) connection.lost(reason);
  }

  async connect(launch: McpLaunch, onLost: (reason: string) => void): Promise<McpConnection> {
    // The address check is a function (not cloneable); the recorded launch keeps the data.
    const { refuseAddress: _check, ...data } = launch as McpLaunch & { refuseAddress?: unknown };
    this.launches.push(structuredClone(data) as McpLaunch);
    const key = FakeMcpConnector.keyOf(launch);
    const tools = this.servers.get(key);
    if (!tools) throw new Error(`could not connect to ${key}`);
    const open = this.live.get(key) ?? new Set();
    this.live.set(key, open);
    let state: 'open' | 'closed' | 'lost' = 'open';
    const handle = {
      lost: (reason: string) => {
        if (state !== 'open') return;
        state = 'lost';
        open.delete(handle);
        onLost(reason);
      },
    };
    open.add(handle);
    return {
      tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
      call: async (tool, args, signal): Promise<McpCallResult> => {
        if (state !== 'open') throw new McpConnectionLost(`connection to ${key} is ${state}`);
        signal.throwIfAborted();
        const found = tools.find((t) => t.name === tool);
        if (!found) return { text: `Unknown tool: ${tool}`, isError: true };
        try {
          return { text: found.run ? await found.run(args) : '', isError: false };
        } catch (err) {
          return { text: (err as Error).message, isError: true };
        }
      },
      close: async () => {
        state = 'closed';
        open.delete(handle);
      },
    };
  }
}
