import { z } from "@hono/zod-openapi";
import { TICKET_STATUSES } from "../../db/schema";
import { JIRA_CUSTOM_FIELD_ID, JIRA_ID } from "../../integrations/jira";

const name = z.string().trim().min(1).max(200);
const description = z.string().max(2000);
const jiraId = (what: string, example: string) =>
  z
    .string()
    .trim()
    .min(1)
    .max(200)
    .regex(JIRA_ID, `must be a Jira ${what} id: digits only, e.g. "${example}"`)
    .openapi({ description: `Jira ${what} id (digits)`, example });

/** Scalars, arrays and objects, as Jira custom fields take them; null is refused (omit the field instead). */
const CustomFieldValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.array(z.unknown()),
  z.record(z.string(), z.unknown()),
]);
const CustomFields = z
  .record(
    z.string().max(200).regex(JIRA_CUSTOM_FIELD_ID, "must be a Jira custom field id, e.g. customfield_10010"),
    CustomFieldValue,
  )
  .openapi({
    description:
      'Jira custom fields by id, e.g. {"customfield_10010": "team-a"}; project, issue type, summary and ' +
      "description are set by the service and cannot be given here",
  });

const jiraFields = {
  jira_project_id: jiraId("project", "10000"),
  jira_issue_type_id: jiraId("issue type", "10004"),
  custom_fields: CustomFields.default({}),
};

export const JiraProps = z.strictObject(jiraFields).openapi("JiraTicketProps");

export const TicketTemplateSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    type: z.literal("JIRA"),
    props: z.object({
      jira_project_id: z.string(),
      jira_issue_type_id: z.string(),
      custom_fields: z.record(z.string(), z.unknown()),
    }),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("TicketTemplate");

export const CreateTicketTemplateBody = z
  .strictObject({
    name,
    description: description.default(""),
    type: z.literal("JIRA").openapi({ description: "Only JIRA is supported" }),
    props: JiraProps,
  })
  .openapi("CreateTicketTemplate", {
    example: {
      name: "data incident",
      type: "JIRA",
      props: { jira_project_id: "10000", jira_issue_type_id: "10004", custom_fields: {} },
    },
  });

/**
 * The PUT body of spec 4.9 is flat (name, description, jira_project_id, jira_issue_type_id,
 * custom_fields); the create shape (type + props) is accepted too. Either way the template is
 * replaced whole: an omitted description becomes "", omitted custom_fields become {}.
 */
export const UpdateTicketTemplateBody = z
  .strictObject({
    name,
    description: description.default(""),
    type: z.literal("JIRA").optional(),
    props: JiraProps.optional(),
    jira_project_id: jiraFields.jira_project_id.optional(),
    jira_issue_type_id: jiraFields.jira_issue_type_id.optional(),
    custom_fields: CustomFields.optional(),
  })
  .superRefine((b, ctx) => {
    const flat = ["jira_project_id", "jira_issue_type_id", "custom_fields"] as const;
    if (b.props) {
      for (const f of flat) {
        if (b[f] !== undefined)
          ctx.addIssue({ code: "custom", path: [f], message: "send it inside props, or omit props" });
      }
    } else {
      for (const f of ["jira_project_id", "jira_issue_type_id"] as const) {
        if (b[f] === undefined) ctx.addIssue({ code: "custom", path: [f], message: "is required" });
      }
    }
  })
  .transform((b) => ({
    name: b.name,
    description: b.description,
    type: "JIRA" as const,
    props: b.props ?? {
      jira_project_id: b.jira_project_id!,
      jira_issue_type_id: b.jira_issue_type_id!,
      custom_fields: b.custom_fields ?? {},
    },
  }))
  .openapi("UpdateTicketTemplate", {
    example: {
      name: "data incident",
      props: { jira_project_id: "10000", jira_issue_type_id: "10005", custom_fields: {} },
    },
  });

export const CreateTicketBody = z
  .strictObject({ template_id: z.number().int().positive() })
  .openapi("CreateTicket", { example: { template_id: 1 } });

export const TicketRequestSchema = z
  .object({
    request_id: z.string(),
    incident_id: z.number().int(),
    template_id: z.number().int(),
    status: z.enum(TICKET_STATUSES).openapi({ description: "PENDING is retried with backoff; FAILED is final" }),
    attempts: z.number().int(),
    ticket_key: z.string().nullable(),
    error: z.string().nullable().openapi({ description: "Jira's error messages of the last attempt" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("TicketRequest");
