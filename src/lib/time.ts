/** Current time as an ISO 8601 UTC string, the format every stored timestamp uses. */
export function nowIso(): string {
  return new Date().toISOString();
}

/** `promise`, or the error of `onTimeout` once `ms` have passed without it settling. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(onTimeout()), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
