/** JSON round trip, as a state crossing an invocation would take. */
export function viaJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
