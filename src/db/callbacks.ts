import type { Queryable } from './pool';

/** A signed provider callback we accepted, with what it came to. */
export interface CallbackReceipt {
  provider: string;
  digest: string;
  attemptId: string;
  outcome: unknown;
}

export async function findCallbackReceipt(
  db: Queryable,
  provider: string,
  digest: string,
): Promise<CallbackReceipt | undefined> {
  const { rows } = await db.query<{ attempt_id: string; outcome: unknown }>(
    'SELECT attempt_id, outcome FROM provider_callbacks WHERE provider = $1 AND digest = $2',
    [provider, digest],
  );
  const row = rows[0];
  return row && { provider, digest, attemptId: row.attempt_id, outcome: row.outcome };
}

/** Records a callback once; false when the same signed callback was recorded before. */
export async function saveCallbackReceipt(
  db: Queryable,
  receipt: CallbackReceipt & { signedAt: Date },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO provider_callbacks (provider, digest, attempt_id, signed_at, outcome)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (provider, digest) DO NOTHING`,
    [
      receipt.provider,
      receipt.digest,
      receipt.attemptId,
      receipt.signedAt,
      JSON.stringify(receipt.outcome),
    ],
  );
  return rowCount === 1;
}
