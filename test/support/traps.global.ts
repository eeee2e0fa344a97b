import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer, type Socket } from "node:net";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /**
     * A hostile PostgreSQL stand-in: it declines TLS and asks for the password in clear text.
     * `received` (HTTP GET) lists every password message it was sent.
     */
    cleartextPostgres: { host: string; port: number; received: string };
    /**
     * An attacker's HTTP server: every request under `{url}/{box}/…` is recorded (method, path,
     * headers) and answered 401; `GET {url}/__received/{box}` lists a box's requests.
     * `{url}/{box}/redirect?to=<url>[&status=307]` is recorded too and answered with that
     * redirect (302 by default). `otherUrl` is the same trap on another port (another origin),
     * sharing the boxes: a redirect from `url` to `otherUrl` changes hosts.
     */
    httpTrap: { url: string; otherUrl: string };
  }
}

interface TrappedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

/** AuthenticationCleartextPassword: 'R', length 8, code 3 (PostgreSQL protocol, 55.7). */
const ASK_CLEARTEXT = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]);

/** ErrorResponse 28P01 "password authentication failed", so the client stops at once. */
const AUTH_FAILED = (() => {
  const fields = Buffer.from("SFATAL\0C28P01\0Mpassword authentication failed\0\0", "utf8");
  const head = Buffer.alloc(5);
  head.write("E", 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
})();

/**
 * Speaks just enough of the PostgreSQL wire protocol to steal a password from a client that
 * falls back to plain TCP: 'N' to an SSLRequest, then a cleartext password request after the
 * startup message; any PasswordMessage ('p') is recorded.
 */
function trap(received: string[]) {
  return (socket: Socket) => {
    let buffer = Buffer.alloc(0);
    let startupDone = false;
    socket.on("error", () => {});
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!startupDone) {
          if (buffer.length < 8) return;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) return;
          const code = buffer.readInt32BE(4);
          buffer = buffer.subarray(length);
          if (code === 80877103)
            socket.write("N"); // SSLRequest: no TLS here
          else {
            startupDone = true;
            socket.write(ASK_CLEARTEXT);
          }
          continue;
        }
        if (buffer.length < 5) return;
        const length = buffer.readInt32BE(1);
        if (buffer.length < length + 1) return;
        if (buffer[0] === 0x70)
          received.push(
            buffer
              .subarray(5, length + 1)
              .toString("utf8")
              .replace(/\0$/, ""),
          );
        buffer = buffer.subarray(length + 1);
        socket.end(AUTH_FAILED);
      }
    });
  };
}

export default async function setup(project: TestProject) {
  const received: string[] = [];
  const sockets = new Set<Socket>();
  const handle = trap(received);
  const pg = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    handle(socket);
  });
  await new Promise<void>((resolve) => pg.listen(0, "127.0.0.1", resolve));
  const http = createHttpServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(received));
  });
  const boxes = new Map<string, TrappedRequest[]>();
  const httpTrap = createHttpServer((req, res) => {
    const path = req.url ?? "/";
    const asked = /^\/__received\/([^/?]+)$/.exec(path);
    if (asked) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(boxes.get(asked[1]!) ?? []));
      return;
    }
    const box = path.split("/")[1] ?? "";
    boxes.set(box, [...(boxes.get(box) ?? []), { method: req.method ?? "", path, headers: req.headers }]);
    req.resume();
    const redirect = /^\/[^/]+\/redirect\?(.*)$/.exec(path);
    if (redirect) {
      const query = new URLSearchParams(redirect[1]);
      res.writeHead(Number(query.get("status") ?? 302), { location: query.get("to") ?? "/" }).end();
      return;
    }
    res.writeHead(401, { "content-type": "application/json" }).end('{"message":"who are you?"}');
  });
  const otherTrap = createHttpServer((req, res) => httpTrap.emit("request", req, res));
  await new Promise<void>((resolve) => httpTrap.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => otherTrap.listen(0, "127.0.0.1", resolve));
  project.provide("httpTrap", {
    url: `http://127.0.0.1:${(httpTrap.address() as AddressInfo).port}`,
    otherUrl: `http://127.0.0.1:${(otherTrap.address() as AddressInfo).port}`,
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  project.provide("cleartextPostgres", {
    host: "127.0.0.1",
    port: (pg.address() as AddressInfo).port,
    received: `http://127.0.0.1:${(http.address() as AddressInfo).port}/`,
  });
  return async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => pg.close(() => resolve()));
    await new Promise<void>((resolve) => http.close(() => resolve()));
    httpTrap.closeAllConnections();
    otherTrap.closeAllConnections();
    await new Promise<void>((resolve) => httpTrap.close(() => resolve()));
    await new Promise<void>((resolve) => otherTrap.close(() => resolve()));
  };
}
