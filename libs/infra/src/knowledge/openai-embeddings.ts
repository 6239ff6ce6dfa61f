import { Logger } from '@nestjs/common';
import { Embeddings, EmbeddingsUnavailable } from '#core/knowledge/knowledge.ports.js';
import type { ModelEndpoint } from '#core/ports/model-provider.port.js';
import { openAIBaseUrl } from '../models/openai-compatible.adapter.js';

/** Texts per request (OpenAI takes 2,048; local servers often fewer). */
export const EMBED_BATCH = 64;
/** Characters of one text sent (a chunk is ~1,200; this bounds a pathological one). */
const MAX_INPUT_CHARS = 8_000;
const REQUEST_TIMEOUT_MS = 60_000;
/** Waits before the retries of a 429, 5xx or network failure, as the chat calls retry. */
const RETRY_DELAYS_MS = [500, 2_000, 5_000];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Transient extends Error {}

/**
 * `Embeddings` over an OpenAI-compatible `POST {base}/embeddings` (the base as the chat adapter
 * derives it: `http://host:11434` → `http://host:11434/v1`). The request goes where the model
 * source's chat requests go, with the same key (sent as a Bearer token, never logged: error
 * texts name the source and the HTTP status only). An Anthropic source, a 404/405/501, or vectors
 * of another length than the knowledge base's `dimensions` are `EmbeddingsUnavailable`.
 */
export class OpenAICompatibleEmbeddings extends Embeddings {
  private readonly logger = new Logger('Knowledge');

  async embed(endpoint: ModelEndpoint, model: string, dimensions: number, texts: string[]): Promise<number[][]> {
    const name = endpoint.source?.name ?? 'the model source';
    if (endpoint.provider !== 'openai') {
      throw new EmbeddingsUnavailable(`${name} (${endpoint.provider}) has no OpenAI-compatible embeddings endpoint`);
    }
    const url = `${openAIBaseUrl(endpoint.apiUrl)}/embeddings`;
    const out: number[][] = [];
    for (let start = 0; start < texts.length; start += EMBED_BATCH) {
      const batch = texts.slice(start, start + EMBED_BATCH).map((t) => t.slice(0, MAX_INPUT_CHARS));
      out.push(...(await this.withRetries(name, () => this.call(url, endpoint, name, model, dimensions, batch))));
    }
    return out;
  }

  private async withRetries<T>(name: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        if (!(err instanceof Transient) || attempt >= RETRY_DELAYS_MS.length) throw err;
        this.logger.debug({
          msg: 'embeddings request retried',
          source: name,
          attempt: attempt + 1,
          error: err.message,
        });
        await sleep(RETRY_DELAYS_MS[attempt]!);
      }
    }
  }

  private async call(
    url: string,
    endpoint: ModelEndpoint,
    name: string,
    model: string,
    dimensions: number,
    input: string[],
  ): Promise<number[][]> {
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
        },
        body: JSON.stringify({ model, input, encoding_format: 'float' }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new Transient(`${name} could not be reached for embeddings (${err instanceof Error ? err.name : 'error'})`);
    }
    if ([404, 405, 501].includes(response.status)) {
      await response.body?.cancel();
      throw new EmbeddingsUnavailable(
        `${name} has no embeddings endpoint (HTTP ${response.status} from POST /embeddings)`,
      );
    }
    if (response.status === 429 || response.status >= 500) {
      await response.body?.cancel();
      throw new Transient(`${name} answered HTTP ${response.status} to an embeddings request`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`${name} refused an embeddings request (HTTP ${response.status})`);
    }
    const body = (await response.json().catch(() => null)) as {
      data?: Array<{ index?: number; embedding?: unknown }>;
    } | null;
    const data = body?.data;
    if (!Array.isArray(data) || data.length !== input.length) {
      throw new Error(`${name} answered an embeddings response without one vector per input`);
    }
    const ordered = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return ordered.map((d) => {
      const v = d.embedding;
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw new Error(`${name} answered an embedding that is not a list of numbers`);
      }
      if (v.length !== dimensions) {
        throw new EmbeddingsUnavailable(
          `${model} on ${name} answers ${v.length}-dimensional vectors; the knowledge base expects ${dimensions}`,
        );
      }
      return v as number[];
    });
  }
}
