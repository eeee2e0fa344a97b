/**
 * The dashboard (/app) in Debian's Chromium, driven by playwright-core, against the service under
 * `wrangler dev`. The data is seeded through the public API: a CSV asset with nine uploaded
 * batches (eight steady, the ninth a row drop with missing e-mails), so the asset has a scan
 * history and incidents. Screenshots go to test-node/screenshots/ (gitignored; CI keeps the folder).
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { createDqClient } from "../clients/ts";
import { s3Connection } from "./fixtures";

const { base, adminKey } = inject("worker");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS = join(import.meta.dirname, "screenshots");

/** 200 rows (id, email, amount), or `rows` of them with every other e-mail missing. */
function batch(seq: number, rows = 200, missing = false): string {
  const lines = ["id,email,amount"];
  for (let i = 0; i < rows; i++) {
    const id = seq * 1000 + i;
    lines.push(`${id},${missing && i % 2 === 0 ? "" : `u${id}@example.com`},${(i % 50) + 10}`);
  }
  return `${lines.join("\n")}\n`;
}

/** A tenant with a key, a project and a CSV asset whose ninth scan breaks out of its band. */
async function seed() {
  const admin = createDqClient({ baseUrl: base, apiKey: adminKey });
  const tenant = `ui-${randomUUID().slice(0, 8)}`;
  await admin.PUT("/backend/private/configuration/tenants/{tenantId}", {
    params: { path: { tenantId: tenant } },
    body: { name: "Dashboard test" },
  });
  const key = await admin.POST("/auth/{tenant}/apiKeys", { params: { path: { tenant } }, body: { name: "dashboard" } });
  const apiKey = key.data!.key;
  const dq = createDqClient({ baseUrl: base, apiKey });
  const project = await dq.POST("/api/backend/{tenant}/configuration/projects", {
    params: { path: { tenant } },
    body: { name: "shop" },
  });
  const projectId = project.data!.id;
  const asset = await dq.POST("/api/backend/{tenant}/configuration/projects/{projectId}/assets", {
    params: { path: { tenant, projectId } },
    body: {
      name: "orders",
      type: "S3",
      connection_id: await s3Connection(dq, tenant, projectId),
      payload: { path: "orders/*.csv", format: "csv" },
    },
  });
  const assetId = asset.data!.id;
  for (let seq = 1; seq <= 9; seq++) {
    const res = await fetch(`${base}/v2/${tenant}/sources/${assetId}/batch_data`, {
      method: "POST",
      headers: { "X-SVC-Key": apiKey, "Content-Type": "text/csv" },
      body: seq < 9 ? batch(seq) : batch(seq, 60, true),
    });
    expect(res.status).toBe(202);
    const { job_id } = (await res.json()) as { job_id: string };
    await vi.waitFor(
      async () => {
        const job = await dq.GET("/api/backend/{tenant}/configuration/assets/{assetId}/scans/{job_id}", {
          params: { path: { tenant, assetId, job_id } },
        });
        expect(job.data?.status).toBe("SUCCEEDED");
      },
      { timeout: 60_000, interval: 100 },
    );
  }
  return { tenant, apiKey, assetId };
}

/** The figure of the incident summary with this label, as a number. */
async function figure(page: Page, label: string): Promise<number> {
  return Number(await page.locator(`[data-figure="${label}"] .fig-value`).textContent());
}

