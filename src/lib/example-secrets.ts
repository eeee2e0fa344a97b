/**
 * The example secrets of `.dev.vars.example`: fine for `wrangler dev`, fatal when deployed (anyone
 * who read the repository could sign tokens, call as the platform administrator or open sealed
 * credentials). A deployed Worker (private targets not allowed, see outbound.ts) that still has one
 * of them refuses to serve; keep these in step with .dev.vars.example.
 */
import type { EnvironmentEnv } from "./environment";
import { outboundPolicy } from "./outbound";

export const EXAMPLE_SECRETS = {
  ADMIN_API_KEY: "dev-admin-key-change-me",
  TOKEN_SIGNING_SECRET: "dev-token-signing-secret-change-me-0123456789",
  ENCRYPTION_KEYS: "k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
} as const;

type SecretsEnv = Partial<Record<keyof typeof EXAMPLE_SECRETS, string>> & EnvironmentEnv;

/** The names of the secrets that still hold their example value, when deployed; [] in local development. */
export function exampleSecretsInUse(env: SecretsEnv): string[] {
  if (outboundPolicy(env).allowPrivateTargets) return [];
  return (Object.keys(EXAMPLE_SECRETS) as Array<keyof typeof EXAMPLE_SECRETS>).filter(
    (name) => env[name] === EXAMPLE_SECRETS[name],
  );
}
