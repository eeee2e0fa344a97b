import type { DqClient } from "../clients/ts";

/** An S3 connection in a project, through the typed client (uploads never reach its bucket). */
export async function s3Connection(dq: DqClient, tenant: string, projectId: number): Promise<number> {
  const res = await dq.POST("/api/backend/{tenant}/configuration/projects/{projectId}/connections", {
    params: { path: { tenant, projectId } },
    body: {
      name: "landing",
      type: "S3",
      payload: { bucket: "landing-zone" },
      credential: { type: "AWS", payload: { access_key: "AKIAEXAMPLE0001", secret_key: "aws-secret-key" } },
    },
  });
  if (!res.data) throw new Error(`create connection: ${res.response.status}`);
  return res.data.id;
}
