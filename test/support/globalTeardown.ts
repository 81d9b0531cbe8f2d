import { dropClusterDatabases } from './harness';

export default async function globalTeardown(): Promise<void> {
  const servers = globalThis.onejobTestServers;
  await servers?.temporal?.stop();
  if (servers?.database && servers.clusterDatabase)
    await dropClusterDatabases(servers.database.adminUrl, servers.clusterDatabase);
  await servers?.database?.stop();
}
