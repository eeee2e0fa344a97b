/**
 * Faults (issue 12, point 7): a queue message delivered more than once, the asset's Durable Object
 * reset between applies, a D1 statement failing inside the apply. No doubled incident, no lost
 * alert, and the job's state says what happened.
 */

import {
  createExecutionContext,
  createMessageBatch,
  evictDurableObject,
  getQueueResult,
  runInDurableObject,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import type { ScanQueueMessage } from "../../src/contracts/messages";
import worker from "../../src/index";
import { admin, call } from "../support/api";
import { countRows, csvAsset } from "../support/assets";
import { emailBatch as batch, scanJob, uploadCsv } from "../support/scans";

/** An asset with five clean batches of history. */
async function assetWithHistory() {
  const { tenant, asset } = await csvAsset();
  for (let seq = 1; seq <= 5; seq++) {
    expect(
      await scanJob(tenant, asset.id, await uploadCsv(tenant, asset.id, batch(seq))),
      `history ${seq}`,
    ).toMatchObject({
      status: "SUCCEEDED",
    });
  }
  return { tenant, assetId: asset.id as number };
}

async function deliver(messages: ScanQueueMessage[]) {
  const b = createMessageBatch<ScanQueueMessage>(
    "scan-jobs",
    messages.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(b as MessageBatch<never>, env);
  return getQueueResult(b, ctx);
}

const counts = async (tenant: string, assetId: number, jobId: string) => ({
  // As the API lists them: an asset's object keeps a scan's alerts before its D1 batch, shown once it is applied.
  alerts: (
    await call("POST", `/api/backend/${tenant}/configuration/sources/${assetId}/alerts?job_id=${jobId}`, { as: admin })
  ).body.length as number,
  open: await countRows("incidents", "asset_id = ? and state = 'OPEN'", assetId),
  // The incidents' history, kept by the asset's object (issue 38).
  history: await runInDurableObject(
    assetMonitor(env, tenant, assetId),
    (_o, state) =>
      (
        state.storage.sql.exec("SELECT count(*) AS n FROM incident_history WHERE applied = 1").toArray()[0] as {
          n: number;
        }
      ).n,
  ),
});

describe("faults", { timeout: 90_000 }, () => {
  it("a job delivered again, twice in one batch and again after it finished, is applied once", async () => {
    const { tenant, assetId } = await assetWithHistory();
    const jobId = await uploadCsv(tenant, assetId, batch(6, 120));
    const message: ScanQueueMessage = { job_id: jobId, tenant_id: tenant, asset_id: assetId };
    // The real delivery races these two.
    const raced = await deliver([message, message]);
    expect(raced.explicitAcks.sort()).toEqual(["m0", "m1"]);
    expect(await scanJob(tenant, assetId, jobId)).toMatchObject({ status: "SUCCEEDED" });
    const once = await counts(tenant, assetId, jobId);
    expect(once.alerts).toBeGreaterThan(0);
    expect(once.open).toBeGreaterThan(0);

    expect((await deliver([message])).explicitAcks).toEqual(["m0"]);
    expect(await counts(tenant, assetId, jobId)).toEqual(once);
  });

  it("an asset's Durable Object reset between scans keeps what it knew: the next job alerts once", async () => {
    const { tenant, assetId } = await assetWithHistory();
    await evictDurableObject(assetMonitor(env, tenant, assetId));
    const jobId = await uploadCsv(tenant, assetId, batch(6, 120));
    expect(await scanJob(tenant, assetId, jobId)).toMatchObject({ status: "SUCCEEDED" });
    const first = await counts(tenant, assetId, jobId);
    expect(first.alerts).toBeGreaterThan(0);
    await evictDurableObject(assetMonitor(env, tenant, assetId));
    expect((await deliver([{ job_id: jobId, tenant_id: tenant, asset_id: assetId }])).explicitAcks).toEqual(["m0"]);
    expect(await counts(tenant, assetId, jobId)).toEqual(first);
  });

  it("a D1 statement failing inside the apply writes nothing; the job is retried and then applied once", async () => {
    const { tenant, assetId } = await assetWithHistory();
    const trigger = `fault_${assetId}`;
    // A real failure of one statement of the apply batch: D1 aborts the insert of this asset's incidents.
    await env.DB.exec(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON incidents WHEN NEW.asset_id = ${assetId} BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
    );
    try {
      const jobId = await uploadCsv(tenant, assetId, batch(6, 120));
      const waiting = await scanJob(tenant, assetId, jobId, /^(QUEUED|FAILED|SUCCEEDED)$/);
      await vi.waitFor(
        async () => {
          const job = await scanJob(tenant, assetId, jobId, /.*/);
          expect(job.error ?? "").toMatch(/retrying after/);
        },
        { timeout: 30_000, interval: 25 },
      );
      expect(waiting.status).not.toBe("SUCCEEDED");
      // The batch is one transaction: none of its alerts or incidents landed.
      expect(await counts(tenant, assetId, jobId)).toMatchObject({ alerts: 0, open: 0 });
      const job = await scanJob(tenant, assetId, jobId, /.*/);
      expect(job.status).toBe("QUEUED");
      expect(job.error).not.toMatch(/injected|D1_|SQLITE/);

      await env.DB.exec(`DROP TRIGGER ${trigger}`);
      // The retry (here delivered at once instead of after its backoff) applies it, once.
      expect((await deliver([{ job_id: jobId, tenant_id: tenant, asset_id: assetId }])).explicitAcks).toEqual(["m0"]);
      expect(await scanJob(tenant, assetId, jobId)).toMatchObject({ status: "SUCCEEDED" });
      const after = await counts(tenant, assetId, jobId);
      expect(after.alerts).toBeGreaterThan(0);
      expect(after.open).toBeGreaterThan(0);
    } finally {
      await env.DB.exec(`DROP TRIGGER IF EXISTS ${trigger}`);
    }
  });

  it("a message naming another asset than its job's still runs the job on the job's asset", async () => {
    const { tenant, assetId } = await assetWithHistory();
    const jobId = await uploadCsv(tenant, assetId, batch(6, 120));
    // The claim reads the message's asset beside the job; a wrong or missing one is not used.
    const result = await deliver([{ job_id: jobId, tenant_id: tenant, asset_id: assetId + 100_000 }]);
    expect(result.explicitAcks).toEqual(["m0"]);
    expect(await scanJob(tenant, assetId, jobId)).toMatchObject({ status: "SUCCEEDED" });
    expect((await counts(tenant, assetId, jobId)).alerts).toBeGreaterThan(0);
  });
});
