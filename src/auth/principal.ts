/** Who is calling. Users are identified by their lower-cased e-mail. */
export type Principal =
  /** The platform administrator ("private cloud administrator"): ADMIN_API_KEY or a token minted from it. */
  | { kind: "admin" }
  /** A deprecated tenant-scoped API key: tenant-admin rights in its tenant only. */
  | { kind: "tenant_key"; tenantId: string; keyId: string }
  /** A user, by a user-scoped key, a service token or an external OIDC token. */
  | { kind: "user"; email: string; keyId?: string };

/** The name recorded as `created_by` for what this principal creates. */
export function actorName(p: Principal): string {
  switch (p.kind) {
    case "admin":
      return "platform-admin";
    case "tenant_key":
      return `api-key:${p.keyId}`;
    case "user":
      return p.email;
  }
}
