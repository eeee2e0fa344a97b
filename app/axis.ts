/**
 * Time axes that stay legible at any span (seconds to years) and width. The labels are HTML, not
 * canvas text: each is measured where it lands and a label that would touch the one before it is
 * dropped, so they never overlap (and a test can measure them). Times are UTC, like the rest of
 * the dashboard.
 */
import uPlot from "uplot";

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;
/** uPlot's month and year: increments this large are laid on month and year starts. */
const MONTH = 30 * DAY;
const YEAR = 365 * DAY;

/** Tick increments in seconds: never below a second (scans are not timed finer than that). */
const TIME_INCRS = [
  1,
  5,
  10,
  15,
  30,
  MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
  14 * DAY,
  MONTH,
  2 * MONTH,
  3 * MONTH,
  6 * MONTH,
  YEAR,
  2 * YEAR,
  5 * YEAR,
  10 * YEAR,
];

/** A range narrower than this (one scan, or scans within a second) is widened around its middle. */
const MIN_SPAN = 10;
/** Room for a label ("2026-11-27" at 12 px) and the gap after it, in CSS pixels. */
const LABEL_SPACE = 96;
/** Smallest gap kept between two labels, in CSS pixels. */
const LABEL_GAP = 6;
/** Height of the time axis below the plot: ticks and two lines of labels. */
const AXIS_SIZE = 40;
const TICK_SIZE = 6;

const pad = (n: number) => String(n).padStart(2, "0");

/** YYYY-MM-DD of a UTC time in seconds. */
export function utcDay(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

/**
 * The lines of each tick's label, for ticks `incr` seconds apart: the coarsest form that tells the
 * ticks apart (2026, 2026-11, 2026-11-27, 14:03, 14:03:14); times carry their day on the first
 * tick and wherever the day changes.
 */
export function timeLabels(splits: number[], incr: number): string[][] {
  return splits.map((t, i) => {
    const d = new Date(t * 1000);
    const day = utcDay(t);
    if (incr >= YEAR) return [String(d.getUTCFullYear())];
    if (incr >= MONTH) return [day.slice(0, 7)];
    if (incr >= DAY) return [day];
    const hm = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
    const time = incr >= MINUTE ? hm : `${hm}:${pad(d.getUTCSeconds())}`;
    const before = splits[i - 1];
    return before === undefined || utcDay(before) !== day ? [time, day] : [time];
  });
}

/** A label of an axis: `x` is its centre, in CSS pixels from the left edge of its layer. */
export interface AxisLabel {
  x: number;
  lines: string[];
}

/**
 * Puts the labels into `layer` (emptied first), each centred on its x but kept inside the layer,
 * from left to right; a label that would come within LABEL_GAP of the last one kept is dropped.
 */
export function placeLabels(layer: HTMLElement, labels: AxisLabel[]): void {
  layer.replaceChildren();
  const width = layer.clientWidth;
  let right = Number.NEGATIVE_INFINITY;
  for (const label of labels) {
    const span = document.createElement("span");
    span.textContent = label.lines.join("\n");
    layer.append(span);
    const w = span.offsetWidth;
    const left = Math.min(Math.max(0, label.x - w / 2), Math.max(0, width - w));
    if (left < right + LABEL_GAP) {
      span.remove();
      continue;
    }
    span.style.left = `${left}px`;
    right = left + w;
  }
}

/**
 * A uPlot plugin for an x scale of UTC times in seconds: ticks at whole seconds, minutes, days,
 * months or years, as the span and the width allow; labels laid as HTML by placeLabels below the
 * plot (uPlot draws the ticks and the grid, and no text).
 */
export function timeAxis(): uPlot.Plugin {
  let ticks: { splits: number[]; incr: number } = { splits: [], incr: 1 };
  let layer: HTMLDivElement | undefined;
  return {
    opts: (_u, opts) => ({
      ...opts,
      tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      scales: {
        ...opts.scales,
        x: {
          time: true,
          range: (_self, min, max) =>
            max - min >= MIN_SPAN ? [min, max] : [(min + max) / 2 - MIN_SPAN / 2, (min + max) / 2 + MIN_SPAN / 2],
        },
      },
      axes: [
        {
          incrs: TIME_INCRS,
          space: LABEL_SPACE,
          size: AXIS_SIZE,
          ticks: { size: TICK_SIZE },
          values: (_self, splits, _axis, _space, incr) => {
            ticks = { splits: splits.filter((s): s is number => s !== null), incr };
            return splits.map(() => "");
          },
        },
        ...(opts.axes?.slice(1) ?? []),
      ],
    }),
    hooks: {
      init: (u) => {
        layer = document.createElement("div");
        layer.className = "axis time";
        u.over.parentElement?.append(layer);
      },
      draw: (u) => {
        if (!layer) return;
        const plotLeft = u.bbox.left / uPlot.pxRatio;
        const plotBottom = (u.bbox.top + u.bbox.height) / uPlot.pxRatio;
        layer.style.top = `${plotBottom + TICK_SIZE + 2}px`;
        const lines = timeLabels(ticks.splits, ticks.incr);
        placeLabels(
          layer,
          ticks.splits.map((t, i) => ({ x: plotLeft + u.valToPos(t, "x"), lines: lines[i]! })),
        );
      },
      destroy: () => layer?.remove(),
    },
  };
}

/**
 * Labels for a row of `days.length` equal bars across `width` pixels: every n-th day counted back
 * from the last (so the latest day is named), n the smallest of 1, 2, 3, 7, 14, 30, 61, 91, 182,
 * 365 that leaves LABEL_SPACE per label.
 */
export function dayLabels(days: string[], width: number): AxisLabel[] {
  const perDay = width / Math.max(1, days.length);
  const step = [1, 2, 3, 7, 14, 30, 61, 91, 182, 365].find((n) => n * perDay >= LABEL_SPACE) ?? 730;
  const labels: AxisLabel[] = [];
  for (let i = days.length - 1; i >= 0; i -= step) labels.unshift({ x: (i + 0.5) * perDay, lines: [days[i]!] });
  return labels;
}
