/** Test-run-unique names, and the check every factory makes of its setup call. */

let seq = 0;
/** A name unique within the test run, so files and tests never collide in shared storage. */
export function unique(prefix: string): string {
  seq += 1;
  return `${prefix}-${Date.now().toString(36)}${seq.toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
}

/** Throws with the response when a setup call did not answer as expected. */
export function expectStatus(res: { status: number; body: unknown }, status: number, what: string) {
  if (res.status !== status)
    throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
}
