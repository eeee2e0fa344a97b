/**
 * The runtime's own failure text never reaches a user (issue 42, point 4): a tenant storage, a
 * scan's source, a database and a notification receiver that cannot be reached are reported in
 * our words — the runtime's "internal error; reference = …" (what workerd says for a host whose
 * name does not resolve), "Network connection lost.", "proxy request failed…" stay in the logs.
 */

import { SELF } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { networkFailure } from "../../src/lib/network-errors";
import { createJdbcRunner } from "../../src/scan/sql";
import { DATABASES } from "../scan/sql/support/databases";
import { ADMIN_KEY, admin, call } from "../support/api";
import { createAsset, csvAsset } from "../support/assets";
import { createConnection } from "../support/connections";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";
import { unique } from "../support/unique";

/** Text of the runtime's, never ours to show. */
const RUNTIME_TEXT = /internal error|reference =|Network connection lost|proxy request failed|jsg|kj\//i;

/** A host whose name never resolves (RFC 6761): workerd's fetch answers "internal error; reference = …". */
const NOWHERE = "acct.blob.core.windows.net.invalid";

describe("networkFailure", () => {
  it("says what the runtime's failures mean in our words, never their text", async () => {
    // What this runtime really throws, read from a fetch and a socket that fail.
    const thrown = async (fail: () => Promise<unknown>) => {
      try {
        await fail();
      } catch (err) {
        return err;
      }
      throw new Error("expected a failure");
    };
    const dns = await thrown(() => fetch(`https://${NOWHERE}/x`));
    expect(String(dns)).toMatch(/internal error; reference = /);
    expect(networkFailure(dns)).toBe("the host could not be reached");
    const refused = await thrown(() => fetch("http://127.0.0.1:1/"));
    expect(networkFailure(refused)).toBe("the connection was lost");
    expect(networkFailure(new DOMException("The operation timed out.", "TimeoutError"))).toBe("no answer in time");
    expect(networkFailure(new Error("proxy request failed, cannot connect to the specified address"))).toBe(
      "the connection was refused",
    );
    for (const err of [dns, refused]) expect(networkFailure(err)).not.toMatch(RUNTIME_TEXT);
  });
});

describe("an unreachable host, as users see it", () => {
  it("a tenant storage: the upload's 422 names the host, in our words", async () => {
    const storage = {
      type: "AZURE",
      payload: {
        bucket: "uploads",
        endpoint: `https://${NOWHERE}`,
        security: { storage_account: "acct", sas_key: "sv=2024-01-01&sig=abc" },
      },
    };
    const { tenant, asset } = await csvAsset({ storage });
    const body = new TextEncoder().encode("id\n1\n");
    const res = await SELF.fetch(`https://dq.test/v2/${tenant}/sources/${asset.id}/batch_data`, {
      method: "POST",
      headers: { "X-SVC-Key": ADMIN_KEY, "Content-Type": "text/csv", "Content-Length": String(body.byteLength) },
      body,
    });
    expect(res.status).toBe(422);
    const problem = (await res.json()) as { detail: string };
    expect(problem.detail).toBe(`unreachable: cannot reach ${NOWHERE}: the host could not be reached`);
  });

  it("a scan's source: the job's error names the host, in our words", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const connection = await createConnection(tenant, {
      projectId,
      type: "S3",
      payload: { bucket: "lake", endpoint: `https://${NOWHERE}` },
    });
    const asset = await createAsset(tenant, projectId, connection.id, {
      type: "S3",
      payload: { path: "orders.csv", format: "csv" },
    });
    const scan = await call("POST", `/api/backend/${tenant}/configuration/assets/${asset.id}/scans`, { as: admin });
    expect(scan.status).toBe(202);
    // Unreachable is retried: the reason shows while the job waits for its next delivery.
    const job = await vi.waitFor(
      async () => {
        const res = await call(
          "GET",
          `/api/backend/${tenant}/configuration/assets/${asset.id}/scans/${scan.body.job_id}`,
          {
            as: admin,
          },
        );
        expect(res.body.error).toBeTruthy();
        return res.body as { error: string };
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(job.error).toBe(`retrying after: cannot reach ${NOWHERE}: the host could not be reached`);
  });

  it("a database: a refused connection is said in our words", async () => {
    const closed = {
      ...DATABASES.postgres.payload,
      connection_properties: { ...DATABASES.postgres.payload.connection_properties, port: "1" },
    };
    await expect(
      createJdbcRunner(closed, { ...DATABASES.postgres.credential }).then((r) => r.query("SELECT 1")),
    ).rejects.toMatchObject({ message: "PostgreSQL at 127.0.0.1:1 is unreachable: the connection was refused" });
  });

  it("a notification receiver: the delivery's error says so in our words", async () => {
    const tenant = await createTenant();
    const channel = await call("POST", `/api/backend/${tenant}/configuration/notifications/channels`, {
      as: admin,
      body: { name: unique("ch"), type: "SLACK", url: `https://${NOWHERE}/services/T0/B0/secret` },
    });
    expect(channel.status).toBe(201);
    const sent = await call(
      "POST",
      `/api/backend/${tenant}/configuration/notifications/channels/${channel.body.id}/test`,
      { as: admin },
    );
    expect(sent.body).toMatchObject({ delivered: false, error: "network error: the host could not be reached" });
  });
});
