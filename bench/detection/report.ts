/**
 * bench/detection: the printed report — (1) recall per corruption type × fraction, ours and the
 * peer's side by side, with the policies / rules that fired; (2) alerts on clean data (controls,
 * and the training scans); (3) the real-history figures; (4) timings and service trouble.
 */
import type { Violation } from "./deequ";
import type { HistoryBatch } from "./history";
import type { ScanRecord, ServiceTrouble } from "./service";
import { repeatsOf, type TriageClose } from "./triage";

/** A table's history twice: untouched, and triaged (its scans and the closes the user made). */
export interface TriageRun {
  table: string;
  untriaged: readonly ScanRecord[];
  scans: readonly ScanRecord[];
  closes: readonly TriageClose[];
}

export interface ScenarioResult {
  id: string;
  table: string;
  type: string;
  target: string;
  fraction: number;
  window: { index: number; training: string[]; test: string };
  assetId: number;
  testRows: number;
  testJob: string;
  testStatus: string;
  /** All 9 scans SUCCEEDED; a scenario that is not is left out of the recall figures. */
  measured: boolean;
  testError?: string;
  /** Uploads of the test batch whose job the queue never delivered. */
  testLostJobs?: string[];
  ours: {
    detected: boolean;
    onTarget: boolean;
    /** type:attribute of its alerts that the window's clean control did not raise. */
    notOnControl: string[];
    alerts: Array<{ type: string; attribute: string | null; priority: string; description: string }>;
  };
  /** notOnControl: rule:column of the failed constraints that did not fail on the window's control. */
  peer: { detected: boolean; onTarget: boolean; notOnControl: string[]; violations: Violation[] };
  trainingScans: Array<{
    batch: string;
    job: string;
    status: string;
    error?: string;
    lostJobs?: string[];
    alerts: string[];
  }>;
}

interface Meta {
  machine: string;
  scans: number;
  tables: Array<{ name: string; batches: number; windows: Array<{ index: number; training: string; test: string }> }>;
  fractions: readonly number[];
  concurrency: number;
  reps: number;
  quick: boolean;
}

const pct = (f: number) => `${Math.round(f * 100)}%`;
const ratio = (k: number, n: number) => (n === 0 ? "-" : `${k}/${n}`);
const percent = (k: number, n: number) => (n === 0 ? "-" : `${((100 * k) / n).toFixed(0)}%`);

