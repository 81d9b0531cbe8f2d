import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../../tools/stack/processes';

/** One request the receiver took, and what the reference library made of its signature. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signatures: string[];
  body: string;
  headers: IncomingHttpHeaders;
  /** The parsed payload when the signature verified under the receiver's secret, else why not. */
  verified: { type: string; data: { id: string; status: string } } | { error: string };
  /** What the test's hook said when the request came in (the job row's status, say). */
  seen?: unknown;
  answered: number;
}

/**
 * A webhook receiver on a real port that checks every signature with the Standard Webhooks
 * reference library (`standardwebhooks`), not with our code. It answers each request with the
 * next status queued (204 when none is), and can go down (connections refused) and come back
 * on the same port.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** The secret it verifies with; set once the endpoint is registered. */
  secret = '';
  private readonly statuses: number[] = [];
  private server: Server | undefined;
  private port = 0;
  /** Called as each request comes in; what it returns is kept as `seen`. */
  onRequest: ((payload: unknown) => Promise<unknown>) | undefined;

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await receiver.up();
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  answerNext(...statuses: number[]): void {
    this.statuses.push(...statuses);
  }

  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        void this.take(request.headers, Buffer.concat(chunks).toString('utf8')).then((status) => {
          response.writeHead(status).end();
        });
      });
    });
    // A port below the kernel's ephemeral range (freePort): while the receiver is down, no
    // outgoing connection of this machine can take its port, so it comes back on the same one.
    for (let tries = 0; ; tries += 1) {
      const port = this.port || (await freePort());
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, '127.0.0.1', () => {
            server.removeListener('error', reject);
            resolve();
          });
        });
        this.port = (server.address() as AddressInfo).port;
        this.server = server;
        return;
      } catch (error) {
        if (this.port || tries >= 20) throw error;
      }
    }
  }

  /** Stops listening: senders meet a refused connection until `up()`. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async take(headers: IncomingHttpHeaders, body: string): Promise<number> {
    let verified: ReceivedWebhook['verified'];
    try {
      verified = new Webhook(this.secret).verify(body, {
        'webhook-id': String(headers['webhook-id']),
        'webhook-timestamp': String(headers['webhook-timestamp']),
        'webhook-signature': String(headers['webhook-signature']),
      }) as ReceivedWebhook['verified'];
    } catch (error) {
      verified = { error: (error as Error).message };
    }
    const seen = this.onRequest ? await this.onRequest(JSON.parse(body)) : undefined;
    const answered = this.statuses.shift() ?? 204;
    this.received.push({
      id: String(headers['webhook-id']),
      timestamp: String(headers['webhook-timestamp']),
      signatures: String(headers['webhook-signature']).split(' '),
      body,
      headers,
      verified,
      seen,
      answered,
    });
    return answered;
  }

  /** What it received about one job, in arrival order. */
  of(jobId: string): ReceivedWebhook[] {
    return this.received.filter(
      (r) => (JSON.parse(r.body) as { data: { id: string } }).data.id === jobId,
    );
  }
}
