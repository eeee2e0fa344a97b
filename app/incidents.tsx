/** Incidents: filters, summary figures, the day-by-day chart, the list; an incident's page and its actions. */
import { useState } from "preact/hooks";
import type { DqClient } from "../clients/ts";
import { must, ProblemError, type Schemas, type Session } from "./api";
import { MetricPanel } from "./assets";
import { StackedDays } from "./charts";
import { Badge, DetailPage, ErrorBox, fmtNum, fmtTime, Status, Table, useLoad } from "./ui";

interface Ctx {
  dq: DqClient;
  session: Session;
  signOut: () => void;
}

const LEVELS = ["LOW", "MEDIUM", "HIGH"];
const CLOSE_REASONS = [
  ["FIXED", "Fixed"],
  ["EXPECTED", "Expected"],
  ["FALSE_POSITIVE", "False positive"],
  ["NO_ACTION_NEEDED", "No action needed"],
];

type Filters = Record<string, string>;

function selected(form: HTMLFormElement, name: string): string {
  const el = form.elements.namedItem(name);
  if (el instanceof HTMLSelectElement) return [...el.selectedOptions].map((o) => o.value).join(",");
  return [...form.querySelectorAll<HTMLInputElement>(`input[name="${name}"]:checked`)].map((i) => i.value).join(",");
}

