import { describe, expect, it } from "vitest";
import vector from "../../../spark/testdata/callback-vector.json";
import sampleProfile from "../../../spark/testdata/sample-profile.json";
import { ScanCallbackBody } from "../../../src/scan/spark/callback-body";
import {
  CALLBACK_TOLERANCE_SECONDS,
  callbackSignature,
  checkCallbackSignature,
  newCallbackSecret,
} from "../../../src/scan/spark/callback-signature";

const now = Number(vector.timestamp);
const headers = { timestamp: vector.timestamp, signature: vector.signature };

describe("the callback signature (shared vector with spark/tests)", () => {
  it("signs the vector's body exactly as the driver does", async () => {
    expect(await callbackSignature(vector.secret, vector.timestamp, vector.body)).toBe(vector.signature);
    expect(await checkCallbackSignature(vector.secret, headers, vector.body, now)).toBe("ok");
  });

  it("refuses another body, another secret, a stale or missing timestamp", async () => {
    expect(await checkCallbackSignature(vector.secret, headers, `${vector.body} `, now)).toBe("forged");
    expect(await checkCallbackSignature(newCallbackSecret(), headers, vector.body, now)).toBe("forged");
    expect(
      await checkCallbackSignature(vector.secret, headers, vector.body, now + CALLBACK_TOLERANCE_SECONDS + 1),
    ).toBe("stale");
    expect(await checkCallbackSignature(vector.secret, { signature: vector.signature }, vector.body, now)).toBe(
      "malformed",
    );
  });

  it("makes a new 32-byte secret per job", () => {
    const a = newCallbackSecret();
    expect(a).toMatch(/^dqcb_[A-Za-z0-9_-]{43}$/);
    expect(newCallbackSecret()).not.toBe(a);
  });
});

describe("the driver's profile shape", () => {
  it("is what the callback accepts (spark/testdata/sample-profile.json, checked by spark/tests too)", () => {
    const parsed = ScanCallbackBody.safeParse({ status: "SUCCEEDED", profile: sampleProfile });
    expect(parsed.success).toBe(true);
    const wrong = { ...sampleProfile, attributes: [{ ...sampleProfile.attributes[0], inferred_type: "text" }] };
    expect(ScanCallbackBody.safeParse({ status: "SUCCEEDED", profile: wrong }).success).toBe(false);
  });
});
