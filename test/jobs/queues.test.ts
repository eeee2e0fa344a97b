/**
 * Queues are told apart by kind: locally by their plain names, in a deployed environment by the
 * names wrangler.toml gives them there (`dq-monitor-<kind>-<environment>`).
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { QUEUE_KINDS, queueKind, queueName } from "../../src/jobs/queues";
import { asEnvironment } from "../support/environment";

/** Delivers an empty batch on `queue` to the Worker's queue handler. */
async function deliverEmpty(queue: string) {
  const batch = createMessageBatch(queue, []);
  const ctx = createExecutionContext();
  await worker.queue(batch as MessageBatch<never>, env);
  return getQueueResult(batch, ctx);
}

describe("queue names", () => {
  it("are the kinds locally, and carry the environment when deployed", () => {
    expect(queueName("scan-jobs", { ENVIRONMENT: "development" })).toBe("scan-jobs");
    expect(queueName("scan-jobs-dlq", { ENVIRONMENT: "staging" })).toBe("dq-monitor-scan-jobs-dlq-staging");
    for (const kind of QUEUE_KINDS) {
      for (const ENVIRONMENT of ["development", "staging", "production"]) {
        expect(queueKind(queueName(kind, { ENVIRONMENT }), { ENVIRONMENT })).toBe(kind);
      }
    }
    // Another environment's queue is not this one's.
    expect(queueKind("dq-monitor-scan-jobs-production", { ENVIRONMENT: "staging" })).toBeUndefined();
  });

  it("the staging Worker consumes its own queues and no other", async () => {
    await asEnvironment("staging", async () => {
      for (const kind of QUEUE_KINDS) {
        await expect(deliverEmpty(`dq-monitor-${kind}-staging`), kind).resolves.toBeDefined();
      }
      await expect(deliverEmpty("scan-jobs")).rejects.toThrow(/no consumer for queue scan-jobs/);
    });
    await expect(deliverEmpty("notifications-dlq")).resolves.toBeDefined();
  });
});
