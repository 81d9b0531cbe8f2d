import { obtainTemporalCli } from './temporalCli';
import { obtainTemporalClusterBinaries } from './temporalClusterBinaries';

// `npm run temporal:obtain`: fetch or build every Temporal program the tests use (the CLI with
// its dev server; the production engine's server, SQL tool and Web UI server), once.
async function main(): Promise<void> {
  const log = (line: string): void => console.log(`[temporal] ${line}`);
  const cli = await obtainTemporalCli(log);
  log(`CLI: ${cli.path} (${cli.source})`);
  const cluster = await obtainTemporalClusterBinaries(log, { withUi: true });
  log(`server: ${cluster.server}, SQL tool: ${cluster.sqlTool} (${cluster.sources.join(', ')})`);
  log(`Web UI server: ${cluster.uiServer ?? 'not available'}`);
}

main().catch((error: unknown) => {
  console.error(`[temporal] ${(error as Error).message}`);
  process.exit(1);
});
