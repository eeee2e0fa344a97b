/**
 * A scan's working memory: what the profiler reuses from value to value and batch to batch
 * instead of allocating (hash and parse outputs, a batch's column arrays, the pattern counters'
 * shape table and tally, the top-value summaries' fold arrays). A ProfileBuilder makes one (its
 * segments' builders share it) and hands it to every sketch it creates, so the scans
 * in one Worker isolate cannot share a buffer whatever awaits lie between their batches: one
 * scan's addColumn codes, say, stay as they are while another scan profiles.
 *
 * Within a scan the parts are shared by its attributes, which are added one column at a time.
 */

import { ColumnScratch } from "./column-codes";
import { HashScratch } from "./hash";
import { PatternScratch } from "./patterns";
import { FoldScratch } from "./space-saving";
import { ParsedText } from "./value-types";

export class ProfileScratch {
  readonly hash = new HashScratch();
  readonly parsed = new ParsedText();
  readonly column = new ColumnScratch();
  readonly patterns = new PatternScratch();
  readonly fold = new FoldScratch();
}
