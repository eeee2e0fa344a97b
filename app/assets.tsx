/** Assets: the list per project (score, sparkline, last scan, open incidents) and an asset's page. */
import { useEffect, useState } from "preact/hooks";
import type { DqClient } from "../clients/ts";
import { must, type Schemas, type Session } from "./api";
import { MetricChart, ScoreChart, Sparkline } from "./charts";
import { PolicySettings } from "./settings";
import { Badge, DetailPage, fmtNum, fmtTime, type Loaded, Status, Table, useLoad } from "./ui";

interface Ctx {
  dq: DqClient;
  session: Session;
  signOut: () => void;
}

type AssetRow = Schemas["Asset"] & {
  scores: Schemas["DqScore"][];
  lastScan?: Schemas["ScanJob"];
  openIncidents: number;
};

async function loadAssets({ dq, session }: Ctx) {
  const tenant = session.tenant;
  const [projects, incidents] = await Promise.all([
    must(dq.GET("/api/backend/{tenant}/configuration/projects", { params: { path: { tenant } } })),
    must(dq.GET("/api/backend/{tenant}/incidents", { params: { path: { tenant }, query: { limit: 1000 } } })),
  ]);
  const open = new Map<string, number>();
  for (const i of incidents) if (i.state === "OPEN") open.set(i.asset_id, (open.get(i.asset_id) ?? 0) + 1);
  return Promise.all(
    projects.map(async (p) => {
      const assets = await must(
        dq.GET("/api/backend/{tenant}/configuration/projects/{projectId}/assets", {
          params: { path: { tenant, projectId: p.id } },
        }),
      );
      const rows: AssetRow[] = await Promise.all(
        assets.map(async (a) => {
          const path = { tenant, assetId: a.id };
          const [scores, scans] = await Promise.all([
            must(
              dq.GET("/api/backend/{tenant}/configuration/assets/{assetId}/dq_score/history", {
                params: { path, query: { limit: 30 } },
              }),
            ),
            must(
              dq.GET("/api/backend/{tenant}/configuration/assets/{assetId}/scans", {
                params: { path, query: { limit: 1 } },
              }),
            ),
          ]);
          return { ...a, scores, lastScan: scans[0], openIncidents: open.get(String(a.id)) ?? 0 };
        }),
      );
      return { project: p, assets: rows };
    }),
  );
}

export function AssetsPage(ctx: Ctx) {
  const state = useLoad(() => loadAssets(ctx), [ctx.session.token], ctx.signOut);
  return (
    <section aria-labelledby="assets-h">
      <h1 id="assets-h">Assets</h1>
      <Status state={state}>
        {(groups) =>
          groups.length === 0 ? (
            <p class="muted">No projects yet.</p>
          ) : (
            groups.map(({ project, assets }) => (
              <section key={project.id} class="card">
                <h2>Project {project.name}</h2>
                <Table headers={["Asset", "Type", "DQ score", "History", "Last scan", "Open incidents"]}>
                  {assets.map((a) => (
                    <tr key={a.id}>
                      <td>
                        <a href={`#/assets/${project.id}/${a.id}`}>{a.name}</a>
                      </td>
                      <td>{a.type}</td>
                      <td class="num">{a.scores[0] ? fmtNum(Math.round(a.scores[0].overall)) : "—"}</td>
                      <td>
                        <Sparkline
                          values={[...a.scores].reverse().map((s) => s.overall)}
                          label={`DQ score history of ${a.name}`}
                        />
                      </td>
                      <td>{a.lastScan ? <Badge value={a.lastScan.status} /> : "never"}</td>
                      <td class="num">{a.openIncidents}</td>
                    </tr>
                  ))}
                  {assets.length === 0 && (
                    <tr>
                      <td colSpan={6} class="muted">
                        No assets in this project.
                      </td>
                    </tr>
                  )}
                </Table>
              </section>
            ))
          )
        }
      </Status>
    </section>
  );
}

