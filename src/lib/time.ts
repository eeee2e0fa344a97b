/** Current time as an ISO 8601 UTC string, the format every stored timestamp uses. */
export function nowIso(): string {
  return new Date().toISOString();
}
