/** Small shared pieces: loading data with its states, the hash router, and the state boxes. */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { ProblemError } from "./api";

export interface Loaded<T> {
  data?: T;
  error?: string;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change; keeps the last data while reloading. A 401 signs out. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], onUnauthorized?: () => void): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (e: unknown) => {
        if (!live) return;
        if (e instanceof ProblemError && e.status === 401) onUnauthorized?.();
        setState((s) => ({ data: s.data, loading: false, error: e instanceof Error ? e.message : String(e) }));
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** The route: the hash split on "/", e.g. #/assets/3/12 → ["assets", "3", "12"]. */
export function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

export function Status<T>({ state, children }: { state: Loaded<T>; children: (data: T) => ComponentChildren }) {
  return (
    <>
      {state.error && <ErrorBox message={state.error} />}
      {state.data === undefined ? state.loading && <Loading /> : children(state.data)}
    </>
  );
}

export function Loading() {
  return (
    <p class="loading" role="status" aria-live="polite">
      Loading…
    </p>
  );
}

export function ErrorBox({ message }: { message: string }) {
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

export function fmtTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  return new Date(iso).toISOString().replace("T", " ").slice(0, 16);
}

export function fmtNum(x: number | string | null | undefined): string {
  if (x === null || x === undefined) return "—";
  if (typeof x === "string") return x;
  return Number.isInteger(x) ? x.toLocaleString("en") : x.toLocaleString("en", { maximumSignificantDigits: 4 });
}

export function Badge({ value }: { value: string }) {
  return <span class={`badge b-${value.toLowerCase()}`}>{value}</span>;
}

/** A table of rows under a header of column names, scrolling sideways on a narrow screen. */
export function Table({ headers, children }: { headers: string[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            {headers.map((h) => (
              <th scope="col" key={h}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** A page about one thing: a link back to its list, then its content once loaded. */
export function DetailPage<T>({
  back,
  labelledBy,
  state,
  children,
}: {
  back: [href: string, label: string];
  labelledBy: string;
  state: Loaded<T>;
  children: (data: T) => ComponentChildren;
}) {
  return (
    <section aria-labelledby={labelledBy}>
      <p>
        <a href={back[0]}>← {back[1]}</a>
      </p>
      <Status state={state}>{children}</Status>
    </section>
  );
}
