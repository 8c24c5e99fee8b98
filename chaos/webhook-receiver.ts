/**
 * The chaos run's webhook receiver: a loopback node:http server that records every delivery
 * (headers, raw body, when it arrived, which worker process sent it), answers as the scenario's
 * fault plan says (2xx, 500, too slow, or holding the request while its sender is killed), and can
 * be stopped (every connection cut) and started again on the same port. Signatures are checked
 * afterwards with the Standard Webhooks check of tests/support/webhook-receiver.ts, at the time
 * each delivery arrived.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer, type Server } from "node:http";

export type Answer = { status: number; delayMs?: number } | { hold: true };

export interface Arrival {
  n: number;
  at: number;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The client side of the connection (to find the process that sent it). */
  remotePort: number;
  /** What it was answered: status, slow, held (sender killed), refused_after (the receiver stopped right after). */
  answer: string;
  /** Answered 2xx in time, and the answer written out. */
  acked: boolean;
}

export class ChaosReceiver {
  readonly arrivals: Arrival[] = [];
  private server?: Server;
  constructor(
    readonly port: number,
    private readonly decide: (a: Arrival) => Promise<Answer> | Answer,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  get up(): boolean {
    return this.server !== undefined;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const a: Arrival = {
          n: this.arrivals.length + 1,
          at: Date.now(),
          id: String(req.headers["webhook-id"] ?? ""),
          timestamp: String(req.headers["webhook-timestamp"] ?? ""),
          signature: String(req.headers["webhook-signature"] ?? ""),
          body: Buffer.concat(chunks).toString("utf8"),
          remotePort: req.socket.remotePort ?? 0,
          answer: "",
          acked: false,
        };
        this.arrivals.push(a);
        void Promise.resolve(this.decide(a)).then((answer) => {
          if ("hold" in answer) {
            a.answer = "held";
            return;
          }
          a.answer = answer.delayMs ? `${answer.status} after ${answer.delayMs} ms` : String(answer.status);
          setTimeout(() => {
            if (res.destroyed || res.socket?.destroyed) return;
            res.on("finish", () => {
              if (!answer.delayMs && answer.status < 300) a.acked = true;
            });
            res.writeHead(answer.status).end();
          }, answer.delayMs ?? 0);
        });
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.server = server;
  }

  /** Stops at once: open connections are cut, new ones refused until start(). */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * The pid (among `pids`) owning the loopback TCP connection from `clientPort` to `serverPort`,
 * found in /proc (Linux): the socket's inode in /proc/net/tcp, then the process holding it.
 */
export function pidOfConnection(clientPort: number, serverPort: number, pids: number[]): number | undefined {
  const hex = (p: number) => p.toString(16).toUpperCase().padStart(4, "0");
  let inode: string | undefined;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[1]!.endsWith(`:${hex(clientPort)}`) && f[2]!.endsWith(`:${hex(serverPort)}`)) inode = f[9];
    }
    if (inode) break;
  }
  if (!inode || inode === "0") return undefined;
  for (const pid of pids) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
        } catch {
          // closed meanwhile
        }
      }
    } catch {
      // gone
    }
  }
  return undefined;
}
