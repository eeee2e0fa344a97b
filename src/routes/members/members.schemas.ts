import { z } from "@hono/zod-openapi";
import { PROJECT_ROLES, TENANT_ROLES } from "../../db/schema";
import { Email } from "../params";

export const ProjectMemberSchema = z
  .object({ email: z.string(), role: z.enum(PROJECT_ROLES), created_at: z.string() })
  .openapi("ProjectMember");

export const AddProjectMemberBody = z
  .strictObject({ email: Email, role: z.enum(PROJECT_ROLES) })
  .openapi("AddProjectMember", { example: { email: "ada@example.com", role: "PROJECT_EDITOR" } });

export const ChangeProjectMemberBody = z
  .strictObject({ role: z.enum(PROJECT_ROLES) })
  .openapi("ChangeProjectMember", { example: { role: "PROJECT_ADMIN" } });

export const TenantMemberSchema = z
  .object({ email: z.string(), role: z.enum(TENANT_ROLES), created_at: z.string() })
  .openapi("TenantMember");

export const PutTenantMemberBody = z
  .strictObject({ role: z.enum(TENANT_ROLES) })
  .openapi("PutTenantMember", { example: { role: "TENANT_MEMBER" } });

export const EmailParam = Email.openapi({ param: { name: "email", in: "path" } });