describe("the dashboard in Chromium", () => {
  let browser: Browser;
  let world: Awaited<ReturnType<typeof seed>>;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    world = await seed();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("signs in with a key, shows an asset's metric with its band, closes an incident and updates the summary", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${base}/app`);

    // Keyboard: the sign-in form is reached with Tab, in order.
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.getAttribute('name')")).toBe("tenant");
    await page.keyboard.type(world.tenant);
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.getAttribute('name')")).toBe("api_key");
    await page.getByLabel("API key").fill(world.apiKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Assets", exact: true }).waitFor();
    const stored = await page.evaluate<string>("JSON.stringify(sessionStorage)");
    expect(stored).toContain("token");
    expect(stored).not.toContain(world.apiKey);

    // Assets → the asset: its row count with an expected band and the point that broke out of it.
    await page.getByRole("link", { name: "orders" }).click();
    const rowCount = page.locator('figure[data-metric="row_count"]');
    await rowCount.locator("canvas").first().waitFor();
    expect(Number(await rowCount.getAttribute("data-band-points"))).toBeGreaterThanOrEqual(2);
    expect(Number(await rowCount.getAttribute("data-alert-points"))).toBe(1);
    await page.getByRole("heading", { name: "Scans" }).waitFor();
    await page.screenshot({ path: join(SHOTS, "asset-1280.png"), fullPage: true });
    // Settings of the asset: a policy override, saved through the API and read back.
    expect(await page.getByLabel("Row count anomaly priority").inputValue()).toBe("HIGH");
    await page.getByLabel("Freshness priority").selectOption("LOW");
    await page.getByRole("button", { name: "Save policies" }).click();
    await page.getByText("Policies saved.").waitFor();
    const policies = await createDqClient({ baseUrl: base, apiKey: world.apiKey }).GET(
      "/api/backend/{tenant}/configuration/assets/{assetId}/policies",
      { params: { path: { tenant: world.tenant, assetId: world.assetId } } },
    );
    const priority = (id: string) => policies.data?.policies.find((p) => p.id === id)?.priority;
    expect(priority("freshness")).toBe("LOW");
    expect(priority("row_count_anomaly")).toBe("HIGH");

    // Incidents: the summary, then the row count incident, closed as expected.
    await page.getByRole("link", { name: "Incidents", exact: true }).click();
    await page.locator('[data-figure="Open"]').waitFor();
    const openBefore = await figure(page, "Open");
    expect(openBefore).toBeGreaterThanOrEqual(1);
    await page.screenshot({ path: join(SHOTS, "incidents-1280.png"), fullPage: true });
    // A filter: only the HIGH incidents.
    await page.getByRole("group", { name: "Severities" }).getByLabel("HIGH").check();
    await page.getByRole("button", { name: "Apply filters" }).click();
    await vi.waitFor(async () => {
      const severities = await page
        .locator('section[aria-label="Incident list"] tbody tr td:nth-child(5)')
        .allTextContents();
      expect(severities.length).toBeGreaterThan(0);
      expect(new Set(severities)).toEqual(new Set(["HIGH"]));
    });
    await page.getByRole("link", { name: /Row count anomaly/ }).click();
    await page.getByRole("heading", { name: "History" }).waitFor();
    await page.locator("figure[data-metric] canvas").first().waitFor();
    await page.getByLabel("Reason").selectOption("EXPECTED");
    await page.getByLabel("Note").fill("a smaller batch was planned");
    await page.getByRole("button", { name: "Close incident" }).click();
    await page.getByRole("button", { name: "Reopen incident" }).waitFor();
    await page.getByText("“a smaller batch was planned”").waitFor();
    await page.screenshot({ path: join(SHOTS, "incident-closed-1280.png"), fullPage: true });

    await page.getByRole("link", { name: "Incidents", exact: true }).click();
    await page.locator('[data-figure="Open"]').waitFor();
    await vi.waitFor(async () => expect(await figure(page, "Open")).toBe(openBefore - 1), { timeout: 10_000 });
    expect(await figure(page, "Closed")).toBeGreaterThanOrEqual(1);

    await page.getByRole("link", { name: "Settings", exact: true }).click();
    await page.getByRole("heading", { name: "Notification channels" }).waitFor();
    await page.getByText("No channels yet").waitFor();

    // A phone's width: the incidents, narrow.
    await page.getByRole("link", { name: "Incidents", exact: true }).click();
    await page.locator('[data-figure="Open"]').waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SHOTS, "incidents-390.png"), fullPage: true });
    await page.getByRole("link", { name: "Assets", exact: true }).click();
    await page.getByRole("link", { name: "orders" }).click();
    await page.locator('figure[data-metric="row_count"] canvas').first().waitFor();
    await page.screenshot({ path: join(SHOTS, "asset-390.png"), fullPage: true });

    // Signing out forgets the token.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await page.close();
  }, 120_000);

  it("shows the problem's detail when the API refuses", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${base}/app/`);
    await page.getByLabel("Tenant").fill(world.tenant);
    await page.getByLabel("API key").fill("dqm_not_a_key");
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    const problem = await (
      await fetch(`${base}/auth/token`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ api_key: "dqm_not_a_key" }),
      })
    ).json();
    expect(await alert.textContent()).toBe((problem as { detail: string }).detail);
    await page.screenshot({ path: join(SHOTS, "signin-error-1280.png") });
    await page.close();
  }, 60_000);
});
