/**
 * Attribute kinds: what an attribute's values are, inferred from a scan's profile, so each policy
 * judges only what it fits (no mean of a payment code, no median of a location id).
 *
 * Rules, first match wins:
 * - the asset's timestamp attribute, or date/timestamp values → timestamp
 * - one of the asset's id_attributes → identifier
 * - booleans → code
 * - a name ending in a key word (id, key, uuid, guid: "PULocationID", "customer_id") → identifier
 *   when nearly every value is distinct (≥ 95 %), else code
 * - a name ending in a category word (code, type, status, category, class, kind) → code
 * - numbers whose name holds an amount word (cost, amount, price, total, speed, distance, delay…)
 *   → quantity, however few values they have (a cost that is 0 in most rows)
 * - integers: at most MAX_CODE_VALUES distinct values, each twice on average → code; nearly all distinct and dense
 *   (max − min < 2 × count) → identifier (a sequence); else quantity
 * - other numbers → quantity
 * - text: nearly all distinct → free text when long or with spaces, else identifier; long values
 *   (mean length > 40) → free text; else code
 */

import type { AttributeProfile } from "../contracts/profile";
import type { AttributeKind } from "../db/schema";
import { hasValues } from "./metrics";
import type { AssetRef } from "./types";

/** Integers with at most this many distinct values are codes (payment types, ratings, flags). */
export const MAX_CODE_VALUES = 20;

const KEY_WORDS = new Set(["id", "key", "uuid", "guid"]);
const CODE_WORDS = new Set(["code", "type", "status", "category", "class", "kind"]);
/** Words that name an amount: a number so named is a quantity however few values it has. */
const QUANTITY_WORDS = new Set([
  "amount",
  "cost",
  "price",
  "total",
  "sum",
  "revenue",
  "fee",
  "balance",
  "speed",
  "distance",
  "duration",
  "delay",
  "weight",
  "height",
  "length",
  "width",
]);

/** The words of a name: "PULocationID" → pu, location, id; "customer_id" → customer, id. */
function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

/** The kind of one attribute, from its profile in one scan. */
export function inferKind(
  a: AttributeProfile,
  asset: Pick<AssetRef, "id_attributes" | "timestamp_attribute">,
): AttributeKind {
  if (a.name === asset.timestamp_attribute) return "timestamp";
  if (a.inferred_type === "date" || a.inferred_type === "timestamp") return "timestamp";
  if (asset.id_attributes?.includes(a.name)) return "identifier";
  if (a.inferred_type === "boolean") return "code";
  const present = Math.max(0, a.count - a.nulls);
  const uniqueShare = present > 0 ? a.distinct / present : 0;
  const nearlyUnique = present >= 20 && uniqueShare >= 0.95;
  const last = words(a.name).at(-1) ?? "";
  if (KEY_WORDS.has(last)) return nearlyUnique ? "identifier" : "code";
  if (CODE_WORDS.has(last)) return "code";
  const numeric = a.inferred_type === "integer" || a.inferred_type === "number";
  if (numeric && words(a.name).some((w) => QUANTITY_WORDS.has(w))) return "quantity";
  if (a.inferred_type === "integer") {
    // A code's values repeat: 4 distinct values in 4 rows (a column that has just begun to fill)
    // say nothing of categories.
    if (a.distinct <= MAX_CODE_VALUES && present >= 2 * a.distinct) return "code";
    const span = typeof a.max === "number" && typeof a.min === "number" ? a.max - a.min : Number.POSITIVE_INFINITY;
    return nearlyUnique && span < 2 * present ? "identifier" : "quantity";
  }
  if (a.inferred_type === "number") return "quantity";
  const spaced = a.patterns.some((p) => p.pattern.includes(" "));
  if (nearlyUnique) return spaced || (a.mean_length ?? 0) > 40 ? "text" : "identifier";
  if ((a.mean_length ?? 0) > 40) return "text";
  return "code";
}

/** A stored kind: set by a user, or inferred from the scans (and from how many of them). */
export interface KnownKind {
  kind: AttributeKind;
  source: "inferred" | "user";
  /** The attribute's inferred type when the kind was inferred: a new type infers again. */
  type: string;
  /** Scans the inference has seen; it settles after SETTLE_SCANS. */
  scans: number;
}

/** Scans after which an inferred kind stops changing (the first scans may be small or odd). */
export const SETTLE_SCANS = 3;

/**
 * Every attribute's kind for this scan: the user's kind when set, the settled inferred kind when
 * its type did not change, else inferred from this profile.
 */
export function resolveKinds(
  attributes: readonly AttributeProfile[],
  asset: Pick<AssetRef, "id_attributes" | "timestamp_attribute">,
  known: Readonly<Record<string, KnownKind>>,
  user: Readonly<Record<string, AttributeKind>>,
): Record<string, KnownKind> {
  const out: Record<string, KnownKind> = {};
  for (const a of attributes) {
    const set = user[a.name];
    const before = known[a.name];
    if (set) {
      out[a.name] = { kind: set, source: "user", type: a.inferred_type, scans: (before?.scans ?? 0) + 1 };
    } else if (before && !hasValues(a)) {
      // A scan with no value of the attribute says nothing of its kind (nor of its type).
      out[a.name] = before;
    } else if (
      before &&
      before.source === "inferred" &&
      before.type === a.inferred_type &&
      before.scans >= SETTLE_SCANS
    ) {
      out[a.name] = { ...before, scans: before.scans + 1 };
    } else {
      const sameType = before?.type === a.inferred_type;
      out[a.name] = {
        kind: inferKind(a, asset),
        source: "inferred",
        type: a.inferred_type,
        scans: sameType ? (before?.scans ?? 0) + 1 : 1,
      };
    }
  }
  return out;
}