/** Left-aligned first column, right-aligned others, two spaces apart. */
function table(rows: string[][], leftColumns = 1): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) =>
    r
      .map((cell, i) => (i < leftColumns ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
}

/** "a×3, b×1", most frequent first. */
function tally(items: string[], limit = 6): string {
  const counts = new Map<string, number>();
  for (const i of items) counts.set(i, (counts.get(i) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const shown = sorted.slice(0, limit).map(([k, n]) => `${k}×${n}`);
  return shown.join(", ") + (sorted.length > limit ? `, … (${sorted.length - limit} more)` : "") || "-";
}

function recallSection(all: ScenarioResult[], fractions: readonly number[], label: string): string[] {
  const results = all.filter((r) => r.measured);
  const perCell = (n: number) => String(Math.round(n / Math.max(1, fractions.length)));
  const rows = [["type", "n", ...fractions.flatMap((f) => [`${pct(f)} ours`, "peer"])]];
  for (const type of new Set(results.map((r) => r.type))) {
    const of = results.filter((r) => r.type === type);
    rows.push([
      type,
      perCell(of.length),
      ...fractions.flatMap((f) => {
        const cell = of.filter((r) => r.fraction === f);
        return [
          ratio(cell.filter((r) => r.ours.detected).length, cell.length),
          ratio(cell.filter((r) => r.peer.detected).length, cell.length),
        ];
      }),
    ]);
  }
  type Verdict = { detected: boolean; onTarget: boolean; notOnControl: string[] };
  const overall = (name: string, pick: (side: Verdict) => boolean) => [
    name,
    perCell(results.length),
    ...fractions.flatMap((f) => {
      const cell = results.filter((r) => r.fraction === f);
      return [
        percent(cell.filter((r) => pick(r.ours)).length, cell.length),
        percent(cell.filter((r) => pick(r.peer)).length, cell.length),
      ];
    }),
  ];
  rows.push(
    overall("recall", (s) => s.detected),
    overall("  beyond the control", (s) => s.notOnControl.length > 0),
    overall("  on the column hit", (s) => s.onTarget),
  );
  const unmeasured = all.filter((r) => !r.measured);
  return [
    `${label}: ${results.length} scenarios; cells: detected/n (n = targets × reps), ours then peer`,
    ...table(rows, 1),
    ...(unmeasured.length
      ? [
          `  left out: ${unmeasured.length} scenarios whose scans did not all succeed ` +
            `(${tally(unmeasured.map((u) => `${u.type}:${u.testStatus}`))})`,
        ]
      : []),
  ];
}

function firedSection(results: ScenarioResult[]): string[] {
  const rows = [["type", "ours: policies", "peer: rules"]];
  const kinds = (keys: string[]) => [...new Set(keys.map((k) => k.split(":")[0]!))];
  for (const type of new Set(results.map((r) => r.type))) {
    const of = results.filter((r) => r.type === type);
    rows.push([
      type,
      tally(
        of.flatMap((r) => kinds(r.ours.notOnControl)),
        4,
      ),
      tally(
        of.flatMap((r) => kinds(r.peer.notOnControl)),
        3,
      ),
    ]);
  }
  return ["what fired beyond the control (number of scenarios in which each policy / rule did):", ...table(rows, 3)];
}

function controlsSection(controls: ScenarioResult[], all: ScenarioResult[]): string[] {
  const rows = [["table", "window", "training", "test batch", "ours: alerts", "peer: failed constraints"]];
  for (const c of controls) {
    rows.push([
      c.table,
      `w${c.window.index}`,
      `${c.window.training[0]} … ${c.window.training.at(-1)}`,
      c.window.test,
      c.measured ? String(c.ours.alerts.length) : `not measured (${c.testStatus})`,
      String(c.peer.violations.length),
    ]);
  }
  const lines = ["(2) alerts on clean data", "controls (the clean 9th batch after the same 8 training batches):"];
  lines.push(...table(rows, 4).map((l) => `  ${l}`));
  for (const c of controls) {
    const ours = c.ours.alerts.map((a) => `${a.type}:${a.attribute ?? ""}`);
    const peer = c.peer.violations.map((v) => `${v.rule}:${v.column}`);
    if (ours.length) lines.push(`    ${c.table} w${c.window.index} ours: ${ours.join(", ")}`);
    if (peer.length) lines.push(`    ${c.table} w${c.window.index} peer: ${peer.join(", ")}`);
  }
  const totalOurs = controls.reduce((s, c) => s + c.ours.alerts.length, 0);
  const totalPeer = controls.reduce((s, c) => s + c.peer.violations.length, 0);
  lines.push(
    `  controls with ≥1 alert: ours ${controls.filter((c) => c.ours.detected).length}/${controls.length} ` +
      `(${totalOurs} alerts), peer ${controls.filter((c) => c.peer.detected).length}/${controls.length} (${totalPeer} failed constraints)`,
  );
  for (const name of new Set(all.map((r) => r.table))) {
    const scans = all.filter((r) => r.table === name).flatMap((r) => r.trainingScans.slice(1));
    const noisy = scans.filter((s) => s.alerts.length > 0);
    lines.push(
      `  ${name}, training scans 2–8 of every asset (clean; ours only): ${noisy.length}/${scans.length} scans with ≥1 alert, ` +
        `${scans.reduce((s, x) => s + x.alerts.length, 0)} alerts: ${tally(
          noisy.flatMap((s) => s.alerts),
          4,
        )}`,
    );
  }
  return lines;
}

export function historySection(history: Array<{ table: string; batches: HistoryBatch[] }>): string[] {
  const lines = ["(3) real history: one asset per table gets every batch in order (clean real data)"];
  const rows = [
    [
      "table",
      "batches",
      "alerts",
      "new",
      "repeated",
      "unmatched",
      "per batch",
      "batches ≥1",
      "after 8th: alerts",
      "per batch",
      "confirmed",
      "closed",
    ],
  ];
  for (const h of history) {
    const alerts = h.batches.flatMap((b) => b.alerts);
    const later = h.batches.slice(8);
    const laterAlerts = later.reduce((s, b) => s + b.alerts.length, 0);
    const count = (kind: string) => String(alerts.filter((a) => a.kind === kind).length);
    rows.push([
      h.table,
      String(h.batches.length),
      String(alerts.length),
      count("new"),
      count("repeated"),
      count("unmatched"),
      (alerts.length / Math.max(1, h.batches.length)).toFixed(2),
      String(h.batches.filter((b) => b.alerts.length > 0).length),
      String(laterAlerts),
      (laterAlerts / Math.max(1, later.length)).toFixed(2),
      String(h.batches.reduce((s, b) => s + b.confirmed, 0)),
      String(h.batches.reduce((s, b) => s + b.closed, 0)),
    ]);
  }
  lines.push(...table(rows, 1).map((l) => `  ${l}`));
  for (const h of history) {
    const failed = h.batches.filter((b) => b.status !== "SUCCEEDED");
    if (failed.length) lines.push(`  ${h.table}: ${failed.length} scans did not succeed`);
    lines.push(
      `  ${h.table} alerts by policy: ${tally(
        h.batches.flatMap((b) => b.alerts.map((a) => a.type)),
        10,
      )}`,
    );
    const worst = h.batches
      .map((b, i) => ({ b, i }))
      .filter(({ b }) => b.alerts.length > 0)
      .sort((x, y) => y.b.alerts.length - x.b.alerts.length || x.i - y.i)
      .slice(0, 5);
    lines.push(`  ${h.table} worst batches:`);
    for (const { b, i } of worst) {
      const kinds = `${b.alerts.filter((a) => a.kind === "new").length} new`;
      lines.push(
        `    #${i + 1} ${b.batch}: ${b.alerts.length} alerts (${kinds}): ${tally(
          b.alerts.map((a) => `${a.type}:${a.attribute ?? ""}`),
          5,
        )}`,
      );
    }
  }
  return lines;
}

/**
 * (3b) The triage replay: alerts per batch with and without a user who closes every open incident
 * after each scan, and the alerts that repeat a closed condition (triage.ts says which those are).
 */
export function triageSection(runs: readonly TriageRun[]): string[] {
  const lines = [
    "(3b) triage replay: the same history, with a user who closes every open incident after each scan",
    "     (EXPECTED for a change of level, NO_ACTION_NEEDED for what may be one record, FALSE_POSITIVE otherwise)",
  ];
  const rows = [
    [
      "table",
      "batches",
      "alerts, no triage",
      "per batch",
      "alerts, triaged",
      "per batch",
      "closes E/FP/NA",
      "repeats of a close",
    ],
  ];
  const count = (scans: readonly ScanRecord[]) => scans.reduce((s, b) => s + b.alerts.length, 0);
  for (const r of runs) {
    const by = (reason: string) => r.closes.filter((c) => c.reason === reason).length;
    const n = Math.max(1, r.scans.length);
    rows.push([
      r.table,
      String(r.scans.length),
      String(count(r.untriaged)),
      (count(r.untriaged) / Math.max(1, r.untriaged.length)).toFixed(2),
      String(count(r.scans)),
      (count(r.scans) / n).toFixed(2),
      `${by("EXPECTED")}/${by("FALSE_POSITIVE")}/${by("NO_ACTION_NEEDED")}`,
      String(repeatsOf(r.scans, r.closes).length),
    ]);
  }
  lines.push(...table(rows, 1).map((l) => `  ${l}`));
  for (const r of runs) {
    const repeats = repeatsOf(r.scans, r.closes);
    lines.push(
      `  ${r.table} triaged alerts by policy: ${tally(
        r.scans.flatMap((b) => b.alerts.map((a) => a.type)),
        10,
      )}`,
    );
    if (repeats.length) {
      lines.push(
        `  ${r.table} repeats: ${tally(
          repeats.map((x) => `${x.alert.type}:${x.alert.attribute ?? ""} (closed ${x.close.reason})`),
          8,
        )}`,
      );
    }
  }
  return lines;
}

/** Prints the whole report on stdout. */
export function printReport(input: {
  meta: Meta;
  results: ScenarioResult[];
  history: Array<{ table: string; batches: HistoryBatch[] }>;
  triage: readonly TriageRun[];
  timings: Record<string, number>;
  trouble: ServiceTrouble;
  queue: { lostUploads: number; deliveredLate: number; hung: number; otherFailures: string };
  out: string;
}) {
  const { meta, results, history, timings, trouble } = input;
  const scenarios = results.filter((r) => r.type !== "control");
  const controls = results.filter((r) => r.type === "control");
  const lines = [
    "",
    `bench/detection — ${meta.machine}; ${meta.scans} scans through wrangler dev, ${meta.concurrency} in flight` +
      (meta.quick ? " (--quick)" : ""),
  ];
  for (const t of meta.tables) {
    const of = scenarios.filter((r) => r.table === t.name);
    const pairs = new Set(of.map((r) => `${r.type}/${r.target}`)).size;
    lines.push(
      `  ${t.name}: ${t.batches} batches; windows ${t.windows.map((w) => `w${w.index} ${w.training} → ${w.test}`).join("; ")}`,
      `    ${of.length} scenarios = ${pairs} (type, target) × ${meta.fractions.length} fractions × ${meta.reps} window${meta.reps > 1 ? "s" : ""} each; ` +
        `${controls.filter((c) => c.table === t.name).length} controls`,
    );
  }
  lines.push(
    "",
    "(1) recall: detected = the corrupted scan raised ≥1 alert (ours) / ≥1 suggested constraint failed (peer)",
  );
  for (const name of new Set(scenarios.map((r) => r.table))) {
    const of = scenarios.filter((r) => r.table === name);
    lines.push("", ...recallSection(of, meta.fractions, name), "", ...firedSection(of));
  }
  if (new Set(scenarios.map((r) => r.table)).size > 1) {
    const measured = scenarios.filter((r) => r.measured);
    const row = (name: string, pick: (r: ScenarioResult["ours"] | ScenarioResult["peer"]) => boolean) => [
      name,
      ...meta.fractions.flatMap((f) => {
        const cell = measured.filter((r) => r.fraction === f);
        return [
          percent(cell.filter((r) => pick(r.ours)).length, cell.length),
          percent(cell.filter((r) => pick(r.peer)).length, cell.length),
        ];
      }),
    ];
    const rows = [
      [`all tables (${measured.length} scenarios)`, ...meta.fractions.flatMap((f) => [`${pct(f)} ours`, "peer"])],
      row("recall", (s) => s.detected),
      row("  beyond the control", (s) => s.notOnControl.length > 0),
      row("  on the column hit", (s) => s.onTarget),
    ];
    lines.push("", ...table(rows, 1));
  }
  lines.push(
    "",
    ...controlsSection(controls, results),
    "",
    ...historySection(history),
    "",
    ...triageSection(input.triage),
    "",
    "(4) timings",
  );
  const scansPerSecond = meta.scans / Math.max(1e-9, timings["all scans"] ?? 0);
  for (const [name, seconds] of Object.entries(timings))
    lines.push(`  ${name.padEnd(28)} ${seconds.toFixed(1).padStart(7)} s`);
  lines.push(`  ${meta.scans} scans; ${scansPerSecond.toFixed(1)} scans/s (rounds and history together)`);
  const statuses = Object.entries(trouble.statuses);
  lines.push(
    `service: ${trouble.retries} retried calls; non-2xx answers: ${statuses.length ? statuses.map(([k, n]) => `${k} ×${n}`).join(", ") : "none"}`,
    `queue: ${input.queue.lostUploads} uploads whose job was never delivered (QUEUED, not started after 60 s) were sent again ` +
      `(${input.queue.deliveredLate} of those jobs ran later); ${input.queue.hung} jobs hung (RUNNING, not finished after 90 s)` +
      (input.queue.otherFailures ? `; other scans that did not succeed: ${input.queue.otherFailures}` : ""),
    `per-scenario results: ${input.out}`,
  );
  process.stdout.write(`${lines.join("\n")}\n`);
}
