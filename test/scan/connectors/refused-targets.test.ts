/**
 * Where object stores may send a tenant's credentials (issue 12, finding 2): deployed
 * (ALLOW_PRIVATE_TARGETS unset), an endpoint or token URI on a loopback, private, link-local or
 * metadata address is refused before anything is sent, as an error the user can act on (422
 * through the API), never retried and never a 5xx.
 */

import { describe, expect, inject, it } from "vitest";
import { createObjectStore } from "../../../src/connections";
import type { OutboundPolicy } from "../../../src/lib/outbound";
import { AzureBlobStore } from "../../../src/scan/connectors/azure";
import { GcsStore } from "../../../src/scan/connectors/gcs";
import { S3Store } from "../../../src/scan/connectors/s3";
import { admin, call } from "../../support/api";
import { createAsset } from "../../support/assets";
import { createConnection } from "../../support/connections";
import { asDeployed } from "../../support/outbound";
import { createProject } from "../../support/projects";
import { createTenant } from "../../support/tenants";
import { unique } from "../../support/unique";
import { connectorError } from "./contract";

const DEPLOYED: OutboundPolicy = { allowPrivateTargets: false };
const trap = inject("httpTrap");
const stores = inject("objectStores");
const receivedIn = async (box: string) =>
  (await (await fetch(`${trap.url}/__received/${box}`)).json()) as { headers: Record<string, string> }[];

describe("object stores with a deployed policy", () => {
  it("S3: an endpoint on loopback is refused before the signed request leaves", async () => {
    const box = unique("s3");
    const store = new S3Store({
      bucket: "b",
      endpoint: `${trap.url}/${box}`,
      accessKeyId: "AKIAEXAMPLE0001",
      secretAccessKey: "aws-secret-s3cr3t",
      policy: DEPLOYED,
    });
    const err = await connectorError(store.list("data/*"));
    expect(err.kind).toBe("invalid");
    expect(err.transient).toBe(false);
    expect(err.message).toMatch(/^the endpoint http:\/\/127\.0\.0\.1:\d+ is refused: it is a loopback address/);
    expect(await receivedIn(box)).toEqual([]);
  });

  it.each([
    ["S3 at the metadata address", "https://169.254.169.254"],
    ["S3 at an IPv4-mapped loopback", "https://[::ffff:127.0.0.1]:9000"],
    ["S3 at a private address", "https://10.0.0.12:9000"],
    ["S3 at metadata.google.internal", "https://metadata.google.internal"],
  ])("%s is refused", async (_, endpoint) => {
    const store = new S3Store({ bucket: "b", endpoint, accessKeyId: "a", secretAccessKey: "s", policy: DEPLOYED });
    expect((await connectorError(store.stream("k"))).kind).toBe("invalid");
  });

  it("Azure: an endpoint on a link-local address is refused, the SAS token never sent", async () => {
    const store = new AzureBlobStore({
      account: "acct",
      container: "c",
      sasToken: "sv=2024-01-01&sig=azure-s3cr3t",
      endpoint: "https://[fe80::1]:10000/acct",
      policy: DEPLOYED,
    });
    const err = await connectorError(store.list("*"));
    expect(err.kind).toBe("invalid");
    expect(err.message).not.toContain("azure-s3cr3t");
  });

  it("GCS: a token URI on loopback is refused, so the signed assertion is never sent there", async () => {
    const box = unique("gcs");
    const store = new GcsStore({
      bucket: stores.gcs.bucket,
      endpoint: "https://storage.googleapis.com",
      serviceAccount: { ...stores.gcs.reader, token_uri: `${trap.url}/${box}/token` },
      policy: DEPLOYED,
    });
    const err = await connectorError(store.list("data/*"));
    expect(err.kind).toBe("invalid");
    expect(err.message).toMatch(/is refused/);
    expect(await receivedIn(box)).toEqual([]);
  });

  it("createObjectStore takes the policy from the env it is given", async () => {
    const box = unique("env");
    const connection = { type: "S3" as const, payload: { bucket: "b", endpoint: `${trap.url}/${box}` } };
    const credential = { type: "AWS" as const, payload: { access_key: "AKIAEXAMPLE0001", secret_key: "s3cr3t-key" } };
    const refused = await connectorError(createObjectStore(connection, credential, {}).list("*"));
    expect(refused.kind).toBe("invalid");
    expect(await receivedIn(box)).toEqual([]);
    const allowed = await connectorError(
      createObjectStore(connection, credential, { ALLOW_PRIVATE_TARGETS: "true" }).list("*"),
    );
    expect(allowed.kind).toBe("auth");
    expect(await receivedIn(box)).toHaveLength(1);
  });
});

describe("through the API, deployed", () => {
  it("a schema load through an S3 connection pointing at 127.0.0.1 is a 422 naming the refused endpoint", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const box = unique("route");
    const conn = await createConnection(tenant, {
      projectId,
      type: "S3",
      payload: { bucket: "landing", endpoint: `${trap.url}/${box}` },
      credential: { type: "AWS", payload: { access_key: "AKIAEXAMPLE0001", secret_key: "aws-secret-key-s3cr3t" } },
    });
    const asset = await createAsset(tenant, projectId, conn.id, {
      type: "S3",
      payload: { path: "exports/*.csv", format: "csv" },
    });
    const path = `/api/data/${tenant}/assets/${asset.id}/schema`;

    const refused = await asDeployed(() => call("POST", path, { as: admin }));
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe("source_error");
    expect(refused.body.detail).toMatch(
      /^invalid: the endpoint http:\/\/127\.0\.0\.1:\d+ is refused: it is a loopback address .*ALLOW_PRIVATE_TARGETS/,
    );
    expect(JSON.stringify(refused.body)).not.toContain("aws-secret-key-s3cr3t");
    expect(await receivedIn(box)).toEqual([]);

    // In local development the same connection does reach the address: the refusal is the policy's.
    const allowed = await call("POST", path, { as: admin });
    expect(allowed.status).toBe(422);
    const received = await receivedIn(box);
    expect(received.length).toBeGreaterThan(0);
    expect(received[0]!.headers.authorization).toContain("AKIAEXAMPLE0001");
  });
});
