import { and, eq } from "drizzle-orm";
import type { Db } from "../db";
import { type AttributeKind, assetPolicies } from "../db/schema";
import { DEFAULT_ADAPT_AFTER, DEFAULT_AUTO_CLOSE_AFTER } from "../detection/incident-planner";
import { type PolicyOverrides, PolicyOverridesSchema, resolvePolicies } from "../detection/policies";
import { nowIso } from "../lib/time";

type AssetRef = { tenantId: string; id: number };

/**
 * The asset's policies as they apply: defaults, overrides, the incident auto-close and adoption
 * thresholds, and the attribute kinds a user set.
 */
export async function assetPolicySettings(db: Db, asset: AssetRef) {
  const row = await db.query.assetPolicies.findFirst({
    where: and(eq(assetPolicies.tenantId, asset.tenantId), eq(assetPolicies.assetId, asset.id)),
  });
  const parsed = row ? PolicyOverridesSchema.safeParse(row.overrides) : undefined;
  const overrides: PolicyOverrides = parsed?.success ? parsed.data : {};
  const resolved = resolvePolicies(overrides, row?.notify);
  return {
    notify: row?.notify !== false,
    auto_close_after: row?.autoCloseAfter ?? DEFAULT_AUTO_CLOSE_AFTER,
    adapt_after: row?.adaptAfter ?? DEFAULT_ADAPT_AFTER,
    attribute_kinds: (row?.attributeKinds ?? {}) as Record<string, AttributeKind>,
    overrides,
    policies: Object.values(resolved).map((p) => ({
      id: p.id,
      name: p.name,
      description: p.description,
      dimension: p.dimension,
      kind: p.kind,
      enabled: p.enabled,
      notify: p.notify,
      priority: p.priority,
      params: p.params as Record<string, unknown>,
    })),
  };
}

/** Replaces the asset's overrides, thresholds, attribute kinds and notification switch (each only when sent). */
export async function putAssetPolicySettings(
  db: Db,
  asset: AssetRef,
  input: {
    overrides?: PolicyOverrides;
    auto_close_after?: number;
    adapt_after?: number;
    attribute_kinds?: Record<string, AttributeKind>;
    notify?: boolean;
  },
) {
  const current = await db.query.assetPolicies.findFirst({
    where: and(eq(assetPolicies.tenantId, asset.tenantId), eq(assetPolicies.assetId, asset.id)),
  });
  const overrides = input.overrides ?? (current?.overrides as PolicyOverrides | undefined) ?? {};
  const settings = {
    overrides,
    autoCloseAfter: input.auto_close_after ?? current?.autoCloseAfter ?? null,
    adaptAfter: input.adapt_after ?? current?.adaptAfter ?? null,
    attributeKinds: input.attribute_kinds ?? current?.attributeKinds ?? null,
    notify: input.notify ?? current?.notify ?? null,
    updatedAt: nowIso(),
  };
  await db
    .insert(assetPolicies)
    .values({ assetId: asset.id, tenantId: asset.tenantId, ...settings })
    .onConflictDoUpdate({ target: assetPolicies.assetId, set: settings });
  return assetPolicySettings(db, asset);
}
