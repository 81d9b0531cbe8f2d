import Anthropic from '@anthropic-ai/sdk';
import { createServer } from 'node:net';
import OpenAI from 'openai';
import { findJobType } from '../src/jobTypes';
import { classifyAnthropicError } from '../src/providers/anthropic';
import { ProviderCallError } from '../src/providers/callErrors';
import { classifyFetchFailure } from '../src/providers/httpProvider';
import { classifyOpenAiError } from '../src/providers/openaiCompatible';
import { ContractViolation, type ProviderConfig } from '../src/providers/provider';
import { ProviderRegistry } from '../src/providers/registry';
import type { Fault } from '../tools/simulator/faults';
import { startSimulator, type SimulatorServer } from '../tools/simulator/server';
import { anthropicProvider, chatProvider, payProvider } from './support/providers';

/**
 * The failure classification table, one test per row, through the real SDK clients against the
 * simulator's wire protocols: `definite` (certainly no effect: safe to try elsewhere) or
 * `ambiguous` (may have taken effect: the attempt becomes unknown).
 */
let simulator: SimulatorServer;
let registry: ProviderRegistry;
let closedPort: number;

beforeAll(async () => {
  simulator = await startSimulator();
  // A port with nothing listening: connection refused before anything is sent.
  closedPort = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
  const url = simulator.url;
  const refused = `http://127.0.0.1:${closedPort}`;
  const common = { timeoutMs: 2_000, lateResultTimeoutMs: 1_500, maxResponseBytes: 64 * 1024 };
  // Without a status lookup: the http rows are about the charge call alone.
  const http = { ...common, statusUrl: undefined };
  const configs: ProviderConfig[] = [
    chatProvider(url, 'openai', 'sim-steady', common),
    chatProvider(refused, 'openai-refused', 'sim-steady', common),
    anthropicProvider(url, 'anthropic', 'sim-steady', common),
    anthropicProvider(refused, 'anthropic-refused', 'sim-steady', common),
    payProvider(url, 'http', http),
    payProvider(refused, 'http-refused', http),
  ];
  registry = new ProviderRegistry(configs, {});
});
afterAll(async () => {
  await simulator?.close();
});

type Expected = 'ok' | 'definite' | 'ambiguous' | 'contract';
const ROUTE = { openai: 'chat', anthropic: 'messages', http: 'charge' } as const;

async function classify(
  adapter: keyof typeof ROUTE,
  fault: Fault | 'refused' | undefined,
): Promise<{ kind: Expected; code?: string }> {
  const name = fault === 'refused' ? `${adapter}-refused` : adapter;
  if (fault && fault !== 'refused') simulator.inject({ route: ROUTE[adapter], fault });
  const contract = findJobType(adapter === 'http' ? 'charge' : 'summarize')!;
  const input =
    adapter === 'http'
      ? { amountCents: 100, currency: 'EUR', account: 'acct-table' }
      : { text: 'A table row. Each row is a test.' };
  try {
    await registry.get(name).call({ attemptId: `table-${Math.random()}`, contract, input });
    return { kind: 'ok' };
  } catch (error) {
    if (error instanceof ContractViolation) return { kind: 'contract' };
    if (error instanceof ProviderCallError) return { kind: error.certainty, code: error.code };
    throw error;
  }
}

// [situation, fault, expected classification]
const TABLE: Array<[string, Fault | 'refused' | undefined, Expected]> = [
  ['answers well', undefined, 'ok'],
  ['connection refused (nothing sent)', 'refused', 'definite'],
  ['400 bad request', { kind: 'fail_before', status: 400 }, 'definite'],
  ['401 unauthorised', { kind: 'fail_before', status: 401 }, 'definite'],
  ['403 forbidden', { kind: 'fail_before', status: 403 }, 'definite'],
  ['404 not found', { kind: 'fail_before', status: 404 }, 'definite'],
  ['422 unprocessable', { kind: 'fail_before', status: 422 }, 'definite'],
  ['429 rate limited', { kind: 'fail_before', status: 429 }, 'definite'],
  ['408 request timeout', { kind: 'fail_before', status: 408 }, 'ambiguous'],
  ['409 conflict / in progress', { kind: 'fail_before', status: 409 }, 'ambiguous'],
  ['500 internal error', { kind: 'fail_before', status: 500 }, 'ambiguous'],
  ['500 after the side effect', { kind: 'fail_after', status: 500 }, 'ambiguous'],
  ['502 bad gateway', { kind: 'fail_before', status: 502 }, 'ambiguous'],
  ['503 unavailable', { kind: 'fail_before', status: 503 }, 'ambiguous'],
  ['504 gateway timeout', { kind: 'fail_before', status: 504 }, 'ambiguous'],
  ['connection dropped before any work', { kind: 'drop_before' }, 'ambiguous'],
  ['connection dropped after the side effect', { kind: 'drop_after' }, 'ambiguous'],
  ['no answer in time', { kind: 'hang' }, 'ambiguous'],
];

describe.each(['openai', 'anthropic', 'http'] as const)('%s adapter', (adapter) => {
  test.each(TABLE)('%s', async (_situation, fault, expected) => {
    expect((await classify(adapter, fault)).kind).toBe(expected);
  });
});

describe.each(['openai', 'anthropic'] as const)(
  '%s adapter, answers that break the format',
  (adapter) => {
    test('prose instead of the asked format is a contract violation (definite)', async () => {
      expect(await classify(adapter, { kind: 'malformed_output' })).toEqual({ kind: 'contract' });
    });
  },
);

describe.each(['openai', 'anthropic', 'http'] as const)(
  '%s adapter, an answer over its cap',
  (adapter) => {
    test('an endless body is cut off at the cap, not waited for: response_too_large', async () => {
      const fault: Fault = { kind: 'oversized_body', bytes: 1024 * 1024, endless: true };
      expect(await classify(adapter, fault)).toEqual({
        kind: 'ambiguous',
        code: 'response_too_large',
      });
    });
  },
);

describe('network errors that mean the request was never sent are definite, for every adapter', () => {
  // The shapes Node's fetch (undici) gives them: a TypeError whose cause carries the code.
  const fetchFailure = (code: string) =>
    new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
  const NEVER_SENT = ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'];
  const MAYBE_SENT = ['ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT'];

  test.each(NEVER_SENT)('%s is definite', (code) => {
    expect(classifyFetchFailure(fetchFailure(code)).certainty).toBe('definite');
    const sdkError = new OpenAI.APIConnectionError({ cause: fetchFailure(code) });
    expect(classifyOpenAiError(sdkError).certainty).toBe('definite');
    const anthropicError = new Anthropic.APIConnectionError({ cause: fetchFailure(code) });
    expect(classifyAnthropicError(anthropicError).certainty).toBe('definite');
  });

  test.each(MAYBE_SENT)('%s is ambiguous', (code) => {
    expect(classifyFetchFailure(fetchFailure(code)).certainty).toBe('ambiguous');
    const sdkError = new OpenAI.APIConnectionError({ cause: fetchFailure(code) });
    expect(classifyOpenAiError(sdkError).certainty).toBe('ambiguous');
  });
});