const PAGE = 50;

function Attributes({ attributes }: { attributes: Schemas["AssetAttribute"][] }) {
  const [page, setPage] = useState(0);
  const [filter, setFilter] = useState("");
  const shown = attributes.filter((a) => a.name.toLowerCase().includes(filter.toLowerCase()));
  const pages = Math.max(1, Math.ceil(shown.length / PAGE));
  const at = Math.min(page, pages - 1);
  return (
    <section class="card" aria-labelledby="attrs-h">
      <h2 id="attrs-h">Attributes ({attributes.length})</h2>
      <label>
        Filter attributes{" "}
        <input
          type="search"
          value={filter}
          onInput={(e) => {
            setFilter(e.currentTarget.value);
            setPage(0);
          }}
        />
      </label>
      <Table headers={["Name", "Type", "Kind", "Rows", "Nulls", "Distinct", "Min", "Max", "Mean"]}>
        {shown.slice(at * PAGE, (at + 1) * PAGE).map((a) => (
          <tr key={a.name}>
            <td>{a.name}</td>
            <td>{a.type}</td>
            <td>{a.kind ?? "—"}</td>
            <td class="num">{fmtNum(a.stats?.count)}</td>
            <td class="num">{fmtNum(a.stats?.nulls)}</td>
            <td class="num">{fmtNum(a.stats?.distinct)}</td>
            <td class="num">{fmtNum(a.stats?.min)}</td>
            <td class="num">{fmtNum(a.stats?.max)}</td>
            <td class="num">{fmtNum(a.stats?.mean)}</td>
          </tr>
        ))}
      </Table>
      {pages > 1 && (
        <nav class="pager" aria-label="Attribute pages">
          <button type="button" disabled={at === 0} onClick={() => setPage(at - 1)}>
            Previous
          </button>
          <span>
            Page {at + 1} of {pages}
          </span>
          <button type="button" disabled={at >= pages - 1} onClick={() => setPage(at + 1)}>
            Next
          </button>
        </nav>
      )}
    </section>
  );
}

function Scans({ ctx, assetId }: { ctx: Ctx; assetId: number }) {
  const path = { tenant: ctx.session.tenant, assetId };
  const state = useLoad(
    () =>
      must(
        ctx.dq.GET("/api/backend/{tenant}/configuration/assets/{assetId}/scans", {
          params: { path, query: { limit: 20 } },
        }),
      ),
    [assetId],
    ctx.signOut,
  );
  const running = state.data?.some((s) => s.status === "QUEUED" || s.status === "RUNNING");
  useEffect(() => {
    if (!running) return;
    const t = setTimeout(state.reload, 2000);
    return () => clearTimeout(t);
  }, [running, state.data]);
  return (
    <section class="card" aria-labelledby="scans-h">
      <h2 id="scans-h">Scans {running && <span class="muted">(updating)</span>}</h2>
      <Status state={state}>
        {(scans) => (
          <Table headers={["Job", "Status", "Progress", "Rows", "Created", "Took"]}>
            {scans.map((s) => (
              <tr key={s.job_id}>
                <td class="mono">{s.job_id.slice(0, 12)}</td>
                <td>
                  <Badge value={s.status} />
                  {s.error && <span class="muted"> {s.error}</span>}
                </td>
                <td>
                  <progress
                    max={1}
                    value={s.status === "SUCCEEDED" ? 1 : (s.progress.fraction ?? undefined)}
                    aria-label={`Progress of ${s.job_id}`}
                  />
                </td>
                <td class="num">{fmtNum(s.progress.rows)}</td>
                <td>{fmtTime(s.created_at)}</td>
                <td class="num">{s.duration_ms === null ? "—" : `${fmtNum(s.duration_ms / 1000)} s`}</td>
              </tr>
            ))}
          </Table>
        )}
      </Status>
    </section>
  );
}

