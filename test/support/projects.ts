/** Projects and their members, created through the API. */

import { admin, type Credential, call } from "./api";
import { expectStatus, unique } from "./unique";

/** Creates a project; returns its id. */
export async function createProject(tenant: string, as: Credential = admin): Promise<number> {
  const res = await call("POST", `/api/backend/${tenant}/configuration/projects`, {
    as,
    body: { name: unique("project") },
  });
  expectStatus(res, 201, "create project");
  return res.body.id;
}

/** Adds a user to a project with a role (the user joins the tenant as TENANT_MEMBER). */
export async function projectMember(tenant: string, projectId: number, email: string, role: string) {
  const res = await call("POST", `/api/backend/${tenant}/configuration/projects/${projectId}/members`, {
    as: admin,
    body: { email, role },
  });
  expectStatus(res, 201, "add project member");
}
