import { env } from "cloudflare:workers";

/**
 * Runs `fn` as the named deployment (ENVIRONMENT = "staging", "production"…). The Worker's env is
 * the object the tests import, so requests and queue batches see it; restored afterwards.
 */
export async function asEnvironment<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const vars = env as { ENVIRONMENT?: string };
  const before = vars.ENVIRONMENT;
  vars.ENVIRONMENT = name;
  try {
    return await fn();
  } finally {
    vars.ENVIRONMENT = before;
  }
}
