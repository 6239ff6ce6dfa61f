import { ErrorCodes } from '#contracts/errors.js';

/** Texts of Store failures (the envelope's `error`). */
export const StoreErrors = {
  notFound: (slug: string) => `No store item with slug "${slug}"`,
  sourceNotFound: (id: string) => `Store source not found: ${id}`,
  builtInSource: 'Built-in store sources cannot be removed; turn them off instead.',
  duplicateUrl: 'A store source with this url already exists',
  privateHost: 'url must not point to a loopback, private or link-local host',
  notFromStore: (appId: string) => `App ${appId} was not installed from a Store source`,
  noUpdate: (appId: string) => `No update is available for app ${appId}`,
  majorRefused: (from: string, to: string) =>
    `The update ${from} → ${to} is a major update; mode patch_minor applies only patch and minor updates`,
  globalOnlyForTools:
    'spaceId null is only for a deliberate global install of a skill or MCP app; omit spaceId to install a digital human for every workspace',
  specMismatch: (field: string, got: string, want: string) =>
    `The item's spec.yaml does not match its store entry: ${field} is "${got}", expected "${want}"`,
  publishingUnavailable:
    'Publishing needs a dhp-v2 store source that offers publishing (its /capabilities) with a signed-in creator (adapterConfig.token); this server has none (see GET /api/store/capabilities)',
  requirementMissing: (kind: string, id: string, slug: string) =>
    `${slug} requires the ${kind} "${id}", which is not installed and no enabled Store source provides; nothing was installed`,
  sourceFailed: (url: string, why: string) => `Store source ${url} failed: ${why}`,
  settingsToNewAddress: (version: string, keys: string[], origin: string) =>
    `Version ${version} sends the settings ${keys.join(', ')} to a different address (${origin}); ` +
    'the update is held: apply it with those settings given again (settings: {…}) to send them there',
} as const;

export const PUBLISHING_UNAVAILABLE = ErrorCodes.PUBLISHING_UNAVAILABLE;
