/**
 * CPU profiles of the Worker under load, through wrangler dev's inspector (Chrome DevTools
 * protocol): bench/api --profile starts one around each route's wrk run and prints where the
 * isolate spent its time, by function (self time), so a change's saving shows in CPU rather than
 * in latency that the shared cores blur.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** A DevTools connection to the Worker's isolate. */
export class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, (result: unknown) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener("message", (event) => {
      const msg = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: unknown };
      if (msg.id === undefined) return;
      this.pending.get(msg.id)?.(msg.error ? Promise.reject(new Error(JSON.stringify(msg.error))) : msg.result);
      this.pending.delete(msg.id);
    });
  }

  /** Connects to the first target wrangler dev's inspector lists on `port`, sampling every `intervalUs` µs. */
  static async connect(port: number, intervalUs = 200): Promise<Inspector> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as {
          webSocketDebuggerUrl: string;
        }[];
        const url = targets[0]?.webSocketDebuggerUrl;
        if (url) {
          // wrangler's inspector proxy wants a local Origin (Node's WebSocket takes undici's headers).
          const socket = new WebSocket(url, { headers: { Origin: "http://localhost" } } as unknown as string[]);
          await new Promise((resolve, reject) => {
            socket.addEventListener("open", resolve, { once: true });
            socket.addEventListener("error", reject, { once: true });
          });
          const inspector = new Inspector(socket);
          await inspector.send("Profiler.enable");
          await inspector.send("Profiler.setSamplingInterval", { interval: intervalUs });
          return inspector;
        }
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
      if (Date.now() > deadline) throw new Error(`no inspector target on port ${port}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve) => this.pending.set(id, resolve));
  }

  async start(): Promise<void> {
    await this.send("Profiler.start");
  }

  async stop(): Promise<Profile> {
    return ((await this.send("Profiler.stop")) as { profile: Profile }).profile;
  }

  close(): void {
    this.socket.close();
  }
}

/** Milliseconds of CPU per function (self time), busiest first, and the total outside idle. */
export function selfTimes(profile: Profile): { busyMs: number; rows: { name: string; ms: number }[] } {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const ms = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const node = byNode.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    if (functionName === "(idle)" || functionName === "(program)") return;
    busy += dt;
    const file = url.split("/").pop() ?? "";
    const name = `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
    ms.set(name, (ms.get(name) ?? 0) + dt);
  });
  const rows = [...ms].map(([name, v]) => ({ name, ms: v })).sort((a, b) => b.ms - a.ms);
  return { busyMs: busy, rows };
}

/**
 * Inclusive time per function: each sample counts once for every distinct function on its stack
 * (so recursion is not counted twice), busiest first. Says where a request's time goes by caller
 * (authenticate, the route's validator, the handler) where self time splits it into leaves.
 */
export function totalTimes(profile: Profile): { name: string; ms: number }[] {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ms = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    const leaf = byNode.get(id)!.callFrame.functionName;
    if (leaf === "(idle)" || leaf === "(program)") return;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url, lineNumber } = byNode.get(at)!.callFrame;
      if (functionName === "(root)") continue;
      seen.add(`${functionName || "(anonymous)"} ${url.split("/").pop() ?? ""}:${lineNumber + 1}`);
    }
    for (const name of seen) ms.set(name, (ms.get(name) ?? 0) + dt);
  });
  return [...ms].map(([name, v]) => ({ name, ms: v })).sort((a, b) => b.ms - a.ms);
}

/**
 * Where each sample's leaf function comes from: the module of the bundle it is in (the bundle's
 * `// src/…` and `// node_modules/…` comments), workerd's own JavaScript (`cloudflare-internal:…`,
 * the D1 and rate-limiter bindings' wrappers), or native code (`:0`, e.g. fetch, JSON, Response).
 */
export function moduleOf(bundle: string): (url: string, lineNumber: number, functionName: string) => string {
  const starts: { line: number; module: string }[] = [];
  bundle.split("\n").forEach((text, i) => {
    const m = /^\/\/ ((?:node_modules\/(?:@[^/]+\/)?[^/]+)|src\/[^/]+(?:\/[^/.]+)?|[^\s]+)/.exec(text);
    if (m && !m[1]!.startsWith("@__")) starts.push({ line: i, module: m[1]!.replace(/^node_modules\//, "") });
  });
  return (url, lineNumber, functionName) => {
    if (url.startsWith("cloudflare-internal:")) return url.replace(/:\d+$/, "").replace(":module", "");
    if (!url.endsWith(".js")) {
      if (functionName === "(garbage collector)") return "(garbage collector)";
      return `(native) ${functionName || "(anonymous)"}`;
    }
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]!.line <= lineNumber) lo = mid;
      else hi = mid - 1;
    }
    return starts[lo] && starts[lo]!.line <= lineNumber ? starts[lo]!.module : "(bundle head)";
  };
}

/** Self time per module (moduleOf), busiest first, in ms over the profile. */
export function moduleTimes(profile: Profile, module: ReturnType<typeof moduleOf>): { name: string; ms: number }[] {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const ms = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const { functionName, url, lineNumber } = byNode.get(id)!.callFrame;
    if (functionName === "(idle)" || functionName === "(program)") return;
    const name = module(url, lineNumber, functionName);
    ms.set(name, (ms.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return [...ms].map(([name, v]) => ({ name, ms: v })).sort((a, b) => b.ms - a.ms);
}
