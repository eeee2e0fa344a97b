/**
 * The life of one statement on a warehouse's HTTP SQL API (Snowflake, BigQuery, Databricks,
 * Redshift), written once: submit it, poll it within a budget (cancelling it when the budget is
 * spent or the runner is closed), then read its result page by page. Each provider supplies the
 * four steps; this template owns the order, the budget and the cancellation.
 */

import { ConnectorError } from "../connectors/types";
import type { Dialect, SqlRunner, StatementResult } from "./runner";
import { statementMethods } from "./runner";
import { closedError, PollBudget, type WarehouseRunnerOptions } from "./warehouse-api";

/** One provider's statement API. `H` names a running statement, `A` is one of its answers. */
export interface StatementSteps<H, A> {
  /** The provider as messages name it ("Snowflake"). */
  provider: string;
  /** The statement as a timeout's message names it ("the Snowflake statement"). */
  what: string;
  /**
   * Sends the statement (`budget.secondsLeft` bounds the provider's own timeout). `started` is
   * called with its handle as soon as there is one, so close() can cancel it from then on.
   */
  submit(
    sql: string,
    params: unknown[],
    budget: PollBudget,
    started: (handle: H) => void,
  ): Promise<{ handle: H | undefined; answer: A }>;
  /** Whether an answer says the statement is still running. */
  running(answer: A): boolean;
  /** Asks once more how the statement is doing. */
  poll(handle: H): Promise<A>;
  /**
   * The finished statement's rows and columns, fetching any further pages; `checkOpen` throws
   * once the runner was closed (called before each page). Throws the provider's error when it failed.
   */
  result(answer: A, handle: H | undefined, checkOpen: () => void): Promise<StatementResult>;
  /** Cancels the statement; never rejects. */
  cancel(handle: H): Promise<void>;
  /** The error of a running statement that came without a handle to poll. */
  noHandle: string;
}

/** A runner whose statements go through `steps`; close() cancels the one running. */
export function statementRunner<H, A>(
  dialect: Dialect,
  options: WarehouseRunnerOptions,
  steps: StatementSteps<H, A>,
): SqlRunner {
  let running: H | undefined;
  let closed = false;
  const checkOpen = () => {
    if (closed) throw closedError(steps.provider);
  };

  async function execute(sql: string, params: unknown[] = []): Promise<StatementResult> {
    checkOpen();
    const budget = new PollBudget(options);
    try {
      let { handle, answer } = await steps.submit(sql, params, budget, (h) => {
        running = h;
      });
      while (steps.running(answer)) {
        if (handle === undefined) throw new ConnectorError(steps.noHandle, "transient");
        const h = handle;
        await budget.next(steps.what, () => steps.cancel(h));
        if (closed) {
          // close() may have come before the handle was known: cancel here too.
          await steps.cancel(h);
          throw closedError(steps.provider);
        }
        answer = await steps.poll(h);
      }
      return await steps.result(answer, handle, checkOpen);
    } finally {
      running = undefined;
    }
  }

  return {
    dialect,
    ...statementMethods(execute),
    async close(): Promise<void> {
      closed = true;
      const handle = running;
      if (handle !== undefined) await steps.cancel(handle);
    },
  };
}
