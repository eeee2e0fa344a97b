/**
 * What the warehouse runners share (Snowflake, BigQuery, Databricks, Redshift): their options,
 * the polling policy, secret-free error messages and small response helpers.
 */

import type { OutboundPolicy } from "../../lib/outbound";
import { ConnectorError, safeDetail } from "../connectors/types";

/** Knobs every warehouse runner takes; the defaults suit production, tests shorten the pauses. */
export interface WarehouseRunnerOptions {
  /** The API's base URL instead of the provider's (a private endpoint, or a test server). */
  endpoint?: string;
  /** BigQuery: the OAuth token endpoint instead of the service account's token_uri. */
  tokenUri?: string;
  /** First pause between status polls, in ms (default 250); it doubles up to maxPollIntervalMs. */
  pollIntervalMs?: number;
  /** Longest pause between polls, in ms (default 5000). */
  maxPollIntervalMs?: number;
  /** How long one statement may take, polling included, in ms (default 10 minutes). */
  timeoutMs?: number;
  /** Most status polls per statement (default 2000). */
  maxPolls?: number;
  /** Where requests may go; default the deployment's (ALLOW_PRIVATE_TARGETS). */
  policy?: OutboundPolicy;
}

/** Pauses without holding the CPU (workerd's scheduler.wait where there is one). */
export function pause(ms: number): Promise<void> {
  const s = (globalThis as { scheduler?: { wait?: (ms: number) => Promise<void> } }).scheduler;
  if (s?.wait) return s.wait(ms);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The bounds of one statement's polling: a pause that grows from the first interval to the
 * longest, at most `maxPolls` polls, and a deadline. Exhausted, it throws a transient error
 * (the queue retries the scan later) after the caller's `onGiveUp` (which cancels the statement).
 */
export class PollBudget {
  private polls = 0;
  private interval: number;
  private readonly max: number;
  private readonly deadline: number;
  private readonly maxPolls: number;

  constructor(options: WarehouseRunnerOptions) {
    this.interval = Math.max(0, options.pollIntervalMs ?? 250);
    this.max = Math.max(this.interval, options.maxPollIntervalMs ?? 5000);
    this.deadline = Date.now() + (options.timeoutMs ?? 10 * 60 * 1000);
    this.maxPolls = options.maxPolls ?? 2000;
  }

  /** Seconds left before the deadline, for the provider's own statement timeout. */
  get secondsLeft(): number {
    return Math.max(1, Math.ceil((this.deadline - Date.now()) / 1000));
  }

  /** Waits before the next poll, or throws when the budget is spent. */
  async next(what: string, onGiveUp: () => Promise<void>): Promise<void> {
    this.polls++;
    if (this.polls > this.maxPolls || Date.now() + this.interval > this.deadline) {
      await onGiveUp();
      throw new ConnectorError(`${what} did not finish in time; it was cancelled and will be retried`, "transient");
    }
    await pause(this.interval);
    this.interval = Math.min(this.max, this.interval * 2 || 1);
  }
}

/**
 * A provider's message fit for an error: short, no query string, none of the secrets (the
 * credential's, the user name, anything that looks like a credential).
 */
export function cleanDetail(message: unknown, secrets: readonly (string | undefined)[]): string {
  return safeDetail(message, secrets);
}

/** Parses JSON; undefined when it is not JSON (a proxy's error page). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Thrown by a query that close() interrupted. */
export const closedError = (provider: string) =>
  new ConnectorError(`the ${provider} statement was cancelled because the runner was closed`, "transient");

/** A whole number that fits a double exactly becomes a number; anything else stays a string. */
export function exactNumber(s: string): number | string {
  const n = Number(s);
  return Number.isFinite(n) && (!/^-?\d+$/.test(s) || Number.isSafeInteger(n)) ? n : s;
}

/** The base URL without a trailing slash. */
export const trimSlash = (url: string) => url.replace(/\/+$/, "");
