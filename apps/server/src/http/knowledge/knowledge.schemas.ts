import type {
  AddFilesResultDto,
  LinkedDirDto,
  IngestStatusDto,
  KnowledgeBaseDto,
  KnowledgeSourceRefDto,
  KnowledgeStatsDto,
  RawFileDto,
  SearchHitDto,
} from '#contracts/knowledge.js';
import {
  arr,
  bool,
  component,
  int,
  isoTime,
  nullable,
  num,
  obj,
  oneOfValues,
  opt,
  shape,
  str,
} from '../openapi/schema.js';

/** The response schemas of the Knowledge bases operations (docs/api/knowledge.md). */

export const KB_STATS = component(
  'KnowledgeStats',
  shape<KnowledgeStatsDto>({
    rawFileCount: int(),
    indexedCount: int(),
    chunkCount: int(),
    rawSizeBytes: int(),
    lastIngestAt: opt(isoTime()),
  }),
);

export const KNOWLEDGE_BASE = component(
  'KnowledgeBase',
  shape<KnowledgeBaseDto>({
    id: str(),
    name: str(),
    icon: opt(str()),
    description: opt(str()),
    status: oneOfValues(['active', 'paused', 'error']),
    createdAt: isoTime(),
    updatedAt: isoTime(),
    spaceIds: arr(str()),
    appIds: arr(str()),
    isDefault: bool(),
    stats: KB_STATS,
    embedding: nullable(
      obj({ modelSourceId: str(), model: str(), dimensions: int() }, ['modelSourceId', 'model', 'dimensions']),
    ),
    searchMode: oneOfValues(['keyword', 'hybrid']),
    searchNote: opt(
      str(
        'Why search is keyword-only although an embedding model is set (its source is gone, not OpenAI-compatible, or has no embeddings endpoint)',
      ),
    ),
  }),
);

export const RAW_FILE = component(
  'KnowledgeRawFile',
  shape<RawFileDto>({
    name: str(),
    path: str('The path inside the knowledge base (remove-raw takes it)'),
    size: int(),
    learned: bool(),
    state: oneOfValues(['pending', 'learned', 'no-text', 'failed']),
    error: opt(str()),
    source: oneOfValues(['raw', 'linked']),
  }),
);

export const LINKED_DIR = component(
  'KnowledgeLinkedDir',
  shape<LinkedDirDto>({
    id: str(),
    kbId: str(),
    spaceId: str(),
    path: str("Inside the space's folder, forward slashes ('' for the whole space)"),
    label: opt(str()),
    state: oneOfValues(['active', 'error']),
    error: opt(str()),
    fileCount: int(),
    prefix: str("The folder inside the knowledge base its sources are listed under (raw's paths)"),
    createdAt: str(),
  }),
);

export const ADD_FILES_RESULT = shape<AddFilesResultDto>({
  added: arr(str()),
  rejected: arr(obj({ path: str(), reason: str() }, ['path', 'reason'])),
});

export const INGEST_STATUS = component(
  'KnowledgeIngestStatus',
  shape<IngestStatusDto>({
    kbId: str(),
    total: int(),
    completed: int(),
    current: opt(str()),
    phase: oneOfValues(['idle', 'running', 'done', 'error']),
    errors: arr(obj({ file: str(), message: str() }, ['file', 'message'])),
  }),
);

export const SOURCE_REF = shape<KnowledgeSourceRefDto>({ name: str(), path: str() });

export const SEARCH_HIT = component(
  'KnowledgeSearchHit',
  shape<SearchHitDto>({
    chunkId: str('The citation id'),
    sourceName: str(),
    sourcePath: str(),
    heading: opt(str()),
    text: str(),
    score: num(),
    kbId: str(),
  }),
);
