/** The reason every operator action carries, one rule for all of the operator's routes. */
import { z } from 'zod';
import { storableText } from '../storable';

/** Why the operator acted, as recorded with the job or the endpoint. */
export const reason = storableText(z.string().min(1).max(2000));
