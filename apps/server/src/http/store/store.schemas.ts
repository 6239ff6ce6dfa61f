/** Response schemas of the Store operations (see openapi/response-schemas.ts for the pattern). */
import {
  type ApplyResultDto,
  type CategoryDto,
  type DiscoverNodeDto,
  type RegistrySourceDto,
  type SourceStatusDto,
  type StoreCapabilitiesDto,
  STORE_ENTRY_TYPES,
} from '#contracts/store.js';
import {
  anyObject,
  arr,
  bool,
  component,
  int,
  nullable,
  obj,
  oneOfValues,
  opt,
  type Schema,
  shape,
  str,
} from '../openapi/schema.js';

const SEVERITY = oneOfValues(['major', 'minor', 'patch']);

export const STORE_LISTING = component(
  'StoreListing',
  obj(
    {
      slug: str('`id` or `author/id`'),
      name: str('Resolved for the requested locale'),
      version: str(),
      author: str(),
      description: str(),
      type: oneOfValues(STORE_ENTRY_TYPES),
      category: str(),
      tags: arr(str()),
      path: str('Folder of the entry relative to the source address'),
      registryId: str('The source it comes from'),
      display_name: str(),
      icon: str(),
      locale: str(),
      i18n: anyObject('Translations by language tag: name, description'),
      requires_mcps: arr(str()),
      requires_skills: arr(str()),
      download_url: str(),
      min_app_version: str(),
      size_bytes: int(),
      checksum: str(),
      created_at: str(),
      updated_at: str(),
      meta: anyObject(),
    },
    ['slug', 'name', 'version', 'author', 'description', 'type', 'category', 'tags', 'path', 'registryId'],
    'A static-catalog entry (spec doc 3, "Entry fields") as listed',
  ),
);

const SOURCE_STATUS = shape<SourceStatusDto>({
  registryId: str(),
  status: oneOfValues(['ok', 'error']),
  error: opt(str()),
  skipped: opt(int('Entries of the index that broke a rule and were left out')),
});

export const STORE_QUERY_RESULT = component(
  'StoreQueryResult',
  obj(
    {
      items: arr(STORE_LISTING),
      total: int(),
      hasMore: bool(),
      groups: arr(obj({ type: str(), count: int(), hasMore: bool() }, ['type', 'count', 'hasMore'])),
      sources: arr(SOURCE_STATUS),
    },
    ['items', 'total', 'hasMore', 'groups', 'sources'],
  ),
);

export const STORE_DETAIL = obj(
  { entry: STORE_LISTING, spec: anyObject('The full spec as the source serves it'), registryId: str() },
  ['entry', 'spec', 'registryId'],
);

export const REGISTRY_SOURCE = component(
  'RegistrySource',
  shape<RegistrySourceDto>({
    id: str(),
    name: str(),
    url: str(),
    enabled: bool(),
    isDefault: bool('Built-in (SVC_STORE_SOURCES): cannot be removed'),
    sourceType: opt(str()),
    adapterConfig: opt(anyObject('As stored: treat the response as secret')),
  }),
);

export const STORE_CAPABILITIES = shape<StoreCapabilitiesDto>({
  catalog: bool(),
  installs: bool(),
  publish: bool(),
  reviewWorkflow: bool(),
  identity: str('`none` or the signed-in creator'),
});

const CATEGORY = shape<CategoryDto>({ id: str(), label: str(), icon: opt(str()) });
export const CATEGORY_TAXONOMY: Schema = {
  ...obj({ default: arr(CATEGORY) }, ['default']),
  additionalProperties: arr(CATEGORY),
};

export const DISCOVER_PAGE = obj(
  {
    version: int(),
    nodes: arr(
      shape<DiscoverNodeDto>({
        type: str(),
        title: opt(str()),
        subtitle: opt(str()),
        entries: opt(arr(STORE_LISTING)),
        hasMore: opt(bool()),
      }),
    ),
  },
  ['version', 'nodes'],
);

export const UPDATE_ITEM = component(
  'UpdateItem',
  obj(
    {
      appId: str(),
      currentVersion: str(),
      latestVersion: str(),
      entry: STORE_LISTING,
      strategy: str(),
      severity: SEVERITY,
      heldReason: str(
        'Present when an automatic update is held: why it was not applied (the MCP command policy refused it)',
      ),
    },
    ['appId', 'currentVersion', 'latestVersion', 'entry', 'strategy', 'severity'],
  ),
);

export const APPLY_RESULT = shape<ApplyResultDto>({
  appId: str(),
  from: str(),
  to: str(),
  severity: SEVERITY,
  kept: arr(str(), 'Fields where the user version was kept'),
  editsKnown: bool('False: no earlier author version was known, every difference was kept'),
});

export const PUBLICATION = obj(
  {
    slug: str(),
    name: str(),
    displayName: str(),
    type: str(),
    version: str(),
    status: oneOfValues(['listed', 'hidden', 'rejected']),
    takedownBy: str(),
    rejectReason: str(),
    submittedAt: str(),
    channel: str(),
    installs: int(),
  },
  ['slug', 'version', 'status'],
);

export const PUBLISH_PREVIEW = obj({ slug: str(), localVersion: str(), storeVersion: nullable(str()) }, [
  'slug',
  'localVersion',
  'storeVersion',
]);
export const FOUND_APP = obj({ appId: nullable(str()) }, ['appId']);
export const CHANGED = obj({ changed: bool() }, ['changed']);
export const DOCUMENT = obj({ content: nullable(str()) }, ['content']);
