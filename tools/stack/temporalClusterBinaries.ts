import { existsSync } from 'node:fs';
import { cp, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { goInstall, goModuleDir, isExecutable, onejobCacheDir } from './goInstall';
import { TEMPORAL_CLI_MODULE_VERSION } from './temporalCli';

/**
 * The production engine's programs, pinned: the Temporal server and its SQL schema tool (one
 * module, one version; the one docker-compose.yml runs), and the Web UI server (the version the
 * CLI embeds). Found through explicit paths first, else the per-user cache, else built once from
 * the Go module proxy.
 *
 * The server is newer than the one the CLI embeds (1.29): 1.30 brought workflow pause, which
 * operators reach from the Web UI and the API, and which onejob must answer (issue 61). 1.32.1 is
 * the newest release whose go.mod asks for no newer Go than 1.26.8 (1.32.2 asks for 1.26.10). It
 * is built in its own module's graph (the CLI's graph pins the older server), so it shares no
 * compiled packages with the CLI's build.
 */
export const TEMPORAL_SERVER_VERSION = '1.32.1';
export const TEMPORAL_UI_SERVER_VERSION = '2.42.1';

const SERVER_MODULE = 'go.temporal.io/server';
const UI_SERVER_MODULE = 'github.com/temporalio/ui-server/v2';
/** Inside the server module: the PostgreSQL schemas its SQL tool applies. */
const POSTGRES_SCHEMA = path.join('schema', 'postgresql', 'v12');

export interface TemporalClusterBinaries {
  server: string;
  sqlTool: string;
  /** Holds `temporal/versioned` and `visibility/versioned` for PostgreSQL 12+. */
  postgresSchemaDir: string;
  /** Undefined when the UI server cannot be had (the cluster then runs without a Web UI). */
  uiServer?: string;
  sources: string[];
}

export function temporalServerCacheDir(): string {
  return onejobCacheDir('temporal-server', `v${TEMPORAL_SERVER_VERSION}`);
}

function uiServerCacheDir(): string {
  return onejobCacheDir('temporal-ui-server', `v${TEMPORAL_UI_SERVER_VERSION}`);
}

function explicit(variable: string, isFolder = false): string | undefined {
  const value = process.env[variable];
  if (!value) return undefined;
  const ok = isFolder ? existsSync(value) : isExecutable(value);
  if (!ok)
    throw new Error(`${variable}=${value} is not ${isFolder ? 'a folder' : 'an executable file'}`);
  return value;
}

const SERVER_ALTERNATIVE =
  'set TEMPORAL_SERVER_PATH, TEMPORAL_SQL_TOOL_PATH and TEMPORAL_SCHEMA_DIR, or point TEMPORAL_ADDRESS at a running cluster';

/** The server, the SQL tool and the schemas: explicit paths, else the cache, else a build. */
async function obtainServerParts(
  log: (line: string) => void,
): Promise<Omit<TemporalClusterBinaries, 'uiServer'>> {
  const cacheDir = temporalServerCacheDir();
  const cached = {
    server: path.join(cacheDir, 'temporal-server'),
    sqlTool: path.join(cacheDir, 'temporal-sql-tool'),
    postgresSchemaDir: path.join(cacheDir, POSTGRES_SCHEMA),
  };
  const given = {
    server: explicit('TEMPORAL_SERVER_PATH'),
    sqlTool: explicit('TEMPORAL_SQL_TOOL_PATH'),
    postgresSchemaDir: explicit('TEMPORAL_SCHEMA_DIR', true),
  };
  const sources = Object.entries(given)
    .filter(([, value]) => value)
    .map(([part]) => `${part} from the environment`);
  const needBinaries =
    (!given.server && !isExecutable(cached.server)) ||
    (!given.sqlTool && !isExecutable(cached.sqlTool));
  if (needBinaries) {
    await goInstall(
      {
        what: `the Temporal server v${TEMPORAL_SERVER_VERSION} and its SQL tool`,
        packages: [
          `${SERVER_MODULE}/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
          `${SERVER_MODULE}/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
        ],
        ldflags: '-s -w',
        binaries: { server: 'temporal-server', sql: 'temporal-sql-tool' },
        cacheDir,
        alternative: SERVER_ALTERNATIVE,
      },
      log,
    );
    sources.push('built');
  }
  if (!given.postgresSchemaDir && !existsSync(cached.postgresSchemaDir)) {
    // The schemas ship in the module's source, which the build just downloaded.
    const moduleDir = await goModuleDir(`${SERVER_MODULE}@v${TEMPORAL_SERVER_VERSION}`);
    const staging = `${cached.postgresSchemaDir}.${process.pid}`;
    await mkdir(path.dirname(staging), { recursive: true });
    await cp(path.join(moduleDir, POSTGRES_SCHEMA), staging, { recursive: true });
    await rename(staging, cached.postgresSchemaDir).catch(async (error: unknown) => {
      // Another clone copied them first: theirs are the same files.
      await rm(staging, { recursive: true, force: true });
      if (!existsSync(cached.postgresSchemaDir)) throw error;
    });
  }
  if (sources.length === 0) sources.push('cache');
  return {
    server: given.server ?? cached.server,
    sqlTool: given.sqlTool ?? cached.sqlTool,
    postgresSchemaDir: given.postgresSchemaDir ?? cached.postgresSchemaDir,
    sources,
  };
}

/** The Web UI server; a failed build is reported and the cluster runs without a UI. */
async function obtainUiServer(log: (line: string) => void): Promise<string | undefined> {
  const given = explicit('TEMPORAL_UI_SERVER_PATH');
  if (given) return given;
  const cached = path.join(uiServerCacheDir(), 'temporal-ui-server');
  if (isExecutable(cached)) return cached;
  try {
    await goInstall(
      {
        what: `the Temporal Web UI server v${TEMPORAL_UI_SERVER_VERSION}`,
        packages: [`${UI_SERVER_MODULE}/cmd/server@v${TEMPORAL_UI_SERVER_VERSION}`],
        ldflags: '-s -w',
        inGraphOf: TEMPORAL_CLI_MODULE_VERSION,
        binaries: { server: 'temporal-ui-server' },
        cacheDir: uiServerCacheDir(),
        alternative: 'set TEMPORAL_UI_SERVER_PATH, or use the temporal CLI instead of the Web UI',
      },
      log,
    );
    return cached;
  } catch (error) {
    log(`no Web UI for the cluster: ${(error as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

export async function obtainTemporalClusterBinaries(
  log: (line: string) => void,
  options: { withUi: boolean },
): Promise<TemporalClusterBinaries> {
  const parts = await obtainServerParts(log);
  const uiServer = options.withUi ? await obtainUiServer(log) : undefined;
  return { ...parts, uiServer };
}
