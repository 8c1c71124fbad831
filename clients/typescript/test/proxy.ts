/**
 * A TCP relay between the client under test and cinch that breaks things on
 * purpose: it cuts live event streams, and it can swallow the answer to a
 * POST after the server has done the work (so that the client must retry).
 */

import net from "node:net";

interface Connection {
  client: net.Socket;
  upstream: net.Socket;
  streamsEvents: boolean;
  swallow: boolean;
}

export class Proxy {
  private readonly server: net.Server;
  private readonly connections = new Set<Connection>();
  private swallowNextPost = false;
  /** The Idempotency-Key of every POST relayed, in order. */
  readonly postKeys: string[] = [];
  /** How many event streams were opened through the relay. */
  eventStreams = 0;

  private constructor(server: net.Server) {
    this.server = server;
  }

  /** A relay to cinch's port, listening on a free port of its own. */
  static async start(targetPort: number): Promise<Proxy> {
    const server = net.createServer();
    const proxy = new Proxy(server);
    server.on("connection", (client) => proxy.relay(client, targetPort));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  /** The next POST reaches cinch, but its answer is dropped with the connection. */
  swallowNextPostAnswer(): void {
    this.swallowNextPost = true;
  }

  /** Cuts every event stream open now; how many it cut. */
  cutEventStreams(): number {
    let cut = 0;
    for (const connection of this.connections) {
      if (connection.streamsEvents) {
        connection.client.destroy();
        connection.upstream.destroy();
        cut += 1;
      }
    }
    return cut;
  }

  async close(): Promise<void> {
    for (const connection of this.connections) {
      connection.client.destroy();
      connection.upstream.destroy();
    }
    await new Promise((resolve) => this.server.close(resolve));
  }

  private relay(client: net.Socket, targetPort: number): void {
    const upstream = net.connect(targetPort, "127.0.0.1");
    const connection: Connection = { client, upstream, streamsEvents: false, swallow: false };
    this.connections.add(connection);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.connections.delete(connection);
    };
    client.on("data", (data: Buffer) => {
      const text = data.toString("latin1");
      if (text.startsWith("POST ")) {
        this.postKeys.push(/\r\nidempotency-key: *([^\r\n]*)/i.exec(text)?.[1] ?? "");
        if (this.swallowNextPost) {
          this.swallowNextPost = false;
          connection.swallow = true;
        }
      } else if (text.startsWith("GET ") && text.split("\r\n", 1)[0].includes("/events ")) {
        connection.streamsEvents = true;
        this.eventStreams += 1;
      }
      upstream.write(data);
    });
    upstream.on("data", (data: Buffer) => {
      if (connection.swallow) {
        end();
        return;
      }
      client.write(data);
    });
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
  }
}
