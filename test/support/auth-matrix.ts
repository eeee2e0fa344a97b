import { describe, expect, it } from "vitest";
import { type Credential, call } from "./api";
import { createProject, projectMember } from "./projects";
import { createTenant, tenantKey, tenantMember } from "./tenants";
import { forgeToken, userToken } from "./tokens";
import { unique } from "./unique";

/** The least role a route needs; everything below it is refused. */
export type NeededRole =
  | "PLATFORM_ADMIN"
  | "USER"
  | "TENANT_ADMIN"
  | "TENANT_MEMBER"
  | "PROJECT_VIEWER"
  | "PROJECT_EDITOR"
  | "PROJECT_ADMIN";

/** A tenant with a project and one user per role, plus another tenant's key. */
export interface MatrixWorld {
  tenant: string;
  projectId: number;
  users: {
    tenantAdmin: Credential;
    tenantMember: Credential;
    viewer: Credential;
    editor: Credential;
    projectAdmin: Credential;
    /** A member of the tenant but not of the project. */
    outsider: Credential;
  };
  otherTenantKey: Credential;
}

/** Builds the world of the matrix: real tenants, project, memberships and tokens, through the API. */
export async function createMatrixWorld(): Promise<MatrixWorld> {
  const tenant = await createTenant();
  const other = await createTenant();
  const projectId = await createProject(tenant);
  const email = (role: string) => `${unique(role)}@example.com`;
  const [ta, tm, v, e, pa, o] = ["tadmin", "tmember", "viewer", "editor", "padmin", "outsider"].map(email) as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  await tenantMember(tenant, ta, "TENANT_ADMIN");
  await tenantMember(tenant, tm, "TENANT_MEMBER");
  await tenantMember(tenant, o, "TENANT_MEMBER");
  await projectMember(tenant, projectId, v, "PROJECT_VIEWER");
  await projectMember(tenant, projectId, e, "PROJECT_EDITOR");
  await projectMember(tenant, projectId, pa, "PROJECT_ADMIN");
  return {
    tenant,
    projectId,
    users: {
      tenantAdmin: await userToken(ta),
      tenantMember: await userToken(tm),
      viewer: await userToken(v),
      editor: await userToken(e),
      projectAdmin: await userToken(pa),
      outsider: await userToken(o),
    },
    otherTenantKey: await tenantKey(other),
  };
}

export interface MatrixRoute<X> {
  method: string;
  /** The path, built from the world and the route's own fixtures. */
  path: (w: MatrixWorld, x: X) => string;
  /** A valid body, if the route takes one: so a refusal is about the caller, not the body. */
  body?: (w: MatrixWorld, x: X) => unknown;
  role: NeededRole;
}

/** Callers who must be refused, with the status they must get, for a route needing `role`. */
function refusals(w: MatrixWorld, role: NeededRole): Array<[string, Credential, number]> {
  const { users } = w;
  switch (role) {
    case "PLATFORM_ADMIN":
      return [
        ["a tenant admin", users.tenantAdmin, 403],
        ["a tenant key", w.otherTenantKey, 403],
      ];
    case "USER":
      return [["a tenant-scoped key (no user identity)", w.otherTenantKey, 403]];
    case "TENANT_ADMIN":
      return [
        ["another tenant's key", w.otherTenantKey, 404],
        ["a tenant member", users.tenantMember, 403],
      ];
    case "TENANT_MEMBER":
      return [["another tenant's key", w.otherTenantKey, 404]];
    case "PROJECT_VIEWER":
      return [
        ["another tenant's key", w.otherTenantKey, 404],
        ["a tenant member outside the project", users.outsider, 404],
      ];
    case "PROJECT_EDITOR":
      return [
        ["another tenant's key", w.otherTenantKey, 404],
        ["a tenant member outside the project", users.outsider, 404],
        ["a project viewer", users.viewer, 403],
      ];
    case "PROJECT_ADMIN":
      return [
        ["another tenant's key", w.otherTenantKey, 404],
        ["a tenant member outside the project", users.outsider, 404],
        ["a project editor", users.editor, 403],
      ];
  }
}

