import { ContractViolation, ProviderCallError } from './provider';

export const REDACTED = '[redacted]';

/**
 * Credentials by their shape, whoever's they are: OpenAI (`sk-…`, `sk-proj-…`) and Anthropic
 * (`sk-ant-…`) keys, a token after its scheme (`Bearer …`, `Basic …`), and the value of a header
 * or field that carries a key (`Authorization: …`, `x-api-key: …`, `"api_key": "…"`; a separator
 * is required, so "missing Authorization header" stays readable).
 */
const SHAPES: Array<[RegExp, string]> = [
  [/\bsk-[A-Za-z0-9_*-]{6,}/g, REDACTED],
  [/\b(Bearer)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${REDACTED}`],
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
    this.secrets = [...new Set([...secrets].filter((s): s is string => !!s))].sort(
      (a, b) => b.length - a.length,
    );
  }

  text(text: string): string {
    const masked = this.secrets.reduce((t, secret) => t.split(secret).join(REDACTED), text);
    return redactSecretShapes(masked);
  }

  /** Every string in a JSON-like value, masked. */
  deep<T>(value: T): T {
    if (typeof value === 'string') return this.text(value) as T;
    if (Array.isArray(value)) return value.map((item: unknown) => this.deep(item)) as T;
    if (
      typeof value === 'object' &&
      value !== null &&
      Object.getPrototypeOf(value) === Object.prototype
    )
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, this.deep(item)]),
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
        this.deep(error.rawOutput),
        error.kind,
        error.usage,
      );
    if (error instanceof Error) error.message = this.text(error.message);
    return error;
  }
}
