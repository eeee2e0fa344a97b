/** Settings: an asset's policy overrides (on its page) and the tenant's notification channels. */
import { useState } from "preact/hooks";
import type { DqClient } from "../clients/ts";
import { must, ProblemError, type Schemas, type Session } from "./api";
import { Badge, ErrorBox, Status, Table, useLoad } from "./ui";

interface Ctx {
  dq: DqClient;
  session: Session;
  signOut: () => void;
}

type Policy = Schemas["AssetPolicies"]["policies"][number];
type Override = { enabled?: boolean; priority?: "LOW" | "MEDIUM" | "HIGH"; notify?: boolean; params?: object };

/** Runs an action, keeping its error (the problem's detail) and a done message for the page. */
function useAction() {
  const [state, setState] = useState<{ busy: boolean; error?: string; done?: string }>({ busy: false });
  const run = async (action: () => Promise<string>) => {
    setState({ busy: true });
    try {
      setState({ busy: false, done: await action() });
    } catch (e) {
      setState({ busy: false, error: e instanceof ProblemError ? e.detail : String(e) });
    }
  };
  return { ...state, run };
}

/** The asset's policies: enabled, priority and notification per policy, saved as overrides. */
export function PolicySettings({ ctx, assetId }: { ctx: Ctx; assetId: number }) {
  const path = { tenant: ctx.session.tenant, assetId };
  const state = useLoad(
    () => must(ctx.dq.GET("/api/backend/{tenant}/configuration/assets/{assetId}/policies", { params: { path } })),
    [assetId],
    ctx.signOut,
  );
  const action = useAction();
  const save = (e: Event, current: Schemas["AssetPolicies"]) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const field = (name: string) => form.elements.namedItem(name) as HTMLInputElement & HTMLSelectElement;
    const overrides: Record<string, Override> = {};
    for (const p of current.policies) {
      overrides[p.id] = {
        ...(current.overrides[p.id] as Override | undefined),
        enabled: field(`enabled-${p.id}`).checked,
        notify: field(`notify-${p.id}`).checked,
        priority: field(`priority-${p.id}`).value as Override["priority"],
      };
    }
    void action.run(async () => {
      await must(
        ctx.dq.PUT("/api/backend/{tenant}/configuration/assets/{assetId}/policies", {
          params: { path },
          body: { overrides: overrides as never },
        }),
      );
      state.reload();
      return "Policies saved.";
    });
  };
  return (
    <section class="card" aria-labelledby="policies-h">
      <h2 id="policies-h">Policies</h2>
      <Status state={state}>
        {(current) => (
          <form onSubmit={(e) => save(e, current)}>
            <Table headers={["Policy", "Kind", "Dimension", "Enabled", "Notify", "Priority"]}>
              {current.policies.map((p: Policy) => (
                <tr key={p.id}>
                  <td title={p.description}>{p.name}</td>
                  <td>{p.kind}</td>
                  <td>{p.dimension}</td>
                  <td>
                    <input
                      type="checkbox"
                      name={`enabled-${p.id}`}
                      defaultChecked={p.enabled}
                      aria-label={`${p.name} enabled`}
                    />
                  </td>
                  <td>
                    <input
                      type="checkbox"
                      name={`notify-${p.id}`}
                      defaultChecked={p.notify}
                      aria-label={`${p.name} notifies`}
                    />
                  </td>
                  <td>
                    <select name={`priority-${p.id}`} aria-label={`${p.name} priority`}>
                      {["LOW", "MEDIUM", "HIGH"].map((l) => (
                        <option key={l} selected={l === p.priority}>
                          {l}
                        </option>
                      ))}
                    </select>
                  </td>
                </tr>
              ))}
            </Table>
            <div class="row">
              <button type="submit" disabled={action.busy}>
                Save policies
              </button>
              {action.done && <span role="status">{action.done}</span>}
            </div>
            {action.error && <ErrorBox message={action.error} />}
          </form>
        )}
      </Status>
    </section>
  );
}

/** The tenant's notification channels, each with a test send. */
export function SettingsPage(ctx: Ctx) {
  const tenant = ctx.session.tenant;
  const state = useLoad(
    () =>
      must(ctx.dq.GET("/api/backend/{tenant}/configuration/notifications/channels", { params: { path: { tenant } } })),
    [],
    ctx.signOut,
  );
  const action = useAction();
  const test = (channel: Schemas["NotificationChannel"]) =>
    action.run(async () => {
      const r = await must(
        ctx.dq.POST("/api/backend/{tenant}/configuration/notifications/channels/{channelId}/test", {
          params: { path: { tenant, channelId: channel.id } },
        }),
      );
      return r.delivered
        ? `${channel.name}: delivered (${r.status_code})`
        : `${channel.name}: not delivered (${r.status_code ?? "no answer"}${r.error ? `, ${r.error}` : ""})`;
    });
  return (
    <section aria-labelledby="settings-h">
      <h1 id="settings-h">Settings</h1>
      <p class="muted">An asset's policies are set on the asset's page.</p>
      <section class="card" aria-labelledby="channels-h">
        <h2 id="channels-h">Notification channels</h2>
        {action.error && <ErrorBox message={action.error} />}
        {action.done && <p role="status">{action.done}</p>}
        <Status state={state}>
          {(channels) =>
            channels.length === 0 ? (
              <p class="muted">No channels yet (POST …/configuration/notifications/channels).</p>
            ) : (
              <Table headers={["Name", "Type", "Receiver", "Events", "From severity", "State", ""]}>
                {channels.map((c) => (
                  <tr key={c.id}>
                    <td>{c.name}</td>
                    <td>{c.type}</td>
                    <td class="mono">{c.url}</td>
                    <td>{c.events.join(", ")}</td>
                    <td>{c.min_severity}</td>
                    <td>
                      <Badge value={c.enabled ? "ENABLED" : "DISABLED"} />
                    </td>
                    <td>
                      <button type="button" disabled={action.busy} onClick={() => test(c)}>
                        Send a test to {c.name}
                      </button>
                    </td>
                  </tr>
                ))}
              </Table>
            )
          }
        </Status>
      </section>
    </section>
  );
}
