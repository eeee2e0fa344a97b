/**
 * CPU time of a process group from /proc (Linux): what the benchmarks measure a `wrangler dev`
 * by (wrangler and its workerd run in one process group, bench/support/wrangler-dev.ts). Unlike
 * latency, CPU time hardly moves when other work shares the cores.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc's CPU times (getconf CLK_TCK). */
const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

/** The fields of a /proc stat line after the command's closing parenthesis: state, ppid, pgrp, … */
function statFields(path: string): string[] {
  const stat = readFileSync(path, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** utime + stime (the line's 14th and 15th fields) in milliseconds. */
function cpuMsOf(fields: string[]): number {
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** The live processes of a process group, each with its stat fields. */
function groupProcesses(group: number): Array<{ pid: string; fields: string[] }> {
  const found: Array<{ pid: string; fields: string[] }> = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const fields = statFields(`/proc/${pid}/stat`);
      if (Number(fields[2]) === group) found.push({ pid, fields });
    } catch {
      // the process ended meanwhile
    }
  }
  return found;
}

/** CPU milliseconds (user + system) spent so far by the live processes of a process group; NaN without one. */
export function groupCpuMs(group: number | undefined): number {
  if (group === undefined) return Number.NaN;
  return groupProcesses(group).reduce((ms, p) => ms + cpuMsOf(p.fields), 0);
}

/** CPU milliseconds spent so far by each thread ("pid/tid") of a process group's live processes. */
export function groupThreadCpuMs(group: number | undefined): Map<string, number> {
  const threads = new Map<string, number>();
  if (group === undefined) return threads;
  for (const { pid } of groupProcesses(group)) {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        threads.set(`${pid}/${tid}`, cpuMsOf(statFields(`/proc/${pid}/task/${tid}/stat`)));
      }
    } catch {
      // the process ended meanwhile
    }
  }
  return threads;
}

/**
 * CPU milliseconds the busiest thread of a process group spent between two readings of
 * groupThreadCpuMs. workerd runs the Worker's isolate and, in wrangler dev, the local D1's, the
 * rate limiter's and our Durable Objects on one thread, so under load a route's rate follows it.
 */
export function busiestThreadMs(before: Map<string, number>, after: Map<string, number>): number {
  let most = 0;
  for (const [thread, ms] of after) most = Math.max(most, ms - (before.get(thread) ?? 0));
  return most;
}
