/**
 * Passwords that appear as examples in the README, the Compose file and the Kubernetes
 * manifests. Anyone can read them, so the server refuses to start with one. Keep this the
 * one list: test/safer-defaults.e2e-spec.ts fails when the documentation shows a password
 * that is not here.
 */
export const EXAMPLE_PASSWORDS: readonly string[] = [
  'choose-a-long-one',
  'choose-a-password',
  'CHANGE-ME-8-to-64-chars',
];

/** The placeholder marker of the manifests: any password containing it is refused. */
export const PLACEHOLDER_MARKER = 'CHANGE-ME';

/** Why `password` must not be used, or null when it may. */
export function examplePasswordProblem(password: string): string | null {
  if (password.toUpperCase().includes(PLACEHOLDER_MARKER)) {
    return `contains the placeholder ${PLACEHOLDER_MARKER}; set a password of your own`;
  }
  if (EXAMPLE_PASSWORDS.some((p) => p.toLowerCase() === password.toLowerCase())) {
    return 'is an example from the documentation, known to everyone; set a password of your own';
  }
  return null;
}
