import type { FastifyInstance } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { isValidOwnerId, OWNER_ID_RULE, tokenPairs } from '../domain/identity';
import { sendProblem } from './problems';

declare module 'fastify' {
  interface FastifyRequest {
    /** Whose token came with the request: the owner under /v1, the operator under /v1/operator. */
    ownerId: string;
  }
}

/** Owner by API token. Tokens are kept only as SHA-256 digests and compared in constant time. */
export class ApiTokens {
  private readonly owners: Array<{ digest: Buffer; ownerId: string }> = [];

  /** `ONEJOB_API_TOKENS`: comma-separated `owner:token` pairs (see tokenPairs). */
  static parse(spec: string, variable = 'ONEJOB_API_TOKENS'): ApiTokens {
    const tokens = new ApiTokens();
    for (const { name: ownerId, token } of tokenPairs(spec)) {
      if (!isValidOwnerId(ownerId)) {
        throw new Error(
          `${variable}: each entry must be owner:token with an owner of ${OWNER_ID_RULE}`,
        );
      }
      if (token.length < 8)
        throw new Error(`${variable}: the token for owner ${ownerId} is shorter than 8 characters`);
      const digest = createHash('sha256').update(token).digest();
      const twin = tokens.owners.find((entry) => entry.digest.equals(digest));
      if (twin) {
        throw new Error(
          twin.ownerId === ownerId
            ? `${variable}: ${ownerId} is listed twice with the same token; list it once`
            : `${variable}: ${twin.ownerId} and ${ownerId} have the same token; give each its own`,
        );
      }
      tokens.owners.push({ digest, ownerId });
    }
    if (tokens.owners.length === 0) throw new Error(`${variable} has no name:token pairs`);
    return tokens;
  }

  /** Holders here whose token a holder in `other` has too, as pairs of names. */
  sharedWith(other: ApiTokens): Array<[mine: string, theirs: string]> {
    return this.owners.flatMap((mine) =>
      other.owners
        .filter((theirs) => theirs.digest.equals(mine.digest))
        .map((theirs): [string, string] => [mine.ownerId, theirs.ownerId]),
    );
  }

  ownerOf(token: string): string | undefined {
    const digest = createHash('sha256').update(token).digest();
    let owner: string | undefined;
    // Compare against every entry so timing does not tell which one matched.
    for (const entry of this.owners) {
      if (timingSafeEqual(entry.digest, digest)) owner ??= entry.ownerId;
    }
    return owner;
  }

  /** Owner from an `Authorization: Bearer <token>` header, if valid. */
  ownerFromHeader(header: string | undefined): string | undefined {
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    return match?.[1] ? this.ownerOf(match[1]) : undefined;
  }
}

/**
 * Owners' and operators' tokens from their settings. A token may open one door only: the same
 * token for two owners, or an owner's token that is also an operator's, is refused at start
 * (the message names the holders, never the token).
 */
export function parseTokenSettings(
  apiTokens: string,
  operatorTokens: string | undefined,
): { tokens: ApiTokens; operatorTokens?: ApiTokens } {
  const tokens = ApiTokens.parse(apiTokens);
  if (operatorTokens === undefined) return { tokens };
  const operators = ApiTokens.parse(operatorTokens, 'ONEJOB_OPERATOR_TOKENS');
  const shared = tokens.sharedWith(operators);
  if (shared.length > 0) {
    const pairs = shared.map(([owner, op]) => `owner ${owner} and operator ${op}`).join(', ');
    throw new Error(
      `ONEJOB_API_TOKENS and ONEJOB_OPERATOR_TOKENS share tokens (${pairs}); an operator token must not also be an owner's`,
    );
  }
  return { tokens, operatorTokens: operators };
}

/**
 * Whether an `Authorization` header names a holder of either set: an owner or an operator (whose
 * trace context the API takes, telemetry/tracing.ts). Both sets are always compared in full, so
 * the time taken does not tell which, if any, matched.
 */
export function knownBearer(tokens: ApiTokens, operatorTokens?: ApiTokens) {
  return (authorization: string | undefined): boolean => {
    const owner = tokens.ownerFromHeader(authorization);
    const operator = operatorTokens?.ownerFromHeader(authorization);
    return owner !== undefined || operator !== undefined;
  };
}

/** The Authorization header, as the OpenAPI document shows it. */
export const authHeaders = z
  .object({ authorization: z.string().optional().describe('Bearer <token>') })
  .loose();

/**
 * Every route of `scope` needs `Authorization: Bearer <token>` with a token of `tokens`; its
 * holder becomes `request.ownerId`. Without tokens (no operators configured) every request is
 * refused. `credential` names the token in the refusal ("token", "operator token").
 */
export function requireBearer(
  scope: FastifyInstance,
  tokens: ApiTokens | undefined,
  credential: string,
): void {
  scope.decorateRequest('ownerId', '');
  scope.addHook('onRequest', async (request, reply) => {
    const holder = tokens?.ownerFromHeader(request.headers.authorization);
    if (!holder) {
      return sendProblem(
        reply,
        'unauthorized',
        `Send Authorization: Bearer <${credential}>.`,
        {},
        { 'www-authenticate': 'Bearer' },
      );
    }
    request.ownerId = holder;
  });
}
