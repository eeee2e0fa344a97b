/** UPLOAD: data that arrives only in uploaded batches; it reaches no store and holds no credential. */

import { z } from "zod";
import { defineConnection } from "./module";

/** An UPLOAD connection reaches no store: its assets' data arrives only in uploaded batches. */
export const UploadPayload = z.strictObject({}).meta({
  id: "UploadPayload",
  description:
    "Empty: an UPLOAD connection has no address; its assets' batches are uploaded to POST /v2/{tenant}/sources/{id}/batch_data",
});

export const upload = defineConnection({
  type: "UPLOAD",
  payload: UploadPayload,
  credentialType: () => "NONE",
  // No address, and no credential to send to one.
  changedAddress: () => [],
  dbType: () => null,
  /** Nothing: each batch arrives by upload, in the request that sends it (its format from its Content-Type). */
  asset: z.strictObject({}),
  docs: {
    asset: "{} (may be left out: each batch arrives by upload, its format from its Content-Type)",
    dbType: "null",
  },
  noObjectStore: "an UPLOAD connection has no store of its own: each batch is read where its upload stored it",
  noSparkSource: "an UPLOAD asset's batches are scanned in the Worker as they arrive",
});
