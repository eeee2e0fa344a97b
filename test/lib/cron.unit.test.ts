import { describe, expect, it } from "vitest";
import { CronError, isTimeZone, nextRun, nextRunIso, parseCron } from "../../src/lib/cron";

const next = (expr: string, after: string, tz = "UTC") => nextRun(parseCron(expr), tz, new Date(after))?.toISOString();

describe("parseCron", () => {
  it("expands stars, values, ranges, steps, lists and names", () => {
    const s = parseCron("*/15 9-17/4 1,15 JAN-mar mon,FRI");
    expect(s.minutes).toEqual([0, 15, 30, 45]);
    expect(s.hours).toEqual([9, 13, 17]);
    expect([...s.daysOfMonth].sort((a, b) => a - b)).toEqual([1, 15]);
    expect([...s.months].sort((a, b) => a - b)).toEqual([1, 2, 3]);
    expect([...s.daysOfWeek].sort((a, b) => a - b)).toEqual([1, 5]);
    expect(s.domRestricted && s.dowRestricted).toBe(true);
  });

  it("reads a/n as a to the end of the field, and 7 as Sunday", () => {
    expect(parseCron("50/5 * * * *").minutes).toEqual([50, 55]);
    expect([...parseCron("0 0 * * 7").daysOfWeek]).toEqual([0]);
    expect(parseCron("0 0 * * *").domRestricted).toBe(false);
  });

  it.each([
    ["* * * *", /5 fields/],
    ["* * * * * *", /5 fields/],
    ["60 * * * *", /minute: 60 is outside 0-59/],
    ["* 24 * * *", /hour/],
    ["* * 0 * *", /day of month/],
    ["* * * 13 *", /month/],
    ["* * * * 8", /day of week/],
    ["5-1 * * * *", /backwards/],
    ["*/0 * * * *", /bad step/],
    ["a * * * *", /not a number/],
    ["1,,2 * * * *", /bad part/],
    ["1-2-3 * * * *", /bad range/],
    ["? * * * *", /not a number/],
  ])("rejects %s", (expr, message) => {
    expect(() => parseCron(expr)).toThrow(CronError);
    expect(() => parseCron(expr)).toThrow(message);
  });
});

describe("nextRun", () => {
  it("is the next whole minute strictly after the given time", () => {
    expect(next("* * * * *", "2026-03-10T10:00:30.500Z")).toBe("2026-03-10T10:01:00.000Z");
    expect(next("* * * * *", "2026-03-10T10:00:00.000Z")).toBe("2026-03-10T10:01:00.000Z");
    expect(next("30 2 * * *", "2026-03-10T02:30:00.000Z")).toBe("2026-03-11T02:30:00.000Z");
  });

  it("rolls over hours, days, months and years", () => {
    expect(next("0 * * * *", "2026-03-10T10:59:00Z")).toBe("2026-03-10T11:00:00.000Z");
    expect(next("0 0 * * *", "2026-03-31T23:00:00Z")).toBe("2026-04-01T00:00:00.000Z");
    expect(next("0 0 1 1 *", "2026-06-15T00:00:00Z")).toBe("2027-01-01T00:00:00.000Z");
    expect(next("0 12 29 2 *", "2026-01-01T00:00:00Z")).toBe("2028-02-29T12:00:00.000Z");
  });

  it("applies the OR rule when both day fields are restricted, AND otherwise", () => {
    // 2026-03-10 is a Tuesday. Day 15 or any Friday: Friday 13th comes first.
    expect(next("0 0 15 * 5", "2026-03-10T00:00:00Z")).toBe("2026-03-13T00:00:00.000Z");
    // Only Fridays (day-of-month is *).
    expect(next("0 0 * * 5", "2026-03-10T00:00:00Z")).toBe("2026-03-13T00:00:00.000Z");
    // Only the 15th (day-of-week is *).
    expect(next("0 0 15 * *", "2026-03-10T00:00:00Z")).toBe("2026-03-15T00:00:00.000Z");
    // A stepped star counts as unrestricted, so both must match: an odd day AND a Monday.
    expect(next("0 0 */2 * 1", "2026-03-10T00:00:00Z")).toBe("2026-03-23T00:00:00.000Z");
  });

  it("uses the clock of the time zone", () => {
    // 09:00 in New York in winter (UTC-5) and in summer (UTC-4).
    expect(next("0 9 * * *", "2026-01-15T12:00:00Z", "America/New_York")).toBe("2026-01-15T14:00:00.000Z");
    expect(next("0 9 * * *", "2026-07-15T12:00:00Z", "America/New_York")).toBe("2026-07-15T13:00:00.000Z");
    // Half-hour offset zone (UTC+5:30): midnight in Kolkata is 18:30 UTC the day before.
    expect(next("0 0 * * *", "2026-05-01T00:00:00Z", "Asia/Kolkata")).toBe("2026-05-01T18:30:00.000Z");
    // The day boundary is the zone's: Monday 01:00 in Tokyo is Sunday 16:00 UTC.
    expect(next("0 1 * * 1", "2026-03-14T00:00:00Z", "Asia/Tokyo")).toBe("2026-03-15T16:00:00.000Z");
  });

  it("skips wall times that a DST change removes, and runs a repeated hour once", () => {
    // 2026-03-08: New York clocks jump from 02:00 to 03:00; 02:30 does not exist that day.
    expect(next("30 2 * * *", "2026-03-08T05:00:00Z", "America/New_York")).toBe("2026-03-09T06:30:00.000Z");
    // 2026-11-01: 01:00-02:00 happens twice; the first (EDT, UTC-4) is taken…
    expect(next("30 1 * * *", "2026-11-01T04:00:00Z", "America/New_York")).toBe("2026-11-01T05:30:00.000Z");
    // …and once it has passed, the next run is the following day, not the repeat.
    expect(next("30 1 * * *", "2026-11-01T05:30:00Z", "America/New_York")).toBe("2026-11-02T06:30:00.000Z");
    // A frequent schedule keeps running through the repeated hour.
    expect(next("* * * * *", "2026-11-01T05:59:00Z", "America/New_York")).toBe("2026-11-01T06:00:00.000Z");
    expect(next("30 * * * *", "2026-11-01T05:30:00Z", "America/New_York")).toBe("2026-11-01T06:30:00.000Z");
  });

  it("returns undefined for a schedule that is never due", () => {
    expect(next("0 0 31 2 *", "2026-01-01T00:00:00Z")).toBeUndefined();
    expect(next("0 0 30 2 *", "2026-01-01T00:00:00Z")).toBeUndefined();
  });
});

describe("nextRunIso", () => {
  it("validates the zone and the expression", () => {
    expect(nextRunIso("0 6 * * *", "Europe/Paris", new Date("2026-06-01T00:00:00Z"))).toBe("2026-06-01T04:00:00.000Z");
    expect(() => nextRunIso("0 6 * * *", "Mars/Olympus", new Date())).toThrow(/unknown time zone/);
    expect(() => nextRunIso("0 0 31 2 *", "UTC", new Date())).toThrow(/never due/);
    expect(isTimeZone("UTC")).toBe(true);
    expect(isTimeZone("Not/AZone")).toBe(false);
  });
});
