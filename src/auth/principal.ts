/** Who is calling. Users are identified by their lower-cased e-mail. */
export type Principal =
  /**
   * The platform administrator ("private cloud administrator"): ADMIN_API_KEY or a token minted
   * from it; `email` is the configured ADMIN_EMAIL, when there is one.
   */
  | { kind: "admin"; email?: string }
  /**
   * A deprecated tenant-scoped API key: tenant-admin rights in its tenant only; `email` is the
   * person who created the key, when it is known (keys created before it was recorded: not).
   */
  | { kind: "tenant_key"; tenantId: string; keyId: string; email?: string }
  /** A user, by a user-scoped key, a service token or an external OIDC token. */
  | { kind: "user"; email: string; keyId?: string };

/** The e-mail of the person behind the credential, when one is known. */
export function personEmail(p: Principal): string | undefined {
  return p.email;
}

/**
 * The name recorded as `created_by` for what this principal creates: the e-mail of the person
 * behind the credential; `platform-admin` or `api-key:<id>` only when no e-mail is known.
 */
export function actorName(p: Principal): string {
  if (p.email) return p.email;
  return p.kind === "admin" ? "platform-admin" : `api-key:${p.keyId}`;
}
