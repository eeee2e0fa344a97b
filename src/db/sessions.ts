/**
 * D1 read replication through the Sessions API (`withSession`): the queries of one request run in
 * a D1 session, so a read may be answered by a replica near the caller instead of the primary, and
 * every query of the session sees at least what the ones before it saw (sequential consistency).
 * A session's bookmark names the database state it has seen; a session started from a bookmark
 * reads at least that state. The API hands the bookmark out with every answer and takes it back
 * on the next request (src/app.ts, `X-Session-Bookmark`), so a client reads its own writes.
 *
 * Where a request starts:
 * - a read (GET, HEAD) from the caller's bookmark, or anywhere ("first-unconstrained") without one:
 *   it may see a replica that lags the primary, as any reader who has not written;
 * - a write from the primary ("first-primary"): what it checks (access, conflicts) is the latest
 *   state, and its bookmark covers its own writes.
 * Writes always go to the primary. Without replication enabled on the database (and locally),
 * every query runs on the primary and the bookmarks are still valid.
 */

/** The header of a bookmark, in requests and responses. */
export const BOOKMARK_HEADER = "X-Session-Bookmark";

/**
 * The shape of the bookmarks D1 gives out (hex, dash-separated: 8-8-8-32, as documented for
 * Time Travel and the Sessions API). Anything else is refused before D1 sees it: an unknown
 * bookmark would fail the request's first query, a server error for a client's typo.
 */
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

/** Whether `value` has the shape of a D1 bookmark. */
export const isBookmark = (value: string) => BOOKMARK.test(value);

/** Methods that only read: their session may start on a replica. */
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The D1 sessions of one request: the one its queries run in, and any opened later to read from
 * the primary (after a write made outside the request's session, by a Durable Object).
 */
export class RequestSessions {
  readonly #d1: D1Database;
  readonly #sessions: D1DatabaseSession[] = [];
  /** The session the request's queries run in. */
  readonly main: D1DatabaseSession;

  /** `bookmark` must have passed isBookmark. */
  constructor(d1: D1Database, method: string, bookmark: string | undefined) {
    this.#d1 = d1;
    this.main = this.#open(READS.has(method.toUpperCase()) ? (bookmark ?? "first-unconstrained") : "first-primary");
  }

  #open(start: string): D1DatabaseSession {
    const session = this.#d1.withSession(start);
    this.#sessions.push(session);
    return session;
  }

  /**
   * A session whose first query reads the primary: it sees writes that completed outside this
   * request's session (an AssetMonitor's batch) before it started.
   */
  fromPrimary(): D1DatabaseSession {
    return this.#open("first-primary");
  }

  /** The newest state any session of the request has seen (bookmarks sort oldest to newest). */
  bookmark(): string | undefined {
    let newest: string | undefined;
    for (const session of this.#sessions) {
      const b = session.getBookmark();
      if (b && (newest === undefined || b > newest)) newest = b;
    }
    return newest;
  }
}

/**
 * A session as the D1Database drizzle expects: drizzle's D1 driver calls `prepare` and `batch`
 * only, which a session has with the same signatures.
 */
export const sessionAsDatabase = (session: D1DatabaseSession) => session as unknown as D1Database;
