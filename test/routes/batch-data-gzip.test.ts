import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { finishedJob } from "../scenario/support";
import { ADMIN_KEY, admin, call } from "../support/api";
import { csvAsset } from "../support/assets";

const CSV = "id,email,amount\n1,a@example.com,10\n2,b@example.com,20\n";

const fileAsset = (tenantOverrides: Record<string, unknown> = {}) => csvAsset(tenantOverrides);

/** The bytes gzip-compressed. */
async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A CSV of `bytes` bytes: a header, then the same short line over and over (it compresses ~1000:1). */
function repetitiveCsv(bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  const header = new TextEncoder().encode("a,b,c\n");
  out.set(header);
  const line = new TextEncoder().encode("0,0,0\n");
  for (let i = header.byteLength; i < bytes; i++) out[i] = line[(i - header.byteLength) % line.byteLength]!;
  return out;
}

/** POSTs a data upload with its Content-Length, as a client sends a file. */
function upload(path: string, body: Uint8Array, headers: Record<string, string>) {
  return SELF.fetch(`https://dq.test${path}`, {
    method: "POST",
    headers: { "X-SVC-Key": ADMIN_KEY, "Content-Length": String(body.byteLength), ...headers },
    body,
  });
}

const scans = (tenant: string, assetId: number) => `/api/backend/${tenant}/configuration/assets/${assetId}/scans`;

async function nothingStored(tenant: string, assetId: number) {
  expect((await env.UPLOADS.list({ prefix: `uploads/${tenant}/` })).objects).toEqual([]);
  expect((await call("GET", scans(tenant, assetId), { as: admin })).body).toEqual([]);
}

describe("gzip uploads: inflated as a stream, the limit counting inflated bytes", () => {
  it("stores a gzip CSV inflated, counts inflated bytes, and the scan profiles its rows", async () => {
    const { tenant, asset } = await fileAsset();
    const compressed = await gzip(new TextEncoder().encode(CSV));
    const res = await upload(`/v2/${tenant}/sources/${asset.id}/batch_data`, compressed, {
      "Content-Type": "text/csv",
      "Content-Encoding": "gzip",
    });
    expect(res.status).toBe(202);
    const { job_id } = (await res.json()) as { job_id: string };
    const row = await env.DB.prepare("select request, total_bytes from scan_jobs where id = ?")
      .bind(job_id)
      .first<{ request: string; total_bytes: number }>();
    const request = JSON.parse(row!.request);
    expect(request.upload).toMatchObject({ format: "csv", bytes: CSV.length });
    expect(row!.total_bytes).toBe(CSV.length);
    expect(await (await env.UPLOADS.get(request.upload.key))!.text()).toBe(CSV);
    const job = await finishedJob(tenant, asset.id, job_id);
    expect(job.progress.rows).toBe(2);
  });

  it("stores an upload larger than one part through a multipart upload, byte for byte", async () => {
    const { tenant, asset } = await fileAsset({ free_upload_limit: 64 * 1024 * 1024 });
    const csv = repetitiveCsv(20 * 1024 * 1024 + 123);
    const res = await upload(`/v2/${tenant}/sources/${asset.id}/batch_data`, await gzip(csv), {
      "Content-Type": "text/csv",
      "Content-Encoding": "gzip",
    });
    expect(res.status).toBe(202);
    const { objects } = await env.UPLOADS.list({ prefix: `uploads/${tenant}/` });
    expect(objects.map((o) => o.size)).toEqual([csv.byteLength]);
    const stored = new Uint8Array(await (await env.UPLOADS.get(objects[0]!.key))!.arrayBuffer());
    expect(stored.byteLength).toBe(csv.byteLength);
    expect(stored.every((byte, i) => byte === csv[i])).toBe(true);
  });

  // Compressing 41.6 MB twice takes seconds on a busy 2-core machine: a longer timeout, not a timing check.
  it("refuses a gzip bomb (tens of kB sent, 41.6 MB inflated) with 413 once past the limit, storing nothing", {
    timeout: 60_000,
  }, async () => {
    // 1 MB: refused before the first part; 12 MiB: after one part went up (the multipart upload is aborted).
    for (const limit of [1_000_000, 12 * 1024 * 1024]) {
      const { tenant, asset } = await fileAsset({ free_upload_limit: limit });
      const bomb = await gzip(repetitiveCsv(41_600_000));
      expect(bomb.byteLength).toBeLessThan(limit);
      const res = await upload(`/v2/${tenant}/sources/${asset.id}/batch_data`, bomb, {
        "Content-Type": "text/csv",
        "Content-Encoding": "gzip",
      });
      expect(res.status).toBe(413);
      const problem = (await res.json()) as { code: string; detail: string };
      expect(problem.code).toBe("payload_too_large");
      expect(problem.detail).toContain(`inflates to more than ${limit} bytes`);
      await nothingStored(tenant, asset.id);
    }
  });

  it("refuses other encodings with 415 and data that is not gzip with 400, storing nothing", async () => {
    const { tenant, asset } = await fileAsset();
    const path = `/api/data/${tenant}/sources/${asset.id}/batch_data`;
    const csv = new TextEncoder().encode(CSV);
    for (const encoding of ["br", "deflate", "zstd", "gzip, gzip"]) {
      const res = await upload(path, csv, { "Content-Type": "text/csv", "Content-Encoding": encoding });
      expect(res.status, encoding).toBe(415);
      expect(((await res.json()) as { code: string }).code).toBe("unsupported_media_type");
    }
    const notGzip = await upload(path, csv, { "Content-Type": "text/csv", "Content-Encoding": "gzip" });
    expect(notGzip.status).toBe(400);
    expect(((await notGzip.json()) as { detail: string }).detail).toMatch(/not valid gzip/);
    const compressed = await gzip(csv);
    const truncated = await upload(path, compressed.subarray(0, compressed.byteLength - 12), {
      "Content-Type": "text/csv",
      "Content-Encoding": "gzip",
    });
    expect(truncated.status).toBe(400);
    await nothingStored(tenant, asset.id);
  });
});
