/**
 * A D1 binding that counts its round trips: every statement run (`first`, `all`, `run`, `raw`),
 * every `batch` and `exec` is one trip to the database, whatever it holds; trips made while another
 * is in flight are counted but do not add to `sequential`, the latency that matters. The app builds
 * one per request and reports it in `Server-Timing: d1;dur=…;desc="n round trips, m sequential"`, so a client (and
 * bench/api) can see what a route costs in D1 calls — deployed, each one is a round trip to the
 * primary, or to a replica.
 */
export interface D1Meter {
  roundTrips: number;
  /** Round trips that had to wait for none other: calls started while one is in flight do not add. */
  sequential: number;
  /** Calls in flight now. */
  inFlight: number;
  /** Milliseconds spent waiting on D1, summed (calls made in parallel count each). */
  ms: number;
}

const RUNS = new Set(["first", "all", "run", "raw"]);

async function timed<T>(meter: D1Meter, call: () => Promise<T>): Promise<T> {
  meter.roundTrips++;
  if (meter.inFlight === 0) meter.sequential++;
  meter.inFlight++;
  const started = Date.now();
  try {
    return await call();
  } finally {
    meter.inFlight--;
    meter.ms += Date.now() - started;
  }
}

/** A meter at zero. */
export const newD1Meter = (): D1Meter => ({ roundTrips: 0, sequential: 0, inFlight: 0, ms: 0 });

/** The Server-Timing entry of a meter. */
export const serverTiming = (m: D1Meter) =>
  `d1;dur=${m.ms};desc="${m.roundTrips} round trips, ${m.sequential} sequential"`;

/** What a metered statement answers for the binding's own statement behind it (for `batch`). */
const ORIGINAL = Symbol("d1 statement");

function meteredStatement(statement: D1PreparedStatement, meter: D1Meter): D1PreparedStatement {
  return new Proxy(statement, {
    get(target, prop) {
      if (prop === ORIGINAL) return target;
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "bind") {
        return (...args: unknown[]) => meteredStatement(value.apply(target, args) as D1PreparedStatement, meter);
      }
      if (typeof prop === "string" && RUNS.has(prop)) {
        return (...args: unknown[]) => timed(meter, () => value.apply(target, args) as Promise<unknown>);
      }
      return value.bind(target);
    },
  });
}

const original = (s: D1PreparedStatement) =>
  ((s as unknown as Record<symbol, D1PreparedStatement | undefined>)[ORIGINAL] ?? s) as D1PreparedStatement;

/** `d1` counting into `meter`; a batch is one round trip, its statements run unmetered inside it. */
export function meteredD1(d1: D1Database, meter: D1Meter): D1Database {
  return new Proxy(d1, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "prepare") {
        return (query: string) => meteredStatement(value.call(target, query) as D1PreparedStatement, meter);
      }
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) =>
          timed(meter, () => value.call(target, statements.map(original)) as Promise<unknown>);
      }
      if (prop === "exec") return (query: string) => timed(meter, () => value.call(target, query) as Promise<unknown>);
      return value.bind(target);
    },
  });
}
