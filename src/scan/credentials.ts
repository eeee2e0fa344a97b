import { type ConnectionCredential, openConnectionCredential } from "../catalog/connections";
import type { ConnectionRow } from "../db/schema";
import { secretBox } from "../lib/crypto";
import { ConnectorError } from "./connectors/types";

/**
 * The opened credential of a connection for a scan: a credential that cannot be opened (its
 * encryption key was removed, or the row was tampered with) is a connector error the user can
 * read, not an internal one.
 */
export async function openCredential(
  env: { ENCRYPTION_KEYS: string },
  row: Pick<ConnectionRow, "id" | "tenantId" | "credentialType" | "credentialSecret">,
): Promise<ConnectionCredential> {
  try {
    return await openConnectionCredential(secretBox(env.ENCRYPTION_KEYS), row);
  } catch {
    throw new ConnectorError(
      `the credential of connection ${row.id} cannot be decrypted: set it again (PUT the connection with a credential)`,
      "invalid",
    );
  }
}
