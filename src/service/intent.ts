import type { z } from 'zod';
import { DEFAULTS } from '../domain/defaults';
import { requestFingerprint } from '../domain/fingerprint';
import type { JobMode } from '../domain/job';
import { pathsWithNulCharacter } from '../domain/storableJson';
import { findJobType, jobTypeNames } from '../jobTypes';
import type { ProviderRegistry } from '../providers/registry';
import { ServiceError } from './errors';

/** What a client asks for, before it is checked: the four fields of the intent. */
export interface IntentRequest {
  type: string;
  input: Record<string, unknown>;
  providers?: string[];
  mode?: JobMode;
}

/**
 * The fingerprint of what was asked for, as the client said it: no configuration goes into it,
 * so a replay can be recognised without checking the intent against today's configuration.
 */
export function intentFingerprint(request: IntentRequest): string {
  return requestFingerprint({
    type: request.type,
    input: request.input,
    providers: request.providers ?? null,
    mode: request.mode ?? DEFAULTS.jobMode,
  });
}

/** Checks an intent against the job type and the providers, and resolves its plan and mode. */
export function validateIntent(deps: { providers: ProviderRegistry }, request: IntentRequest) {
  const contract = findJobType(request.type);
  if (!contract) {
    throw new ServiceError('unknown-job-type', `Unknown job type "${request.type}".`, {
      known: jobTypeNames(),
    });
  }
  // Schema errors and characters PostgreSQL cannot store, in one list of field paths.
  const parsed = contract.input.safeParse(request.input);
  const errors = [
    ...(parsed.success ? [] : parsed.error.issues).map((issue: z.core.$ZodIssue) => ({
      path: ['input', ...issue.path.map(String)].join('.'),
      message: issue.message,
    })),
    ...pathsWithNulCharacter(request.input, 'input').map((path) => ({
      path,
      message: 'the character U+0000 (NUL) cannot be stored; remove it',
    })),
  ];
  if (errors.length > 0) {
    throw new ServiceError(
      'invalid-input',
      `The input is not valid for job type "${request.type}".`,
      { errors },
    );
  }
  // A job type with side effects is never hedged, whatever the providers.
  if (request.mode === 'hedged' && contract.sideEffects) {
    throw new ServiceError(
      'hedging-not-allowed',
      `"${request.type}" jobs have side effects, so they always run one attempt at a time.`,
      { jobTypeHasSideEffects: true },
    );
  }
  const unknownProviders = (request.providers ?? []).filter((name) => !deps.providers.has(name));
  if (unknownProviders.length > 0) {
    throw new ServiceError(
      'unknown-provider',
      `Unknown provider(s): ${unknownProviders.join(', ')}.`,
      {
        known: deps.providers.names(),
      },
    );
  }
  const compatible = deps.providers.compatible(contract.providerKinds);
  const incompatible = (request.providers ?? []).filter((name) => !compatible.includes(name));
  if (incompatible.length > 0) {
    throw new ServiceError(
      'incompatible-provider',
      `Provider(s) ${incompatible.join(', ')} cannot run "${request.type}" jobs.`,
      {
        compatible,
      },
    );
  }
  if (new Set(request.providers ?? []).size !== (request.providers ?? []).length) {
    throw new ServiceError('invalid-input', 'A provider may appear in the plan only once.', {
      errors: [{ path: 'providers', message: 'duplicate provider' }],
    });
  }
  const plan = request.providers ?? compatible;
  if (plan.length === 0) {
    throw new ServiceError(
      'unknown-provider',
      `No configured provider can run "${request.type}" jobs.`,
      { known: deps.providers.names() },
    );
  }
  const mode = request.mode ?? DEFAULTS.jobMode;
  if (mode === 'hedged') {
    const withEffects = plan.filter((name) => deps.providers.get(name).config.sideEffects);
    if (withEffects.length > 0 || plan.length < 2) {
      throw new ServiceError(
        'hedging-not-allowed',
        'Hedged mode runs attempts side by side, so it needs at least two providers and is only allowed when every provider is free of side effects.',
        { jobTypeHasSideEffects: false, providersWithSideEffects: withEffects },
      );
    }
  }
  return { input: request.input, plan, mode, fingerprint: intentFingerprint(request) };
}
