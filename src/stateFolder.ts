import path from 'node:path';

/** The checkout this file belongs to (src/ under ts-node and tests, dist/ when built). */
const CHECKOUT = path.resolve(__dirname, '..');

/**
 * `npm start`'s state folder (Temporal's SQLite file, embedded PostgreSQL's data, the record
 * of its database): ONEJOB_STATE_DIR, else `.onejob/` in the checkout. The operator CLI looks
 * in the same place.
 */
export function stateFolder(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.ONEJOB_STATE_DIR || path.join(CHECKOUT, '.onejob'));
}
