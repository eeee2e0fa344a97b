import { z } from "@hono/zod-openapi";

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
  .openapi("CreateProject", { example: { name: "analytics", description: "Warehouse tables of the analytics team" } });

export const UpdateProjectBody = z
  .strictObject({ name: name.optional(), description: description.optional() })
  .openapi("UpdateProject", { example: { description: "Warehouse and lake tables of the analytics team" } });
