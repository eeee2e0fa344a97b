import { env } from "cloudflare:workers";

/**
 * Runs `fn` as deployed: ALLOW_PRIVATE_TARGETS unset, so loopback, private and metadata
 * targets are refused. The Worker's env is the same object the tests import, so requests made
 * through SELF (routes, the queue) see it too; it is restored afterwards, whatever happens.
 */
export async function asDeployed<T>(fn: () => Promise<T>): Promise<T> {
  const vars = env as { ALLOW_PRIVATE_TARGETS?: string };
  const before = vars.ALLOW_PRIVATE_TARGETS;
  delete vars.ALLOW_PRIVATE_TARGETS;
  try {
    return await fn();
  } finally {
    vars.ALLOW_PRIVATE_TARGETS = before;
  }
}