function FilterForm({
  projects,
  connectionTypes,
  policies,
  onApply,
}: {
  projects: Schemas["Project"][];
  connectionTypes: string[];
  policies: string[];
  onApply: (f: Filters) => void;
}) {
  const submit = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const value = (n: string) => (form.elements.namedItem(n) as HTMLInputElement).value.trim();
    const f: Filters = {
      project_ids: selected(form, "project_ids"),
      connection_types: selected(form, "connection_types"),
      alert_policy_ids: selected(form, "alert_policy_ids"),
      severities: selected(form, "severities"),
      impacts: selected(form, "impacts"),
      from_time: value("from_time") && new Date(`${value("from_time")}T00:00:00Z`).toISOString(),
      to_time: value("to_time") && new Date(`${value("to_time")}T00:00:00Z`).toISOString(),
      text_to_search: value("text_to_search"),
    };
    onApply(Object.fromEntries(Object.entries(f).filter(([, v]) => v)));
  };
  return (
    <form class="filters card" onSubmit={submit} aria-label="Incident filters">
      <label>
        Projects
        <select name="project_ids" multiple size={3}>
          {projects.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Connection types
        <select name="connection_types" multiple size={3}>
          {connectionTypes.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      <label>
        Policies
        <select name="alert_policy_ids" multiple size={3}>
          {policies.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      {(["severities", "impacts"] as const).map((name) => (
        <fieldset key={name}>
          <legend>{name === "severities" ? "Severities" : "Impacts"}</legend>
          {LEVELS.map((l) => (
            <label key={l} class="inline">
              <input type="checkbox" name={name} value={l} /> {l}
            </label>
          ))}
        </fieldset>
      ))}
      <label>
        From
        <input type="date" name="from_time" />
      </label>
      <label>
        To
        <input type="date" name="to_time" />
      </label>
      <label>
        Search
        <input type="search" name="text_to_search" placeholder="policy or asset name" />
      </label>
      <button type="submit">Apply filters</button>
    </form>
  );
}

function Figure({ label, value }: { label: string; value: string | number }) {
  return (
    <div class="figure" data-figure={label}>
      <span class="fig-value">{value}</span>
      <span class="fig-label">{label}</span>
    </div>
  );
}

export function IncidentsPage(ctx: Ctx) {
  const tenant = ctx.session.tenant;
  const [filters, setFilters] = useState<Filters>({});
  // The choices of the filters: the tenant's projects, its connections' types, its incidents' policies.
  const choices = useLoad(
    async () => {
      const params = { params: { path: { tenant } } };
      const [projects, connections, incidents] = await Promise.all([
        must(ctx.dq.GET("/api/backend/{tenant}/configuration/projects", params)),
        must(ctx.dq.GET("/api/backend/{tenant}/configuration/connections", params)),
        must(ctx.dq.GET("/api/backend/{tenant}/incidents", { params: { path: { tenant }, query: { limit: 1000 } } })),
      ]);
      const distinct = (values: string[]) => [...new Set(values)].sort();
      return {
        projects,
        connectionTypes: distinct(connections.map((c) => c.type)),
        policies: distinct(incidents.map((i) => i.alert_policy_id)),
      };
    },
    [],
    ctx.signOut,
  );
  const state = useLoad(
    async () => {
      const query = filters as never;
      const [summary, distribution, list] = await Promise.all([
        must(ctx.dq.GET("/api/backend/{tenant}/incidents/summary", { params: { path: { tenant }, query } })),
        must(ctx.dq.GET("/api/backend/{tenant}/incidents/distribution", { params: { path: { tenant }, query } })),
        must(
          ctx.dq.GET("/api/backend/{tenant}/incidents", {
            params: { path: { tenant }, query: { ...(filters as object), limit: 200 } as never },
          }),
        ),
      ]);
      return { summary, distribution, list };
    },
    [JSON.stringify(filters)],
    ctx.signOut,
  );
  return (
    <section aria-labelledby="incidents-h">
      <h1 id="incidents-h">Incidents</h1>
      <FilterForm
        projects={choices.data?.projects ?? []}
        connectionTypes={choices.data?.connectionTypes ?? []}
        policies={choices.data?.policies ?? []}
        onApply={setFilters}
      />
      <Status state={state}>
        {({ summary, distribution, list }) => (
          <>
            <section class="figures card" aria-label="Summary">
              <Figure label="Open" value={summary.open} />
              <Figure label="Opened in range" value={summary.total} />
              <Figure label="Closed" value={summary.closed} />
              <Figure label="Mean time to resolve (h)" value={summary.mean_time_to_resolve} />
              <Figure label="Previous MTTR (h)" value={summary.previous_mean_time_to_resolve} />
            </section>
            <section class="card">
              <StackedDays days={distribution.days} />
            </section>
            <section class="card" aria-label="Incident list">
              <Table headers={["Incident", "Asset", "Attribute", "State", "Severity", "Impact", "Alerts", "Opened"]}>
                {list.map((i) => (
                  <tr key={i.id}>
                    <td>
                      <a href={`#/incidents/${i.id}`}>
                        #{i.id} {i.policy_name}
                      </a>
                    </td>
                    <td>{i.source_name}</td>
                    <td>{i.attribute ?? "—"}</td>
                    <td>
                      <Badge value={i.state} />
                    </td>
                    <td>
                      <Badge value={i.severity} />
                    </td>
                    <td>{i.impact}</td>
                    <td class="num">{i.alert_count}</td>
                    <td>{fmtTime(i.opened_at)}</td>
                  </tr>
                ))}
                {list.length === 0 && (
                  <tr>
                    <td colSpan={8} class="muted">
                      No incidents match.
                    </td>
                  </tr>
                )}
              </Table>
            </section>
          </>
        )}
      </Status>
    </section>
  );
}

function Actions({ ctx, incident, done }: { ctx: Ctx; incident: Schemas["IncidentDetail"]; done: () => void }) {
  const tenant = ctx.session.tenant;
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const templates = useLoad(
    () => must(ctx.dq.GET("/{tenant}/configuration/integrations/tickets/template", { params: { path: { tenant } } })),
    [],
  );
  const act = async (run: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await run();
      done();
    } catch (e) {
      setError(e instanceof ProblemError ? e.detail : String(e));
    } finally {
      setBusy(false);
    }
  };
  const path = { tenant, incidentId: incident.id };
  const close = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const reason = (form.elements.namedItem("reason") as HTMLSelectElement).value as "FIXED";
    const note = (form.elements.namedItem("note") as HTMLInputElement).value.trim();
    void act(() =>
      must(
        ctx.dq.PATCH("/api/backend/{tenant}/incidents/{incidentId}", {
          params: { path },
          body: { state: "CLOSED", reason, ...(note ? { note } : {}) },
        }),
      ),
    );
  };
  const ticket = (e: Event) => {
    e.preventDefault();
    const id = Number(
      (e.currentTarget as HTMLFormElement).elements.namedItem("template_id") &&
        ((e.currentTarget as HTMLFormElement).elements.namedItem("template_id") as HTMLSelectElement).value,
    );
    void act(() =>
      must(
        ctx.dq.POST("/api/backend/{tenant}/incidents/{incidentId}/tickets", {
          params: { path },
          body: { template_id: id },
        }),
      ),
    );
  };
  return (
    <section class="card" aria-labelledby="actions-h">
      <h2 id="actions-h">Actions</h2>
      {error && <ErrorBox message={error} />}
      {incident.state === "OPEN" ? (
        <form onSubmit={close} class="row">
          <label>
            Reason
            <select name="reason" required>
              {CLOSE_REASONS.map(([v, l]) => (
                <option key={v} value={v}>
                  {l}
                </option>
              ))}
            </select>
          </label>
          <label>
            Note <input name="note" maxLength={2000} />
          </label>
          <button type="submit" disabled={busy}>
            Close incident
          </button>
        </form>
      ) : (
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            act(() =>
              must(
                ctx.dq.PATCH("/api/backend/{tenant}/incidents/{incidentId}", {
                  params: { path },
                  body: { state: "OPEN" },
                }),
              ),
            )
          }
        >
          Reopen incident
        </button>
      )}
      {incident.ticket ? (
        <p>
          Ticket{" "}
          {incident.ticket.url ? (
            <a href={incident.ticket.url} rel="noreferrer" target="_blank">
              {incident.ticket.key}
            </a>
          ) : (
            incident.ticket.key
          )}
        </p>
      ) : templates.data && templates.data.length > 0 ? (
        <form onSubmit={ticket} class="row">
          <label>
            Ticket template
            <select name="template_id">
              {templates.data.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={busy}>
            Create ticket
          </button>
        </form>
      ) : (
        <p class="muted">No ticket template yet: create one to open tickets from here.</p>
      )}
    </section>
  );
}

