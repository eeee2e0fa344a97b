/** Helpers shared by the warehouse runner tests (fake providers: test/support/warehouses.global.ts). */

import { expect, inject } from "vitest";
import { ConnectorError } from "../../../../src/scan/connectors/types";
import type { WarehouseRunnerOptions } from "../../../../src/scan/sql/warehouses";

export const fixtures = () => inject("warehouses");

/** Short pauses between polls: the fake answers at once. */
export const FAST: WarehouseRunnerOptions = { pollIntervalMs: 1, maxPollIntervalMs: 2 };

/** The rows of `items` with id >= 2 and a name other than 'zzz', as every runner must return them. */
export const EXPECTED_ROWS = [
  { id: 2, name: "banana", price: 0.25, active: false, created_at: "2024-01-02T10:00:00.000Z" },
  { id: 3, name: "cherry", price: null, active: true, created_at: "2024-01-03T10:00:00.000Z" },
  { id: 5, name: "date", price: 3, active: false, created_at: "2024-01-05T10:00:00.000Z" },
  { id: 6, name: "elder", price: 4.5, active: true, created_at: "2024-01-06T10:00:00.000Z" },
  { id: 7, name: "fig", price: 5.25, active: true, created_at: "2024-01-07T10:00:00.000Z" },
];

/** Awaits the rejection and checks it is a ConnectorError of that kind carrying none of the secrets. */
export async function expectFailure(
  promise: Promise<unknown>,
  kind: ConnectorError["kind"],
  secrets: string[],
): Promise<ConnectorError> {
  const err = await promise.then(
    () => {
      throw new Error("expected a ConnectorError");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectorError);
  const e = err as ConnectorError;
  expect({ kind: e.kind, message: e.message }).toMatchObject({ kind });
  for (const secret of secrets) {
    expect(e.message).not.toContain(secret);
    // A PEM key's body, line by line, must not leak either.
    for (const line of secret.split("\n").filter((l) => l.length > 20)) expect(e.message).not.toContain(line);
  }
  return e;
}

/** Resolves once the fake provider received a statement containing the marker (it holds the answer until then). */
export async function submitted(marker: string): Promise<void> {
  const res = await fetch(`${fixtures().control}/seen?marker=${encodeURIComponent(marker)}`);
  expect(res.status).toBe(200);
}

/** Whether the fake provider saw the statement with the marker cancelled. */
export async function wasCancelled(marker: string): Promise<boolean> {
  const res = await fetch(`${fixtures().control}/cancelled?marker=${encodeURIComponent(marker)}`);
  return ((await res.json()) as { cancelled: boolean }).cancelled;
}
