import { createServer } from 'node:http';
import { WebhookDeduplicator } from 'onejob-client';
import { Webhook } from 'standardwebhooks';

// The endpoint's secret, shown once when it was registered (createWebhookEndpoint).
const webhook = new Webhook(process.env.ONEJOB_WEBHOOK_SECRET ?? '');
// This process's memory of handled ids: the last 100,000, each for 3 days and an hour.
const deduplicator = new WebhookDeduplicator();

interface JobEvent {
  type: string;
  data: { id: string; status: string };
}

async function handle(event: JobEvent): Promise<void> {
  console.log(`job ${event.data.id} ${event.data.status}`);
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    void (async () => {
      // 1. The signature, over the exact bytes received: anything else is refused.
      const body = Buffer.concat(chunks).toString('utf8');
      let event: JobEvent;
      try {
        event = webhook.verify(body, request.headers as Record<string, string>) as JobEvent;
      } catch {
        response.writeHead(400).end();
        return;
      }
      // 2. Once per webhook-id: a retry of a delivery already handled is answered, not redone.
      const id = String(request.headers['webhook-id']);
      if (await deduplicator.seenBefore(id)) {
        console.log(`duplicate ${id}`);
        response.writeHead(204).end();
        return;
      }
      // 3. Handled, or forgotten again so that onejob's next try is handled.
      try {
        await handle(event);
        response.writeHead(204).end();
      } catch {
        await deduplicator.forget(id);
        response.writeHead(500).end();
      }
    })();
  });
});

const port = Number(process.env.PORT ?? 8080);
server.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`));
