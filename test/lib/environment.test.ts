/**
 * A deployed environment (ENVIRONMENT staging or production) never honours a setting of local
 * development: ALLOW_PRIVATE_TARGETS is ignored by the outbound policy, and a Worker that has it
 * anyway refuses to serve (503 misconfigured) until it is removed.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { deployedEnvironment, localOnlySettingsDeployed } from "../../src/lib/environment";
import { outboundPolicy } from "../../src/lib/outbound";
import { deploymentOutboundPolicy } from "../../src/lib/outbound-fetch";
import { admin, call } from "../support/api";
import { asEnvironment } from "../support/environment";

describe("deployedEnvironment", () => {
  it("is the environment's name when deployed, undefined in local development", () => {
    expect(deployedEnvironment({ ENVIRONMENT: "staging" })).toBe("staging");
    expect(deployedEnvironment({ ENVIRONMENT: "production" })).toBe("production");
    for (const local of [undefined, "", " ", "development"]) {
      expect(deployedEnvironment({ ENVIRONMENT: local }), String(local)).toBeUndefined();
    }
  });

  it("the tests run as local development (wrangler.toml's top level)", () => {
    expect((env as { ENVIRONMENT?: string }).ENVIRONMENT).toBe("development");
  });
});

describe("ALLOW_PRIVATE_TARGETS when deployed", () => {
  it("is ignored by the outbound policy in staging and production", () => {
    expect(outboundPolicy({ ALLOW_PRIVATE_TARGETS: "true", ENVIRONMENT: "development" }).allowPrivateTargets).toBe(
      true,
    );
    for (const environment of ["staging", "production"]) {
      expect(outboundPolicy({ ALLOW_PRIVATE_TARGETS: "true", ENVIRONMENT: environment }).allowPrivateTargets).toBe(
        false,
      );
    }
  });

  it("is ignored by the policy the Worker's own env gives", async () => {
    expect(deploymentOutboundPolicy().allowPrivateTargets).toBe(true);
    await asEnvironment("production", async () => {
      expect(deploymentOutboundPolicy().allowPrivateTargets).toBe(false);
    });
  });

  it("is named as a local-only setting, whatever its value, only when deployed", () => {
    expect(localOnlySettingsDeployed({ ENVIRONMENT: "staging", ALLOW_PRIVATE_TARGETS: "false" })).toEqual([
      "ALLOW_PRIVATE_TARGETS",
    ]);
    expect(localOnlySettingsDeployed({ ENVIRONMENT: "staging" })).toEqual([]);
    expect(localOnlySettingsDeployed({ ENVIRONMENT: "development", ALLOW_PRIVATE_TARGETS: "true" })).toEqual([]);
  });

  it("makes a deployed Worker refuse every request but the health check, naming it", async () => {
    await asEnvironment("staging", async () => {
      const res = await call("GET", "/auth/api_keys", { as: admin });
      expect(res.status).toBe(503);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.body).toMatchObject({ code: "misconfigured", status: 503 });
      expect(res.body.detail).toContain("ALLOW_PRIVATE_TARGETS");
      expect(res.body.detail).toContain("staging");
      expect((await call("GET", "/health")).status).toBe(200);
    });
    expect((await call("GET", "/auth/api_keys", { as: admin })).status).not.toBe(503);
  });
});
