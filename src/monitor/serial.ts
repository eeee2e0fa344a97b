/**
 * Runs async calls one at a time, in the order they arrive. A Durable Object's input gates hold
 * only across its own storage calls: an `await` on D1 lets the next request in, so every method
 * of the AssetMonitor that reads and then writes runs through one of these.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    // The next call waits for this one to settle, whether it succeeded or not.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
