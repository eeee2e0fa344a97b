/**
 * Scans admitted to a Worker isolate by their memory estimate, not by a fixed count (issue 40): an
 * isolate has 128 MB, and the scans it runs at once share what its runtime, its code and its
 * requests leave (ISOLATE_SCAN_MEMORY). A scan waits until its estimate fits beside the scans
 * running; one whose estimate is larger than all of it runs alone. First come, first admitted: a
 * scan that does not fit holds back the ones after it, so a wide table's scan is never starved by
 * narrow ones.
 */

import { scanMemoryEstimate } from "../scan/profiler/budget";

/** A Worker isolate's memory limit: 128 MB (122 MiB). */
export const ISOLATE_MEMORY = 128_000_000;
/**
 * What the scans of one isolate may hold at once: ISOLATE_MEMORY less ~26 MiB for the rest (the
 * runtime, our code, requests). A scan admitted beside others has at worst ISOLATE_MEMORY less
 * their estimates, i.e. its own estimate + (ISOLATE_MEMORY − ISOLATE_SCAN_MEMORY), what
 * bench:profile:memory runs each width under as its V8 heap cap.
 */
export const ISOLATE_SCAN_MEMORY = 96 * 2 ** 20;

interface Waiting {
  bytes: number;
  admit: () => void;
}

/** A budget of bytes shared by the work running at once (FIFO). */
export class MemoryAdmission {
  readonly capacity: number;
  private used = 0;
  private running = 0;
  private readonly queue: Waiting[] = [];

  constructor(capacity: number) {
    if (!(capacity > 0)) throw new RangeError("capacity must be positive");
    this.capacity = capacity;
  }

  /** Bytes held by the work running now. */
  get inUse(): number {
    return this.used;
  }

  /** Work running now. */
  get active(): number {
    return this.running;
  }

  /** Work waiting to be admitted. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Runs `work` once `bytes` fit beside the work running (at once when nothing runs), then frees them. */
  async run<T>(bytes: number, work: () => Promise<T>): Promise<T> {
    if (!(bytes >= 0)) throw new RangeError("bytes must be a non-negative number");
    if (this.queue.length > 0 || !this.fits(bytes)) {
      await new Promise<void>((admit) => {
        this.queue.push({ bytes, admit });
      });
    } else this.take(bytes);
    try {
      return await work();
    } finally {
      this.used -= bytes;
      this.running--;
      this.admitWaiting();
    }
  }

  private fits(bytes: number): boolean {
    return this.running === 0 || this.used + bytes <= this.capacity;
  }

  private take(bytes: number): void {
    this.used += bytes;
    this.running++;
  }

  private admitWaiting(): void {
    for (let next = this.queue[0]; next !== undefined && this.fits(next.bytes); next = this.queue[0]) {
      this.queue.shift();
      this.take(next.bytes);
      next.admit();
    }
  }
}

/** The isolate's scans (module state: one per isolate, whatever batch or request started them). */
export const scanAdmission = new MemoryAdmission(ISOLATE_SCAN_MEMORY);

/**
 * Runs a scan in this isolate once its memory fits: `columns` is the asset's width as last
 * scanned (undefined before its first scan: estimated at the attribute cap).
 */
export function admitScan<T>(columns: number | undefined, scan: () => Promise<T>): Promise<T> {
  return scanAdmission.run(scanMemoryEstimate(columns), scan);
}
