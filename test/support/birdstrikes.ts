/**
 * Birdstrikes (vega-datasets, 10,000 strikes 1990–2002): a real table, the columns bench/detection
 * keeps, one batch per year in date order, profiled as an upload's scan profiles it.
 */
import { BIRD_COLUMNS, toCsv } from "../../bench/detection/tables";
import birdstrikesCsv from "../../node_modules/vega-datasets/data/birdstrikes.csv?raw";
import type { AssetProfile } from "../../src/contracts/profile";
import type { AssetRef } from "../../src/detection";
import { profileCsv } from "./profiles";

export const BIRDSTRIKES: AssetRef = { id: 1, name: "birdstrikes", type: "S3", timestamp_attribute: "flight_date" };

/** The batches, one per year (13), each row the text of BIRD_COLUMNS ("" for a missing value). */
export function birdstrikeYears(): Array<{ key: string; rows: string[][] }> {
  const [header, ...lines] = birdstrikesCsv.trim().split(/\r?\n/);
  const names = header!.split(",");
  const at = BIRD_COLUMNS.map((c) => names.indexOf(c.source));
  const rows = lines
    .map((line) => line.split(","))
    .map((cells) => at.map((i) => cells[i] ?? ""))
    .sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0));
  const years = new Map<string, string[][]>();
  for (const row of rows) {
    const year = row[0]!.slice(0, 4);
    years.set(year, [...(years.get(year) ?? []), row]);
  }
  return [...years].map(([key, yearRows]) => ({ key, rows: yearRows }));
}

/** A batch's rows through the file profiler, as an asset with flight_date as its timestamp scans them. */
export function profileBirdstrikes(rows: string[][]): Promise<AssetProfile> {
  return profileCsv(toCsv(BIRD_COLUMNS, rows), { timestampAttribute: "flight_date" });
}
