import { ProviderCallError } from './callErrors';
import { ContractViolation } from './provider';

export const REDACTED = '[redacted]';

/** Shorter configured values are placeholders, not secrets (our own tokens need 8 too). */
const MIN_SECRET_LENGTH = 8;

/**
 * Credentials by their shape, whoever's they are: OpenAI (`sk-…`, `sk-proj-…`) and Anthropic
 * (`sk-ant-…`) keys, a token after its scheme (`Bearer …`, `Basic …`), and the value of a header
 * or field that carries a key (`Authorization: …`, `x-api-key: …`, `"api_key": "…"`; a separator
 * is required, so "missing Authorization header" stays readable).
 */
const SHAPES: Array<[RegExp, string]> = [
  [/\bsk-[A-Za-z0-9_*-]{6,}/g, REDACTED],
  // Capitalised and long: "the bearer of the card" is prose, a token is not that short.
  [/\b(Bearer)\s+[A-Za-z0-9._~+/=-]{16,}/g, `$1 ${REDACTED}`],
  // Capitalised only: "basic usage" is prose, "Basic dXNl…" a credential.
  [/\b(Basic)\s+[A-Za-z0-9+/]{8,}=*/g, `$1 ${REDACTED}`],
  [
    /\b(authorization|x-api-key|api[-_]?key)(["']?\s*[:=]\s*["']?)(?!(?:Bearer|Basic)\b|\[redacted\])[^\s"',;]+/gi,
    `$1$2${REDACTED}`,
  ],
];

/** Masks credentials recognisable by their shape alone. */
export function redactSecretShapes(text: string): string {
  return SHAPES.reduce(
    (masked, [pattern, replacement]) => masked.replace(pattern, replacement),
    text,
  );
}

/**
 * Masks the configured secrets themselves (every provider's API key and callback secret, as
 * the registry reads them), then every credential-shaped string: a provider that echoes a key
 * without a known prefix must not get it into our records or logs either.
 */
export class SecretRedactor {
  /** Longest first, so that a secret containing another is masked whole. */
  private readonly secrets: string[];

  constructor(secrets: Iterable<string | undefined>) {
    // A placeholder key of a local server (`EMPTY`, `none`) is no secret, and masking every
    // occurrence of such a word would garble the evidence kept beside it.
    this.secrets = [
      ...new Set([...secrets].filter((s): s is string => !!s && s.length >= MIN_SECRET_LENGTH)),
    ].sort((a, b) => b.length - a.length);
  }

  /** The configured secrets only: for a model's raw output, kept as evidence, not prose to scan. */
  exact(text: string): string {
    return this.secrets.reduce((t, secret) => t.split(secret).join(REDACTED), text);
  }

  text(text: string): string {
    return redactSecretShapes(this.exact(text));
  }

  /** Every string in a JSON-like value, masked by `mask`. */
  deep<T>(value: T, mask: (text: string) => string = (text) => this.text(text)): T {
    if (typeof value === 'string') return mask(value) as T;
    if (Array.isArray(value)) return value.map((item: unknown) => this.deep(item, mask)) as T;
    if (
      typeof value === 'object' &&
      value !== null &&
      Object.getPrototypeOf(value) === Object.prototype
    )
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, this.deep(item, mask)]),
      ) as T;
    return value;
  }

  /** A provider's error with its words masked, of the same class (the callers sort by it). */
  error(error: unknown): unknown {
    if (error instanceof ProviderCallError)
      return new ProviderCallError(
        this.text(error.message),
        error.certainty,
        error.code,
        error.httpStatus,
        error.detail && this.deep(error.detail),
      );
    if (error instanceof ContractViolation)
      return new ContractViolation(
        this.text(error.message),
        this.deep(error.rawOutput, (text) => this.exact(text)),
        error.kind,
        error.usage,
      );
    if (error instanceof Error) {
      // Kept as it is (callers tell a cancellation by its class), with every text a logger
      // prints masked: the message, the stack that repeats it, and its cause.
      error.message = this.text(error.message);
      if (error.stack) error.stack = this.text(error.stack);
      // One level down only: a cause may lead back to its error.
      if (error.cause instanceof Error && error.cause !== error) {
        error.cause.message = this.text(error.cause.message);
        if (error.cause.stack) error.cause.stack = this.text(error.cause.stack);
      }
    }
    return error;
  }
}
