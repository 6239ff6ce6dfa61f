/**
 * The operation groups of the API document: each controller names its group with
 * `@ApiTags('<group>')` (swagger-decorators.ts), and the document lists the groups in this
 * order with these descriptions. The first nine are the specification's operation groups
 * (spec document 1, "Endpoint groups"); the others are this server's own. A new controller
 * uses one of these names (test/openapi.e2e-spec.ts fails for a tag not listed here).
 */
export const API_GROUPS = {
  Conversations: "The built-in assistant: sending messages, following and stopping a reply, a conversation's records",
  'Workspaces and files': 'Spaces (workspaces), their files and folders, memory and preferences',
  'Digital humans': 'Installed digital humans (apps): configuration, runs, chat, activity and escalations',
  Teams: 'Teams of digital humans: members, edges, runs and team conversations',
  'Knowledge bases': 'Knowledge bases the assistant can search',
  'Message channels': 'Message channels that connect digital humans to chat services',
  'Settings and models': 'Configuration and model sources',
  Store: 'Store sources, browsing, installing, updates and publishing',
  Terminal: 'The terminal (where the host has one)',
  Authentication: 'Checking the access password; the public status and policy',
  'AI browser': "The AI browser's live pages and sign-in sessions",
  System: 'Version and backups',
  Webhooks: "Webhook deliveries to digital humans' subscriptions (no access password)",
  Operations: 'Probes and metrics for orchestrators (outside /api)',
  Testing: 'Test hooks, registered only with SVC_TEST_HOOKS=1',
} as const;

export type ApiGroup = keyof typeof API_GROUPS;
