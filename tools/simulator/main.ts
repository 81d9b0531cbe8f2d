import { exitWithParent } from '../../src/bin/parentLink';
import { DEFAULTS } from '../../src/domain/defaults';
import { port } from '../../src/settings/read';
import { startSimulator } from './server';

/** Where the simulator listens: SIMULATOR_HOST and SIMULATOR_PORT. */
function simulatorConfig(env: NodeJS.ProcessEnv = process.env) {
  return {
    host: env.SIMULATOR_HOST ?? '127.0.0.1',
    port: port(env, 'SIMULATOR_PORT', DEFAULTS.simulatorPort),
  };
}

async function main(): Promise<void> {
  const config = simulatorConfig();
  const simulator = await startSimulator({ host: config.host, port: config.port });
  console.log(
    JSON.stringify({
      name: 'onejob-simulator',
      msg: 'provider simulator listening',
      url: simulator.url,
    }),
  );
  const stop = async (): Promise<void> => {
    await simulator.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  exitWithParent(stop);
}

main().catch((error: unknown) => {
  console.error(`onejob simulator: ${(error as Error).message}`);
  process.exit(1);
});
