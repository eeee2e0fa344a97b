/**
 * Five-field cron expressions (minute hour day-of-month month day-of-week) and the next minute
 * they are due in a time zone. Written here because `croner` is not a dependency of the project.
 *
 * Syntax per field: `*`, a value, a range `a-b`, a step `*\/n`, `a-b/n` or `a/n`, and comma lists
 * of these. Months and weekdays also take English three-letter names (JAN, MON); weekday 7 is
 * Sunday like 0. Day rule of Vixie cron: when both day-of-month and day-of-week are restricted
 * (neither starts with `*`), a day matches if EITHER does; otherwise both must.
 */

interface FieldSpec {
  min: number;
  max: number;
  names?: readonly string[];
}

const FIELDS: readonly FieldSpec[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"] },
  { min: 0, max: 7, names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"] },
];
const FIELD_NAMES = ["minute", "hour", "day of month", "month", "day of week"];

/** A parsed schedule: the allowed values of each field. */
export interface CronSchedule {
  minutes: readonly number[];
  hours: readonly number[];
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  /** 0-6, Sunday = 0. */
  daysOfWeek: ReadonlySet<number>;
  domRestricted: boolean;
  dowRestricted: boolean;
  /** Minute or hour is a `*` field: such a schedule also runs in a repeated (DST fall-back) hour. */
  frequent: boolean;
}

export class CronError extends Error {
  override name = "CronError";
}

function parseValue(text: string, spec: FieldSpec, field: string): number {
  const upper = text.toUpperCase();
  const named = spec.names?.indexOf(upper) ?? -1;
  // Month names start at 1 (JAN), weekday names at 0 (SUN).
  if (named >= 0) return named + spec.min;
  if (!/^\d+$/.test(text)) throw new CronError(`${field}: '${text}' is not a number`);
  const n = Number(text);
  if (n < spec.min || n > spec.max) throw new CronError(`${field}: ${n} is outside ${spec.min}-${spec.max}`);
  return n;
}

function parseField(text: string, spec: FieldSpec, field: string): Set<number> {
  const values = new Set<number>();
  for (const part of text.split(",")) {
    const [range, stepText, extra] = part.split("/");
    if (range === undefined || range === "" || extra !== undefined) throw new CronError(`${field}: bad part '${part}'`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) < 1) throw new CronError(`${field}: bad step '${stepText}'`);
      step = Number(stepText);
    }
    let lo: number;
    let hi: number;
    if (range === "*") {
      lo = spec.min;
      hi = spec.max;
    } else if (range.includes("-")) {
      const [a, b, more] = range.split("-");
      if (a === undefined || b === undefined || more !== undefined)
        throw new CronError(`${field}: bad range '${range}'`);
      lo = parseValue(a, spec, field);
      hi = parseValue(b, spec, field);
      if (lo > hi) throw new CronError(`${field}: range '${range}' runs backwards`);
    } else {
      lo = parseValue(range, spec, field);
      // `a/n` means from a to the end of the field in steps of n.
      hi = stepText === undefined ? lo : spec.max;
    }
    for (let v = lo; v <= hi; v += step) values.add(v);
  }
  return values;
}

/** Parses a five-field cron expression; throws CronError saying what is wrong. */
export function parseCron(expression: string): CronSchedule {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5)
    throw new CronError(`needs 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`);
  const sets = parts.map((p, i) => parseField(p, FIELDS[i]!, FIELD_NAMES[i]!));
  const dow = new Set([...sets[4]!].map((d) => d % 7));
  const sorted = (s: Set<number>) => [...s].sort((a, b) => a - b);
  return {
    minutes: sorted(sets[0]!),
    hours: sorted(sets[1]!),
    daysOfMonth: sets[2]!,
    months: sets[3]!,
    daysOfWeek: dow,
    domRestricted: !parts[2]!.startsWith("*"),
    dowRestricted: !parts[4]!.startsWith("*"),
    frequent: parts[0]!.startsWith("*") || parts[1]!.startsWith("*"),
  };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether `timeZone` is an IANA zone name the runtime knows. */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock time of an instant in a zone, as milliseconds of a UTC date with the same fields. */