export function IncidentPage({ ctx, id }: { ctx: Ctx; id: number }) {
  const tenant = ctx.session.tenant;
  const state = useLoad(
    async () => {
      const incident = await must(
        ctx.dq.GET("/api/backend/{tenant}/incidents/{incidentId}", { params: { path: { tenant, incidentId: id } } }),
      );
      const refs = [...new Set(incident.history.flatMap((h) => h.alert_refs))].slice(0, 500);
      const alerts = refs.length
        ? await must(
            ctx.dq.POST("/api/backend/{tenant}/configuration/alerts/by_filters", {
              params: { path: { tenant } },
              body: { asset_id: incident.asset_id, alert_refs: refs },
            }),
          )
        : [];
      return { incident, alerts };
    },
    [id],
    ctx.signOut,
  );
  return (
    <DetailPage back={["#/incidents", "Incidents"]} labelledBy="incident-h" state={state}>
      {({ incident: i, alerts }) => {
        const described = new Map(alerts.map((a) => [a.id, a.description]));
        const last = i.metrics[i.metrics.length - 1];
        return (
          <>
            <h1 id="incident-h">
              #{i.id} {i.policy_name} on {i.source_name}
              {i.attribute ? `.${i.attribute}` : ""}
            </h1>
            <p>
              <Badge value={i.state} /> <Badge value={i.severity} /> impact {i.impact} · {i.tag} · opened{" "}
              {fmtTime(i.opened_at)}
              {i.close_reason && <> · closed as {i.close_reason}</>}
            </p>
            <Actions ctx={ctx} incident={i} done={state.reload} />
            {last && (
              <section class="card">
                <MetricPanel ctx={ctx} assetId={Number(i.asset_id)} metric={last.metric} highlight={last.job_id} />
              </section>
            )}
            <section class="card" aria-labelledby="alerts-h">
              <h2 id="alerts-h">Alerts</h2>
              <ul class="alerts">
                {i.metrics.map((m) => (
                  <li key={`${m.job_id}-${m.alert_id}`}>
                    <Badge value={m.priority} /> {fmtTime(m.metric_time)} —{" "}
                    {m.alert_id ? (described.get(m.alert_id) ?? m.metric) : "confirmed by a scan"}
                    <div class="muted">
                      {m.metric}: observed {fmtNum(m.observed as number)}, expected {explainExpected(m.expected)}
                    </div>
                    {m.investigation && m.investigation.length > 0 && (
                      <div>
                        Investigation:{" "}
                        {m.investigation
                          .map(
                            (v) =>
                              `${v.attribute} = ${v.value} (${Math.round(v.share_of_problem * 100)} % of the problem, lift ${fmtNum(v.lift)})`,
                          )
                          .join("; ")}
                      </div>
                    )}
                  </li>
                ))}
              </ul>
            </section>
            <section class="card" aria-labelledby="history-h">
              <h2 id="history-h">History</h2>
              <ol class="timeline">
                {i.history.map((h, n) => (
                  <li key={n}>
                    <time>{fmtTime(h.time)}</time>{" "}
                    {h.from_state ? `${h.from_state} → ${h.to_state}` : `opened (${h.to_state})`} by {h.actor}
                    {h.reason && <> · {h.reason}</>}
                    {h.note && <> · “{h.note}”</>}
                    {h.alert_refs.length > 0 && <span class="muted"> · {h.alert_refs.length} alert(s)</span>}
                  </li>
                ))}
              </ol>
            </section>
          </>
        );
      }}
    </DetailPage>
  );
}

function explainExpected(e: unknown): string {
  if (e && typeof e === "object" && "low" in e && "high" in e) {
    const b = e as { low: number; high: number };
    return `${fmtNum(b.low)} – ${fmtNum(b.high)}`;
  }
  return e === undefined || e === null ? "—" : typeof e === "string" ? e : JSON.stringify(e);
}
