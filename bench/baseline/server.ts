/**
 * The ceiling our API is measured against: a minimal Fastify process with the least a create,
 * a replay and a whole job can cost on the same Temporal and PostgreSQL. Started by the
 * benchmark (`npm run bench`) with BASELINE_* settings in its environment.
 *
 *   POST /create  validate the body, one INSERT, start the empty workflow          → 201
 *   POST /replay  check the bearer token, one primary-key SELECT                   → 200
 *   POST /run     start the bare job workflow and wait for its result              → 200
 */
import { Client, Connection } from '@temporalio/client';
import Fastify from 'fastify';
import pg from 'pg';
import { z } from 'zod';
import { exitWithParent } from '../../src/bin/parentLink';
import { bareJobWorkflow, emptyWorkflow } from './workflows';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const createBody = z.object({ type: z.string().min(1), input: z.record(z.string(), z.unknown()) });

async function main(): Promise<void> {
  const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 10 });
  const connection = await Connection.connect({ address: env('TEMPORAL_ADDRESS') });
  const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
  const taskQueue = env('BASELINE_TASK_QUEUE');
  const expectedAuthorization = `Bearer ${env('BASELINE_TOKEN')}`;
  const app = Fastify({ logger: false });

  const authorised = (authorization: string | undefined): boolean =>
    authorization === expectedAuthorization;

  app.post('/create', async (request, reply) => {
    if (!authorised(request.headers.authorization)) return reply.code(401).send();
    const key = request.headers['idempotency-key'];
    const body = createBody.safeParse(request.body);
    if (typeof key !== 'string' || !body.success) return reply.code(400).send();
    await pool.query('INSERT INTO baseline_jobs (key, owner_id, body) VALUES ($1, $2, $3)', [
      key,
      'bench',
      body.data,
    ]);
    await client.workflow.start(emptyWorkflow, { workflowId: `baseline-${key}`, taskQueue });
    return reply.code(201).send({ key });
  });

  app.post('/replay', async (request, reply) => {
    if (!authorised(request.headers.authorization)) return reply.code(401).send();
    const key = request.headers['idempotency-key'];
    const { rows } = await pool.query('SELECT key, body FROM baseline_jobs WHERE key = $1', [key]);
    if (rows.length === 0) return reply.code(404).send();
    return reply.code(200).send(rows[0]);
  });

  app.post('/run', async (request, reply) => {
    if (!authorised(request.headers.authorization)) return reply.code(401).send();
    const key = request.headers['idempotency-key'];
    const body = createBody.safeParse(request.body);
    if (typeof key !== 'string' || !body.success) return reply.code(400).send();
    const text = String(body.data.input.text ?? '');
    const summary = await client.workflow.execute(bareJobWorkflow, {
      workflowId: `baseline-run-${key}`,
      taskQueue,
      args: [key, text],
    });
    return reply.code(200).send({ key, summary });
  });

  await app.listen({ host: '127.0.0.1', port: Number(env('BASELINE_PORT')) });
  process.send?.({ ready: true });
  exitWithParent(async () => {
    await app.close();
    await connection.close();
    await pool.end();
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
