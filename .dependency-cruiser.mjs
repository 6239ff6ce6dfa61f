/**
 * Import rules of libs/core, checked by `npm run lint` (scripts/lint-contexts.mjs, which also
 * checks that no contexts import each other in a circle, a rule dependency-cruiser cannot state
 * for folders holding sub-folders).
 *
 * Floors of libs/core/src, bottom up: `errors`, `kernel` (shared types: Space, App and its spec,
 * Conversation, the agent tool, the relay trace), `ports` (abstract classes the infrastructure
 * implements), then the contexts. Type-only imports count: a type shared by two contexts belongs
 * a floor down.
 */
export default {
  forbidden: [
    {
      name: 'core-module-cycle',
      severity: 'error',
      comment: 'Modules of libs/core do not import each other in a circle.',
      from: { path: '^libs/core/src/' },
      to: { path: '^libs/core/src/', circular: true },
    },
    {
      name: 'kernel-imports-a-context',
      severity: 'error',
      comment: 'The kernel sits below every context and the ports: it imports only itself and errors.',
      from: { path: '^libs/core/src/kernel/' },
      to: { path: '^libs/core/src/', pathNot: '^libs/core/src/(kernel|errors)/' },
    },
    {
      name: 'port-imports-a-context',
      severity: 'error',
      comment: 'Ports sit below the contexts: a type a port needs lives in the port or in the kernel.',
      from: { path: '^libs/core/src/ports/' },
      to: { path: '^libs/core/src/', pathNot: '^libs/core/src/(ports|kernel|errors)/' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.spec\\.ts$' },
    // `#core/…`, `#contracts/…` (package.json imports) resolve to their TypeScript sources.
    enhancedResolveOptions: { conditionNames: ['types', 'import', 'default'] },
  },
};