/** One metric's chart, loaded on its own. */
export function MetricPanel({
  ctx,
  assetId,
  metric,
  highlight,
}: {
  ctx: Ctx;
  assetId: number;
  metric: string;
  highlight?: string;
}) {
  const state = useLoad(
    () =>
      must(
        ctx.dq.GET("/api/backend/{tenant}/configuration/assets/{assetId}/metrics/history", {
          params: { path: { tenant: ctx.session.tenant, assetId }, query: { metric } },
        }),
      ),
    [assetId, metric],
    ctx.signOut,
  );
  return (
    <Status state={state}>{(h) => <MetricChart metric={metric} points={h.points} highlight={highlight} />}</Status>
  );
}

function Metrics({ ctx, assetId, attributes }: { ctx: Ctx; assetId: number; attributes: string[] }) {
  const [attribute, setAttribute] = useState("");
  const state: Loaded<Schemas["MetricSummary"][]> = useLoad(
    () =>
      must(
        ctx.dq.GET("/api/backend/{tenant}/configuration/assets/{assetId}/metrics", {
          params: { path: { tenant: ctx.session.tenant, assetId }, query: attribute ? { attribute } : {} },
        }),
      ),
    [assetId, attribute],
    ctx.signOut,
  );
  return (
    <section class="card" aria-labelledby="metrics-h">
      <h2 id="metrics-h">Metrics</h2>
      <label>
        Metrics of{" "}
        <select value={attribute} onChange={(e) => setAttribute(e.currentTarget.value)}>
          <option value="">the asset</option>
          {attributes.map((a) => (
            <option key={a} value={a}>
              attribute {a}
            </option>
          ))}
        </select>
      </label>
      <Status state={state}>
        {(metrics) =>
          metrics.length === 0 ? (
            <p class="muted">No metrics yet: scan the asset first.</p>
          ) : (
            <div class="grid">
              {metrics
                .filter((m) => !m.metric.includes(":value:") && !m.metric.includes(":pattern:"))
                .map((m) => (
                  <MetricPanel key={m.metric} ctx={ctx} assetId={assetId} metric={m.metric} />
                ))}
            </div>
          )
        }
      </Status>
    </section>
  );
}

export function AssetPage({ ctx, projectId, assetId }: { ctx: Ctx; projectId: number; assetId: number }) {
  const tenant = ctx.session.tenant;
  const state = useLoad(
    async () => {
      const path = { tenant, projectId, assetId };
      const [asset, scores] = await Promise.all([
        must(
          ctx.dq.GET("/api/backend/{tenant}/configuration/projects/{projectId}/assets/{assetId}", {
            params: { path, query: { with_attributes: "true" } },
          }),
        ),
        must(
          ctx.dq.GET("/api/backend/{tenant}/configuration/assets/{assetId}/dq_score/history", {
            params: { path: { tenant, assetId }, query: { limit: 200 } },
          }),
        ),
      ]);
      return { asset, scores };
    },
    [projectId, assetId],
    ctx.signOut,
  );
  return (
    <DetailPage back={["#/assets", "Assets"]} labelledBy="asset-h" state={state}>
      {({ asset, scores }) => (
        <>
          <h1 id="asset-h">{asset.name}</h1>
          <p class="muted">
            {asset.type} · created {fmtTime(asset.created_at)} by {asset.created_by}
            {scores[0] && <> · DQ score {Math.round(scores[0].overall)}</>}
          </p>
          <section class="card">
            <ScoreChart scores={scores} />
          </section>
          <Metrics ctx={ctx} assetId={assetId} attributes={(asset.attributes ?? []).map((a) => a.name)} />
          <Scans ctx={ctx} assetId={assetId} />
          <Attributes attributes={asset.attributes ?? []} />
          <PolicySettings ctx={ctx} assetId={assetId} />
        </>
      )}
    </DetailPage>
  );
}
