import { defineConfig } from "drizzle-kit";

// Migrations are generated from src/db/schema (npm run db:generate) and never hand-edited.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema/index.ts",
  out: "./migrations",
});
