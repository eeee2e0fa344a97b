import { z } from "@hono/zod-openapi";
import { PROJECT_ROLES, TENANT_ROLES } from "../../db/schema";
import { Email } from "../params";

export const ProjectSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Project");

const name = z.string().trim().min(1).max(200);
const description = z.string().max(2000);

export const CreateProjectBody = z
  .strictObject({ name, description: description.default("") })
  .openapi("CreateProject");

export const UpdateProjectBody = z
  .strictObject({ name: name.optional(), description: description.optional() })
  .openapi("UpdateProject");

export const ProjectMemberSchema = z
  .object({ email: z.string(), role: z.enum(PROJECT_ROLES), created_at: z.string() })
  .openapi("ProjectMember");

export const AddProjectMemberBody = z
  .strictObject({ email: Email, role: z.enum(PROJECT_ROLES) })
  .openapi("AddProjectMember");

export const ChangeProjectMemberBody = z.strictObject({ role: z.enum(PROJECT_ROLES) }).openapi("ChangeProjectMember");

export const TenantMemberSchema = z
  .object({ email: z.string(), role: z.enum(TENANT_ROLES), created_at: z.string() })
  .openapi("TenantMember");

export const PutTenantMemberBody = z.strictObject({ role: z.enum(TENANT_ROLES) }).openapi("PutTenantMember");

export const EmailParam = Email.openapi({ param: { name: "email", in: "path" } });
