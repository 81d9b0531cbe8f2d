import { tokenPairs } from './identity';

/**
 * The secrets `npm start` fills in when none are given. They are published (README, this file),
 * so they are good for the dev stack on loopback and for nothing else: outside the dev
 * supervisor, a service that is handed one refuses to start.
 */
export const DEV_OWNER = 'dev';
export const DEV_TOKEN = 'onejob-dev-token';
export const DEV_API_TOKENS = `${DEV_OWNER}:${DEV_TOKEN}`;
export const DEV_OPERATOR_TOKEN = 'onejob-dev-operator-token';
export const DEV_OPERATOR_TOKENS = `ops:${DEV_OPERATOR_TOKEN}`;
export const DEV_CALLBACK_SECRET = 'onejob-dev-callback-secret';
/** The key that seals webhook secrets at rest when ONEJOB_SECRET_KEYS is unset (npm start only). */
export const DEV_SECRET_KEY = '7I8tpQYRIJZNRhR85mEHnJCCGNo03HVFIocPcFAowng=';
export const DEV_SECRET_KEYS = `dev:${DEV_SECRET_KEY}`;
/** Never filled in by anyone now, but an older docker-compose.yml published it. */
const OLD_DEV_METRICS_TOKEN = 'onejob-dev-metrics-token';

const PUBLISHED = new Set([
  DEV_TOKEN,
  DEV_OPERATOR_TOKEN,
  DEV_CALLBACK_SECRET,
  DEV_SECRET_KEY,
  OLD_DEV_METRICS_TOKEN,
]);

/** The token of each `name:token` pair of a token setting. */
const tokensOf = (spec: string | undefined): string[] =>
  tokenPairs(spec ?? '').map((pair) => pair.token);

/** The keys of a key ring setting (`id:base64`, …), written as standard base64 whatever the form. */
const keysOf = (spec: string | undefined): string[] =>
  (spec ?? '')
    .split(',')
    .map((entry) =>
      Buffer.from(entry.slice(entry.indexOf(':') + 1).trim(), 'base64').toString('base64'),
    );

/**
 * Set to `1` by the dev supervisor (`npm start`) for the processes it starts, and by the tests.
 * It allows the published secrets and the simulator's providers by default; nothing else.
 */
export const DEV_STACK_VARIABLE = 'ONEJOB_DEV_STACK';

export function startedByDevStack(env: NodeJS.ProcessEnv): boolean {
  return env[DEV_STACK_VARIABLE] === '1';
}

/**
 * Refuses (throws, naming the variable) a published dev secret in any of the token settings, the
 * secret key ring or the providers' callback secrets, unless the dev supervisor started this process.
 */
export function refusePublishedDevSecrets(
  env: NodeJS.ProcessEnv,
  providers: ReadonlyArray<{ callbackSecretEnv?: string }>,
): void {
  if (startedByDevStack(env)) return;
  const secretVariables = providers.flatMap((p) =>
    p.callbackSecretEnv ? [p.callbackSecretEnv] : [],
  );
  const settings: Array<[string, string[]]> = [
    ['ONEJOB_API_TOKENS', tokensOf(env.ONEJOB_API_TOKENS)],
    ['ONEJOB_OPERATOR_TOKENS', tokensOf(env.ONEJOB_OPERATOR_TOKENS)],
    ['ONEJOB_METRICS_TOKEN', [env.ONEJOB_METRICS_TOKEN ?? '']],
    ['ONEJOB_SECRET_KEYS', keysOf(env.ONEJOB_SECRET_KEYS)],
    ...secretVariables.map((name): [string, string[]] => [name, [env[name] ?? '']]),
  ];
  for (const [name, values] of settings) {
    if (values.some((value) => PUBLISHED.has(value)))
      throw new Error(
        `${name} holds one of onejob's published dev secrets, which only npm start may use; choose your own`,
      );
  }
}
