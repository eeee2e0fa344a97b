/**
 * Charts: uPlot for time series (a metric with its expected band and alerting points, the DQ
 * score by dimension), small SVGs for what uPlot would be too much for (sparklines, the stacked
 * day-by-day incident bars). Every chart has a text caption saying what it shows.
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import type { Schemas } from "./api";
import { dayLabels, placeLabels, timeAxis } from "./axis";

type MetricPoint = Schemas["MetricPoint"];

const COLOURS = {
  value: "#1f5fa8",
  band: "rgba(31,95,168,0.14)",
  alert: "#c62828",
  LOW: "#8fb8de",
  MEDIUM: "#f0a030",
  HIGH: "#c62828",
};

function useUPlot(build: (el: HTMLElement, width: number) => uPlot | null, deps: unknown[]) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const plot = build(el, Math.max(260, el.clientWidth));
    const resize = new ResizeObserver(() => plot?.setSize({ width: Math.max(260, el.clientWidth), height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot?.destroy();
    };
  }, deps);
  return ref;
}

/** A metric's history: its values, the band expected at each point, and the points that alerted. */
export function MetricChart({
  metric,
  points,
  highlight,
}: {
  metric: string;
  points: MetricPoint[];
  highlight?: string;
}) {
  const banded = points.filter((p) => p.expected).length;
  const alerting = points.filter((p) => p.alerts.length > 0);
  const ref = useUPlot(
    (el, width) => {
      if (points.length === 0) return null;
      const xs = points.map((p) => Date.parse(p.time) / 1000);
      const data: uPlot.AlignedData = [
        xs,
        points.map((p) => p.value),
        points.map((p) => p.expected?.high ?? null),
        points.map((p) => p.expected?.low ?? null),
        points.map((p) => (p.alerts.length > 0 || p.job_id === highlight ? p.value : null)),
      ];
      return new uPlot(
        {
          width,
          height: 220,
          legend: { show: false },
          plugins: [timeAxis()],
          series: [
            {},
            { label: "value", stroke: COLOURS.value, width: 2 },
            { label: "expected high", stroke: "rgba(31,95,168,0.35)", dash: [4, 4] },
            { label: "expected low", stroke: "rgba(31,95,168,0.35)", dash: [4, 4] },
            {
              label: "alerting",
              stroke: COLOURS.alert,
              paths: () => null,
              points: { show: true, size: 10, fill: COLOURS.alert, stroke: COLOURS.alert },
            },
          ],
          bands: [{ series: [2, 3], fill: COLOURS.band }],
        },
        data,
        el,
      );
    },
    [metric, points, highlight],
  );
  return (
    <figure class="chart" data-metric={metric} data-band-points={banded} data-alert-points={alerting.length}>
      <figcaption>
        <strong>{metric}</strong> — {points.length} points, {banded} with an expected band
        {alerting.length > 0 ? `, ${alerting.length} alerting` : ""}
      </figcaption>
      {points.length === 0 ? (
        <p class="muted">No points yet.</p>
      ) : (
        <div ref={ref} class="plot" role="img" aria-label={`${metric}: values, expected band and alerting points`} />
      )}
    </figure>
  );
}

/** The DQ score over time, overall and per dimension. */
export function ScoreChart({ scores }: { scores: Schemas["DqScore"][] }) {
  const ordered = [...scores].reverse();
  const dims = ["overall", "completeness", "accuracy", "consistency", "timeliness"] as const;
  const strokes = ["#222", "#1f5fa8", "#2e7d32", "#8e24aa", "#f0a030"];
  const ref = useUPlot(
    (el, width) => {
      if (ordered.length === 0) return null;
      const data: uPlot.AlignedData = [
        ordered.map((s) => Date.parse(s.scored_at) / 1000),
        ...dims.map((d) => ordered.map((s) => s[d])),
      ];
      return new uPlot(
        {
          width,
          height: 220,
          scales: { y: { range: [0, 100] } },
          plugins: [timeAxis()],
          series: [{}, ...dims.map((d, i) => ({ label: d, stroke: strokes[i], width: d === "overall" ? 2.5 : 1.5 }))],
        },
        data,
        el,
      );
    },
    [scores],
  );
  return (
    <figure class="chart" data-chart="dq-score">
      <figcaption>DQ score over time, by dimension ({ordered.length} scans)</figcaption>
      {ordered.length === 0 ? (
        <p class="muted">No scores yet.</p>
      ) : (
        <div ref={ref} class="plot" role="img" aria-label="DQ score by dimension over time" />
      )}
    </figure>
  );
}

/** A tiny line of recent values (oldest first), 0-100. */
export function Sparkline({ values, label }: { values: number[]; label: string }) {
  if (values.length < 2) return null;
  const w = 80;
  const h = 20;
  const pts = values
    .map((v, i) => `${((i / (values.length - 1)) * w).toFixed(1)},${(h - (v / 100) * h).toFixed(1)}`)
    .join(" ");
  return (
    <svg class="spark" width={w} height={h} viewBox={`0 0 ${w} ${h}`} role="img" aria-label={label}>
      <polyline points={pts} fill="none" stroke={COLOURS.value} stroke-width="1.5" />
    </svg>
  );
}

/** Incidents opened per day, stacked by severity. */
export function StackedDays({ days }: { days: Schemas["IncidentDistribution"]["days"] }) {
  const max = Math.max(1, ...days.map((d) => d.total));
  const h = 120;
  const bw = Math.max(4, Math.floor(600 / Math.max(1, days.length)));
  const levels = ["LOW", "MEDIUM", "HIGH"] as const;
  const axis = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = axis.current;
    if (!el) return;
    const dates = days.map((d) => d.date);
    const lay = () => placeLabels(el, dayLabels(dates, el.clientWidth));
    lay();
    const resize = new ResizeObserver(lay);
    resize.observe(el);
    return () => resize.disconnect();
  }, [days]);
  return (
    <figure class="chart" data-chart="incidents-per-day">
      <figcaption>
        Incidents opened per day, by severity ({days.reduce((n, d) => n + d.total, 0)} in {days.length} days)
        <span class="legend">
          {levels.map((l) => (
            <span key={l}>
              <i style={{ background: COLOURS[l] }} /> {l}
            </span>
          ))}
        </span>
      </figcaption>
      <svg
        viewBox={`0 0 ${bw * days.length} ${h}`}
        preserveAspectRatio="none"
        class="bars"
        role="img"
        aria-label="Incidents per day by severity"
      >
        {days.map((d, i) => {
          let y = h;
          return (
            <g key={d.date}>
              <title>
                {d.date}: {levels.map((l) => `${l} ${d.by_severity[l]}`).join(", ")}
              </title>
              {levels.map((l) => {
                const bh = (d.by_severity[l] / max) * (h - 4);
                y -= bh;
                return bh > 0 ? (
                  <rect key={l} x={i * bw + 1} y={y} width={bw - 2} height={bh} fill={COLOURS[l]} />
                ) : null;
              })}
            </g>
          );
        })}
      </svg>
      {days.length > 0 && <div ref={axis} class="axis days" aria-hidden="true" />}
    </figure>
  );
}
