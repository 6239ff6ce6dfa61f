/**
 * The environment the assistant's shell commands run with: the server's own, minus anything
 * that could hand the model a secret (the access password, API keys, database and Redis
 * URLs with their credentials, tokens of any kind).
 */
const SECRET_NAME = /(PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|COOKIE|SESSION)/i;
const SERVER_ONLY = /^(SVC_|DATABASE_URL$|REDIS_URL$|PG[A-Z]*$|NODE_OPTIONS$|npm_)/;

export function commandEnvironment(source: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || SERVER_ONLY.test(name) || SECRET_NAME.test(name)) continue;
    env[name] = value;
  }
  return { ...env, PAGER: 'cat', GIT_PAGER: 'cat', TERM: 'dumb' };
}
