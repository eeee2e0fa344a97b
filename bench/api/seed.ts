/** The tenant bench/api's runs read: shared by run.ts (through wrangler dev) and in-process.ts. */

/** Sends one API request and answers its JSON body; throws on a status other than 2xx. */
export type ApiCall = (
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
) => Promise<unknown>;

/** Users the load is spread over: each has its own rate budget (1,200 requests a minute). */
export const USERS = 60;

/**
 * One tenant, a project of 20 assets, and USERS users who are tenant members and project admins,
 * each with a bearer token (the heaviest authentication path).
 */
export async function seedTenant(call: ApiCall, adminKey: string) {
  const admin = { "X-SVC-Key": adminKey };
  const tenant = "bench-api";
  await call("PUT", `/backend/private/configuration/tenants/${tenant}`, admin, { name: "Bench" });
  const base = `/api/backend/${tenant}/configuration`;
  const project = (await call("POST", `${base}/projects`, admin, { name: "analytics" })) as { id: number };
  const connection = (await call("POST", `${base}/projects/${project.id}/connections`, admin, {
    name: "lake",
    type: "S3",
    payload: { bucket: "bench-lake" },
    credential: { type: "AWS", payload: { access_key: "AKIABENCH", secret_key: "bench-secret" } },
  })) as { id: number };
  let assetId = 0;
  for (let i = 0; i < 20; i++) {
    const asset = (await call("POST", `${base}/projects/${project.id}/assets`, admin, {
      name: `orders_${i}`,
      type: "S3",
      payload: { path: `orders/${i}/*.csv`, format: "csv" },
      connection_id: connection.id,
    })) as { id: number };
    assetId = asset.id;
  }
  const tokens: string[] = [];
  for (let i = 0; i < USERS; i++) {
    const user = `reader${i}@bench.example`;
    await call("PUT", `${base}/members/${user}`, admin, { role: "TENANT_MEMBER" });
    await call("POST", `${base}/projects/${project.id}/members`, admin, { email: user, role: "PROJECT_ADMIN" });
    tokens.push(((await call("POST", "/auth/token", admin, { user })) as { access_token: string }).access_token);
  }
  return { tenant, projectId: project.id, assetId, tokens };
}