function wallClock(instant: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(instant))) {
    if (p.type !== "literal") parts[p.type] = Number(p.value);
  }
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
}

/**
 * The instants at which a zone's clock shows `wall` (a UTC date carrying the wall-clock fields),
 * ascending: none when a daylight-saving change skips that time, two in a repeated hour.
 * `hint` is a likely offset (fast path).
 */
function instantsOf(wall: number, timeZone: string, hint: number): number[] {
  const guess = wall - hint;
  // The fast path is only safe when an hour either side keeps the offset (no DST change near).
  if (
    wallClock(guess, timeZone) === wall &&
    wallClock(guess - 3_600_000, timeZone) === wall - 3_600_000 &&
    wallClock(guess + 3_600_000, timeZone) === wall + 3_600_000
  ) {
    return [guess];
  }
  // Offsets a few hours either side cover any DST change around `wall`.
  const offsets = new Set([-6, 0, 6].map((h) => wallClock(wall + h * 3_600_000, timeZone) - (wall + h * 3_600_000)));
  return [...offsets]
    .map((o) => wall - o)
    .filter((t) => wallClock(t, timeZone) === wall)
    .sort((a, b) => a - b);
}

const DAY = 86_400_000;
/** Longest search for a due minute: covers Feb 29 on a given weekday (28-year cycle) with margin. */
const SEARCH_DAYS = 366 * 30;

/**
 * The first whole minute strictly after `after` at which the schedule is due, on the clock of
 * `timeZone`; undefined if it never is (e.g. `0 0 31 2 *`). Wall-clock times skipped by a
 * daylight-saving change are skipped; in a repeated hour a fixed-time schedule runs once, at the
 * first occurrence, and a schedule whose minute or hour is `*` runs in both (as Vixie cron does).
 */
export function nextRun(schedule: CronSchedule, timeZone: string, after: Date): Date | undefined {
  const from = after.getTime();
  const startWall = wallClock(from, timeZone);
  const offset = startWall - Math.floor(from / 1000) * 1000;
  let day = Math.floor(startWall / DAY) * DAY;
  for (let i = 0; i < SEARCH_DAYS; i++, day += DAY) {
    const d = new Date(day);
    if (!schedule.months.has(d.getUTCMonth() + 1)) continue;
    const domOk = schedule.daysOfMonth.has(d.getUTCDate());
    const dowOk = schedule.daysOfWeek.has(d.getUTCDay());
    // A `*`-led field holds every value it allows, so AND keeps the other field's restriction.
    const dayOk = schedule.domRestricted && schedule.dowRestricted ? domOk || dowOk : domOk && dowOk;
    if (!dayOk) continue;
    for (const h of schedule.hours) {
      for (const m of schedule.minutes) {
        const wall = day + h * 3_600_000 + m * 60_000;
        // Wall times well before the start cannot be later instants (DST shifts are under 3 h).
        if (wall + 3 * 3_600_000 < startWall) continue;
        const instants = instantsOf(wall, timeZone, offset);
        // A fixed-time schedule runs once in a repeated hour (at its first occurrence); a
        // frequent one (every minute / every hour) keeps running through both.
        const due = schedule.frequent ? instants.find((t) => t > from) : instants[0];
        if (due !== undefined && due > from) return new Date(due);
      }
    }
  }
  return undefined;
}

/**
 * Validates a cron expression and zone and returns the next due minute (ISO 8601 UTC) after
 * `after`; throws CronError when the expression is invalid or never due.
 */
export function nextRunIso(expression: string, timeZone: string, after: Date): string {
  if (!isTimeZone(timeZone)) throw new CronError(`unknown time zone '${timeZone}'`);
  const next = nextRun(parseCron(expression), timeZone, after);
  if (!next) throw new CronError("the expression is never due");
  return next.toISOString();
}
