/**
 * Writes docs/policies.md from the policy registry: `npm run docs:policies`. The test
 * test/detection/policy-docs.unit.test.ts fails while the committed page differs from it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { POLICIES } from "../src/detection/policies";
import { policiesMarkdown } from "../src/detection/policy-docs";

const docs = join(dirname(fileURLToPath(import.meta.url)), "..", "docs");
mkdirSync(docs, { recursive: true });
writeFileSync(join(docs, "policies.md"), policiesMarkdown(POLICIES));
console.log("wrote docs/policies.md");
