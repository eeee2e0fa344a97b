/**
 * A copy of `s` that holds only its own characters. A value the CSV reader cut out of a 64 KiB
 * text chunk is a V8 slice that keeps the whole chunk alive; a kept key (a top value, a text
 * minimum) from each of a thousand chunks would hold 64 MB. Concatenating flattens into a new
 * string of s.length + 1 characters, and the slice of it refers to that string alone.
 */
export function ownString(s: string): string {
  return ` ${s}`.slice(1);
}
