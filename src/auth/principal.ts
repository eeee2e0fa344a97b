/** Who is calling. Users are identified by their lower-cased e-mail. */
export type Principal =
  /**
   * The platform administrator ("private cloud administrator"): ADMIN_API_KEY or a token minted
   * from it; `email` is the configured ADMIN_EMAIL, when there is one.
   */
  | { kind: "admin"; email?: string }
  /**
   * A deprecated tenant-scoped API key: tenant-admin rights in its tenant only; `email` is the
   * person who created the key, when it is known (for a key the platform administrator made:
   * ADMIN_EMAIL, when it is set); `madeByAdmin` when the platform administrator made it.
   */
  | { kind: "tenant_key"; tenantId: string; keyId: string; email?: string; madeByAdmin?: boolean }
  /** A user, by a user-scoped key, a service token or an external OIDC token. */
  | { kind: "user"; email: string; keyId?: string };

/** The name of the platform administrator where no ADMIN_EMAIL is configured. */
export const PLATFORM_ADMIN = "platform-admin";

/** The e-mail of the person behind the credential, when one is known. */
export function personEmail(p: Principal): string | undefined {
  return p.email;
}

/**
 * The name recorded as `created_by` for what this principal creates: the e-mail of the person
 * behind the credential. Without one: `platform-admin` for the administrator and for the tenant
 * keys it made; `api-key:<id>` for a tenant key whose maker was never recorded.
 */
export function actorName(p: Principal): string {
  if (p.email) return p.email;
  if (p.kind === "admin" || (p.kind === "tenant_key" && p.madeByAdmin)) return PLATFORM_ADMIN;
  return `api-key:${p.keyId}`;
}
