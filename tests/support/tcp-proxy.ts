import { createServer, connect, type Server, type Socket } from "node:net";

/** A TCP proxy on a fixed local port that can be cut and restored, to play an unreachable RPC node. */
export class TcpProxy {
  private server: Server | undefined;
  private sockets = new Set<Socket>();

  constructor(
    readonly port: number,
    private readonly target: number,
  ) {}

  async up(): Promise<void> {
    if (this.server) return;
    this.server = createServer((client) => {
      const upstream = connect(this.target, "127.0.0.1");
      this.sockets.add(client).add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on("error", drop).on("close", drop);
      upstream.on("error", drop).on("close", drop);
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, "127.0.0.1", resolve));
  }

  /** Refuses new connections and cuts open ones. */
  async down(): Promise<void> {
    if (!this.server) return;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }
}
