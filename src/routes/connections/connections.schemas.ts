import { z } from "@hono/zod-openapi";
import {
  CONNECTION_PAYLOADS,
  CredentialInput,
  credentialBasis,
  docsByType,
  requiredCredentialType,
} from "../../connections";
import { CONNECTION_TYPES, type ConnectionType } from "../../db/schema";
import { IntId, ProjectParams, TenantParams } from "../params";

// ---- Request bodies ----

const name = z.string().trim().min(1).max(200);

const definitionOf = <T extends Exclude<ConnectionType, "UPLOAD">>(type: T) =>
  z.strictObject({
    name,
    type: z.literal(type),
    payload: CONNECTION_PAYLOADS[type],
    credential: CredentialInput,
  });

/** An UPLOAD connection: a name, nothing else (its payload is empty, and it takes no credential). */
const uploadDefinition = z.strictObject(
  {
    name,
    type: z.literal("UPLOAD"),
    payload: CONNECTION_PAYLOADS.UPLOAD.default({}),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys" && issue.keys.includes("credential")
        ? "an UPLOAD connection takes no credential: its data arrives by upload, it reaches no store"
        : undefined,
  },
);

/** One definition per connection type of the registry, in the order of CONNECTION_TYPES. */
const [first, ...rest] = CONNECTION_TYPES.filter((t) => t !== "UPLOAD").map(definitionOf);

export const CreateConnectionBody = z
  .discriminatedUnion("type", [first!, ...rest, uploadDefinition])
  .superRefine((body, ctx) => {
    if (body.type === "UPLOAD") return;
    const need = requiredCredentialType(body.type, body.payload);
    if (body.credential.type !== need) {
      ctx.addIssue({
        code: "custom",
        path: ["credential", "type"],
        message: `must be ${need} for a ${body.type} connection${credentialBasis(body.type, body.payload)}`,
      });
    }
  })
  .openapi("CreateConnection", {
    example: {
      name: "landing-zone",
      type: "S3",
      payload: { bucket: "landing-zone" },
      credential: {
        type: "AWS",
        payload: { access_key: "AKIAIOSFODNN7EXAMPLE", secret_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
      },
    },
  });
export type CreateConnectionInput = z.infer<typeof CreateConnectionBody>;

export const UpdateConnectionBody = z
  .strictObject({
    name: name.optional(),
    type: z.enum(CONNECTION_TYPES).optional(),
    payload: z.record(z.string(), z.unknown()).optional().openapi({
      description:
        "Replaces the payload; checked against the connection's (new) type as in CreateConnection. Required when the type changes (but to UPLOAD, whose payload is empty).",
    }),
    credential: CredentialInput.optional().openapi({
      description:
        "Replaces the credential. Required when the type changes; refused for UPLOAD, which holds none (a change to UPLOAD drops the old one).",
    }),
  })
  .openapi("UpdateConnection", { example: { name: "landing-zone-eu" } });
export type UpdateConnectionInput = z.infer<typeof UpdateConnectionBody>;

// ---- Responses and parameters ----

export const ConnectionSchema = z
  .object({
    id: z.number().int(),
    project_id: z.number().int().nullable().openapi({ description: "The project; null for a GLOBAL connection" }),
    name: z.string(),
    scope: z.enum(["PROJECT", "GLOBAL"]),
    created_by: z.string(),
    created_at: z.string().openapi({ description: "ISO 8601, UTC" }),
    type: z.enum(CONNECTION_TYPES),
    payload: z.record(z.string(), z.unknown()).openapi({ description: "As given for the type (see CreateConnection)" }),
    db_type: z
      .string()
      .nullable()
      .openapi({
        description: `Database type derived from the connection: ${docsByType((m) => m.docs.dbType)
          .map((d) => `${d.types.join(", ")} → ${d.text}`)
          .join("; ")}`,
      }),
  })
  .openapi("Connection", { description: "A connection; its credential is never returned" });

const connectionId = IntId("connectionId");
export const TenantConnectionParams = TenantParams.extend({ connectionId });
export const ProjectConnectionParams = ProjectParams.extend({ connectionId });
