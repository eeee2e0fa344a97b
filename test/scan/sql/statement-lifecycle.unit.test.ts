import { describe, expect, it } from "vitest";
import { ConnectorError } from "../../../src/scan/connectors/types";
import { type StatementSteps, statementRunner } from "../../../src/scan/sql/statement-lifecycle";

/** A provider whose statements run for `polls` polls, recording every step the template takes. */
function provider(polls: number, handle: string | null = "h1") {
  const log: string[] = [];
  let left = polls;
  const steps: StatementSteps<string, { running: boolean }> = {
    provider: "Test",
    what: "the test statement",
    noHandle: "no handle",
    async submit(sql, _params, _budget, started) {
      log.push(`submit ${sql}`);
      if (handle) started(handle);
      return { handle: handle ?? undefined, answer: { running: left > 0 } };
    },
    running: (answer) => answer.running,
    async poll(h) {
      log.push(`poll ${h}`);
      left--;
      return { running: left > 0 };
    },
    async result(_answer, h, checkOpen) {
      log.push(`result ${h}`);
      checkOpen();
      return { rows: [{ one: 1 }], columns: [{ name: "one", type: "INT" }] };
    },
    async cancel(h) {
      log.push(`cancel ${h}`);
    },
  };
  return { steps, log };
}

const PATIENT = { pollIntervalMs: 1, maxPollIntervalMs: 1, maxPolls: 1_000_000, timeoutMs: 3_600_000 };

describe("statementRunner (the warehouse statement lifecycle)", () => {
  it("submits, polls while running, then reads the result: each step once, in order", async () => {
    const p = provider(2);
    const runner = statementRunner("snowflake", PATIENT, p.steps);
    expect(await runner.query("SELECT 1")).toEqual([{ one: 1 }]);
    expect(p.log).toEqual(["submit SELECT 1", "poll h1", "poll h1", "result h1"]);
  });

  it("close() while polling cancels the statement at once, not when the budget runs out", async () => {
    const p = provider(Number.POSITIVE_INFINITY);
    const runner = statementRunner("snowflake", PATIENT, p.steps);
    const running = runner.query("SELECT 1");
    while (!p.log.includes("poll h1")) await new Promise((r) => setTimeout(r, 1));
    await runner.close();
    const err = await running.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConnectorError);
    expect((err as ConnectorError).message).toMatch(/cancelled because the runner was closed/);
    expect(p.log.filter((l) => l === "cancel h1").length).toBeGreaterThanOrEqual(1);
    await expect(runner.query("SELECT 2")).rejects.toThrow(/closed/);
  });

  it("gives up within the budget and cancels; a running statement without a handle is transient", async () => {
    const p = provider(Number.POSITIVE_INFINITY);
    const runner = statementRunner("snowflake", { ...PATIENT, maxPolls: 2 }, p.steps);
    await expect(runner.query("SELECT 1")).rejects.toThrow(/did not finish in time/);
    expect(p.log.at(-1)).toBe("cancel h1");
    const noHandle = provider(1, null);
    const other = statementRunner("snowflake", PATIENT, noHandle.steps);
    await expect(other.query("SELECT 1")).rejects.toMatchObject({ kind: "transient", message: "no handle" });
  });
});
