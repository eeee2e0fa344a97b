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

/** Signs in with the seeded tenant's key. */
async function signIn(page: Page, world: { tenant: string; apiKey: string }) {
  await page.goto(`${base}/app/`);
  await page.getByLabel("Tenant").fill(world.tenant);
  await page.getByLabel("API key").fill(world.apiKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("link", { name: "Assets", exact: true }).waitFor();
}

/** A label's text and its box in the page. */
interface LabelBox {
  text: string;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/**
 * The axis labels of a chart, measured in the page: at least two, each inside its figure, each
 * in a form its axis uses (no ":14.600"), and no two overlapping or closer than 3 px.
 */
async function expectLegibleAxis(page: Page, figure: string): Promise<string[]> {
  const chart = page.locator(figure);
  await chart.locator(".axis span").first().waitFor();
  const box = (await chart.boundingBox())!;
  const labels = await chart.locator(".axis span").evaluateAll((els) =>
    els.map((e) => {
      const r = e.getBoundingClientRect();
      return { text: e.textContent ?? "", left: r.left, right: r.right, top: r.top, bottom: r.bottom };
    }),
  );
  expect(labels.length, figure).toBeGreaterThanOrEqual(2);
  const apart = (a: LabelBox, b: LabelBox) =>
    a.right + 3 <= b.left || b.right + 3 <= a.left || a.bottom <= b.top || b.bottom <= a.top;
  labels.forEach((a, i) => {
    expect(a.text).toMatch(/^(\d{4}(-\d{2}(-\d{2})?)?|\d{2}:\d{2}(:\d{2})?(\n\d{4}-\d{2}-\d{2})?)$/);
    expect(a.left).toBeGreaterThanOrEqual(box.x - 0.5);
    expect(a.right).toBeLessThanOrEqual(box.x + box.width + 0.5);
    for (const b of labels.slice(i + 1)) expect(apart(a, b), `${JSON.stringify(a)} ${JSON.stringify(b)}`).toBe(true);
  });
  return labels.map((l) => l.text);
}

/** ISO times given new values in the same order: `start` plus `step` ms per rank. */
function respread(times: string[], start: number, step: number): string[] {
  const order = times.map((t, i) => [Date.parse(t), i] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out = [...times];
  order.forEach(([, i], rank) => {
    out[i] = new Date(start + rank * step).toISOString();
  });
  return out;
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

  it("keeps chart axes legible from seconds to years, at 1280 px and at a phone's width", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // The service's own answers, their times moved: scans 300 ms apart (as the ":14.600" report), or
    // 47 days apart (a year of history), or as they are (seconds apart: the seed's uploads).
    let spread: "as-is" | "seconds" | "months" = "as-is";
    const respace = (times: string[]) =>
      spread === "seconds"
        ? respread(times, Date.UTC(2026, 10, 27, 14, 3, 14, 200), 300)
        : spread === "months"
          ? respread(times, Date.UTC(2025, 8, 3, 10, 0), 47 * 86_400_000)
          : times;
    await page.route(/\/metrics\/history\?/, async (route) => {
      const res = await route.fetch();
      const body = (await res.json()) as { points: Array<{ time: string }> };
      const times = respace(body.points.map((p) => p.time));
      await route.fulfill({
        response: res,
        json: { ...body, points: body.points.map((p, i) => ({ ...p, time: times[i] })) },
      });
    });
    await page.route(/\/dq_score\/history\?/, async (route) => {
      const res = await route.fetch();
      const scores = (await res.json()) as Array<{ scored_at: string }>;
      const times = respace(scores.map((s) => s.scored_at));
      await route.fulfill({ response: res, json: scores.map((s, i) => ({ ...s, scored_at: times[i] })) });
    });
    await signIn(page, world);
    await page.getByRole("link", { name: "orders" }).click();
    const charts = ['figure[data-metric="row_count"]', 'figure[data-chart="dq-score"]'];
    const seen: Record<string, string[]> = {};
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 844 });
      for (const mode of ["as-is", "seconds", "months"] as const) {
        spread = mode;
        await page.reload();
        for (const chart of charts) seen[`${width} ${mode} ${chart}`] = await expectLegibleAxis(page, chart);
        await page.screenshot({ path: join(SHOTS, `axes-${mode}-${width}.png`), fullPage: true });
      }
      // Incidents per day: the default 30 days, and 400 days.
      await page.getByRole("link", { name: "Incidents", exact: true }).click();
      const days = 'figure[data-chart="incidents-per-day"]';
      seen[`${width} 30 days`] = await expectLegibleAxis(page, days);
      const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
      await page.locator('input[name="from_time"]').fill(day(-399));
      await page.locator('input[name="to_time"]').fill(day(1));
      await page.getByRole("button", { name: "Apply filters" }).click();
      await page.getByText(/in 400 days/).waitFor();
      seen[`${width} 400 days`] = await expectLegibleAxis(page, days);
      expect(seen[`${width} 400 days`]!.at(-1)).toBe(day(0));
      await page.screenshot({ path: join(SHOTS, `incidents-400-days-${width}.png`), fullPage: true });
      await page.getByRole("link", { name: "Assets", exact: true }).click();
      await page.getByRole("link", { name: "orders" }).click();
    }
    // Scans 300 ms apart: whole seconds, the day named on the first label only; a year: months or years.
    for (const [key, labels] of Object.entries(seen)) {
      if (key.includes(" seconds ")) {
        expect(labels[0], key).toMatch(/^14:03:\d{2}\n2026-11-27$/);
        for (const l of labels.slice(1)) expect(l, key).toMatch(/^14:03:\d{2}$/);
      }
      if (key.includes(" months ")) for (const l of labels) expect(l, key).toMatch(/^\d{4}(-\d{2})?$/);
    }
    // A chart's request may still be in a route handler when the test ends: let it go quietly.
    await page.unrouteAll({ behavior: "ignoreErrors" });
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
