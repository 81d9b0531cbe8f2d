import { obtainTemporalCli } from './temporalCli';

// `npm run temporal:obtain`: used by CI to fetch or build the CLI before the tests.
obtainTemporalCli((line) => console.log(`[temporal-cli] ${line}`))
  .then((cli) => console.log(`[temporal-cli] using ${cli.path} (${cli.source})`))
  .catch((error: unknown) => {
    console.error(`[temporal-cli] ${(error as Error).message}`);
    process.exit(1);
  });