/**
 * The security cases every authenticated route must pass: no credential, bad, expired and
 * wrongly-signed credentials (401), another tenant (404), too small a role (403). Each refused
 * call is a problem+json and changes nothing the route could change (checked by the caller's
 * happy-path tests, which run after).
 */
export function describeAuthMatrix(title: string, routes: MatrixRoute<undefined>[]): void;
export function describeAuthMatrix<X>(
  title: string,
  fixtures: (w: MatrixWorld) => Promise<X>,
  routes: MatrixRoute<NoInfer<X>>[],
): void;
export function describeAuthMatrix<X>(
  title: string,
  fixturesOrRoutes: ((w: MatrixWorld) => Promise<X>) | MatrixRoute<X>[],
  maybeRoutes?: MatrixRoute<X>[],
): void {
  const fixtures = typeof fixturesOrRoutes === "function" ? fixturesOrRoutes : async () => undefined as X;
  const routes = typeof fixturesOrRoutes === "function" ? maybeRoutes! : fixturesOrRoutes;
  describe(`${title}: auth matrix`, () => {
    let world: MatrixWorld;
    let x: X;
    const ready = (async () => {
      world = await createMatrixWorld();
      x = await fixtures(world);
    })();

    for (const route of routes) {
      const label = `${route.method} ${route.path(PLACEHOLDER_WORLD, placeholders as X)}`;
      const send = (as: Credential) =>
        call(route.method, route.path(world, x), { as, body: route.body?.(world, x) ?? bodyless(route.method) });

      it(`${label}: 401 without or with bad credentials`, async () => {
        await ready;
        const expired = await forgeToken(
          { act: "admin", sub: "admin" },
          { expiresIn: Math.floor(Date.now() / 1000) - 60 },
        );
        const wrongKey = await forgeToken(
          { act: "admin", sub: "admin" },
          { secret: "another-secret-of-32-characters-xx" },
        );
        const noneAlg = `${btoa(JSON.stringify({ alg: "none", typ: "JWT" }))}.${btoa(
          JSON.stringify({ iss: "dq-monitor", aud: "dq-monitor-api", act: "admin", sub: "admin", exp: 4e9 }),
        )}.`.replaceAll("=", "");
        const cases: Array<[string, Credential]> = [
          ["no credential", undefined],
          ["an unknown API key", { key: "dqm_thisKeyDoesNotExist0123456789abcdefghij" }],
          ["a garbage token", { token: "not.a.jwt" }],
          ["an expired token", { token: expired }],
          ["a token signed with another key", { token: wrongKey }],
          ["an unsigned (alg none) token", { token: noneAlg }],
        ];
        for (const [what, as] of cases) {
          const res = await send(as);
          expect(res.status, `${label} with ${what}`).toBe(401);
          expect(res.headers.get("content-type")).toBe("application/problem+json");
        }
      });

      it(`${label}: refuses callers below ${route.role}`, async () => {
        await ready;
        for (const [who, as, status] of refusals(world, route.role)) {
          const res = await send(as);
          expect(res.status, `${label} as ${who}`).toBe(status);
          expect(res.body.code).toBe(status === 404 ? "not_found" : "forbidden");
        }
      });
    }
  });
}

/** A world and fixtures whose values are their own names, to label tests with the path template. */
const PLACEHOLDER_WORLD = { tenant: "{tenant}", projectId: "{projectId}" } as unknown as MatrixWorld;
const placeholders = new Proxy({}, { get: (_t, key) => `{${String(key)}}` });

/** Bodies for methods that take one, so a refusal never comes from a missing body. */
function bodyless(method: string): unknown {
  return method === "GET" || method === "DELETE" ? undefined : {};
}
