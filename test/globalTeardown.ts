export default async function globalTeardown(): Promise<void> {
  const servers = globalThis.onejobTestServers;
  await servers?.temporal?.stop();
  await servers?.database?.stop();
}
