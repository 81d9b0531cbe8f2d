/** The baseline's worker, its own process as ours is: the empty and the bare job workflows. */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import pg from 'pg';
import { exitWithParent } from '../../src/bin/parentLink';
import { baselineActivities } from './activities';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const env = (name: string): string => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set`);
    return value;
  };
  const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 10 });
  const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
  const worker = await Worker.create({
    connection,
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: env('BASELINE_TASK_QUEUE'),
    workflowsPath: require.resolve('./workflows'),
    activities: baselineActivities(pool, env('BASELINE_SIMULATOR_URL')),
  });
  exitWithParent(() => worker.shutdown());
  const running = worker.run();
  process.send?.({ ready: true });
  await running;
  await connection.close();
  await pool.end();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
