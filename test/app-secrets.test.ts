import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EXAMPLE_SECRETS } from "../src/lib/example-secrets";
import { admin, call } from "./support/api";
import { asDeployed } from "./support/outbound";

/** Runs `fn` with one secret set to its example value, restored afterwards. */
async function withExample<T>(name: keyof typeof EXAMPLE_SECRETS, fn: () => Promise<T>): Promise<T> {
  const vars = env as unknown as Record<string, string>;
  const before = vars[name]!;
  vars[name] = EXAMPLE_SECRETS[name];
  try {
    return await fn();
  } finally {
    vars[name] = before;
  }
}

describe("example secrets", () => {
  it("a deployed Worker with an example secret refuses every request but the health check, naming it", async () => {
    for (const name of Object.keys(EXAMPLE_SECRETS) as Array<keyof typeof EXAMPLE_SECRETS>) {
      await withExample(name, () =>
        asDeployed(async () => {
          const res = await call("GET", "/auth/api_keys", { as: admin });
          expect(res.status, name).toBe(503);
          expect(res.headers.get("content-type")).toBe("application/problem+json");
          expect(res.body).toMatchObject({ code: "misconfigured", status: 503 });
          expect(res.body.detail).toContain(name);
          expect(res.body.detail).not.toContain(EXAMPLE_SECRETS[name]);
          expect((await call("GET", "/health")).status).toBe(200);
        }),
      );
    }
  });

  it("local development (private targets allowed) serves with the example values", async () => {
    await withExample("ADMIN_API_KEY", async () => {
      expect((await call("GET", "/auth/api_keys", { as: admin })).status).not.toBe(503);
    });
  });
});

describe("EXAMPLE_SECRETS", () => {
  it("are the values .dev.vars.example ships, so the check knows what a fresh clone has", async () => {
    const { default: example } = await import("../.dev.vars.example?raw");
    for (const [name, value] of Object.entries(EXAMPLE_SECRETS)) {
      expect(example, name).toContain(`${name}="${value}"`);
    }
  });
});
