/**
 * The queues the Worker consumes, by what they carry. Locally (wrangler.toml's top level) a queue
 * is named by its kind; a deployed environment names it `dq-monitor-<kind>-<environment>`, so that
 * staging and production (and other services of the account) never share one. wrangler.toml's
 * environments follow queueName; `npm run check:deploy` fails when they do not.
 */
import { deployedEnvironment, type EnvironmentEnv } from "../lib/environment";

export const QUEUE_KINDS = [
  "scan-jobs",
  "scan-jobs-dlq",
  "scan-results",
  "scan-results-dlq",
  "notifications",
  "notifications-dlq",
] as const;

export type QueueKind = (typeof QUEUE_KINDS)[number];

/** The name of a kind of queue in the given deployment. */
export function queueName(kind: QueueKind, env: EnvironmentEnv): string {
  const environment = deployedEnvironment(env);
  return environment === undefined ? kind : `dq-monitor-${kind}-${environment}`;
}

/** What a queue of this deployment carries, or undefined for a queue it does not know. */
export function queueKind(name: string, env: EnvironmentEnv): QueueKind | undefined {
  return QUEUE_KINDS.find((kind) => queueName(kind, env) === name);
}
