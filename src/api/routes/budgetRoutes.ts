/** Budgets: an owner reads its own; operators read, set and remove anyone's, with a reason. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  allBudgets,
  budgetChanges,
  budgetsOfOwner,
  BudgetCurrencyChange,
  changeBudget,
} from '../../db/budgets';
import { BUDGET_PERIODS, type BudgetView } from '../../domain/budgets';
import { CURRENCY_CODE } from '../../domain/cost';
import { authHeaders } from '../auth';
import type { ApiDeps } from '../deps';
import { BODY_ERRORS, problemResponses } from '../openapi';
import { sendProblem } from '../problems';
import { storableText } from '../storable';
import { reason } from './operatorReason';

const budgetSchema = z.object({
  jobType: z.string().nullable().describe('null: every job type of the owner'),
  period: z.enum(BUDGET_PERIODS).describe('a UTC day or month'),
  currency: z.string(),
  amount: z.number(),
  periodStart: z.string(),
  reserved: z
    .number()
    .describe('worst cases of attempts that may still bill: in flight, or of unknown outcome'),
  spent: z.number().describe('what settled attempts cost (their worst case when unknown)'),
  left: z.number().describe('the largest worst case a new attempt may have now'),
  attemptsHolding: z.number().int(),
  setAt: z.string(),
});

const ownerView = (budget: BudgetView): z.infer<typeof budgetSchema> => ({
  jobType: budget.jobType,
  period: budget.period,
  currency: budget.currency,
  amount: budget.amount,
  periodStart: budget.periodStart,
  reserved: budget.reserved,
  spent: budget.spent,
  left: budget.left,
  attemptsHolding: budget.attemptsHolding,
  setAt: budget.setAt,
});

/** GET /v1/budgets: the owner's own budgets (under jobRoutes' token check). */
export const ownerBudgetRoutes: FastifyPluginAsyncZod<{ deps: Pick<ApiDeps, 'pool'> }> = async (
  app,
  { deps },
) => {
  app.get(
    '/budgets',
    {
      schema: {
        summary:
          'Your budgets: per job type (or all) and UTC day or month, what is reserved by attempts that may still bill, what is spent, and what is left',
        headers: authHeaders,
        response: { 200: z.object({ budgets: z.array(budgetSchema) }), ...problemResponses(401) },
      },
    },
    async (request) => ({
      budgets: (await budgetsOfOwner(deps.pool, request.ownerId)).map(ownerView),
    }),
  );
};

const ownerParam = z.object({ owner: storableText(z.string().min(1).max(200)) });
const scopeQuery = z.object({
  jobType: storableText(z.string().min(1).max(100))
    .optional()
    .describe('the job type it covers; without it, every job type'),
  period: z.enum(BUDGET_PERIODS),
});

/** The operator's budget routes (under operatorRoutes, which authenticates them). */
export const operatorBudgetRoutes: FastifyPluginAsyncZod<{ deps: Pick<ApiDeps, 'pool'> }> = async (
  app,
  { deps },
) => {
  app.get(
    '/budgets',
    {
      schema: {
        summary: "Every owner's budgets (or one owner's), with their current period's figures",
        headers: authHeaders,
        querystring: z.object({ owner: storableText(z.string().max(200)).optional() }),
        response: {
          200: z.object({
            budgets: z.array(
              budgetSchema.extend({ ownerId: z.string(), setBy: z.string(), reason: z.string() }),
            ),
          }),
          ...problemResponses(401),
        },
      },
    },
    async (request) => {
      const { owner } = request.query;
      const budgets = owner ? await budgetsOfOwner(deps.pool, owner) : await allBudgets(deps.pool);
      return {
        budgets: budgets.map((budget) => ({
          ...ownerView(budget),
          ownerId: budget.ownerId,
          setBy: budget.setBy,
          reason: budget.reason,
        })),
      };
    },
  );

  app.put(
    '/budgets/:owner',
    {
      schema: {
        summary:
          "Set an owner's budget for a job type (or all) and period; recorded with your name and reason. It holds from the next attempt on",
        headers: authHeaders,
        params: ownerParam,
        querystring: scopeQuery,
        body: z.strictObject({
          currency: z.string().regex(CURRENCY_CODE, 'an ISO 4217 code, e.g. USD'),
          amount: z.number().min(0).max(1e12),
          reason,
        }),
        response: {
          200: z.object({ changed: z.boolean() }),
          ...problemResponses(401, 409, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { currency, amount, reason: why } = request.body;
      try {
        const changed = await changeBudget(
          deps.pool,
          scopeOf(request.params.owner, request.query),
          { currency, amount },
          { actor: request.ownerId, reason: why },
        );
        return { changed };
      } catch (error) {
        if (error instanceof BudgetCurrencyChange)
          return sendProblem(reply, 'budget-currency-fixed', error.message);
        throw error;
      }
    },
  );

  app.delete(
    '/budgets/:owner',
    {
      schema: {
        summary: "Remove an owner's budget; recorded with your name and reason",
        headers: authHeaders,
        params: ownerParam,
        querystring: scopeQuery,
        body: z.strictObject({ reason }),
        response: {
          200: z.object({ changed: z.boolean() }),
          ...problemResponses(401, ...BODY_ERRORS),
        },
      },
    },
    async (request) => ({
      changed: await changeBudget(deps.pool, scopeOf(request.params.owner, request.query), null, {
        actor: request.ownerId,
        reason: request.body.reason,
      }),
    }),
  );

  app.get(
    '/budgets/:owner/changes',
    {
      schema: {
        summary: "The last 100 changes to an owner's budgets: who, when, why, before and after",
        headers: authHeaders,
        params: ownerParam,
        response: {
          200: z.object({ changes: z.array(z.record(z.string(), z.unknown())) }),
          ...problemResponses(401),
        },
      },
    },
    async (request) => ({ changes: await budgetChanges(deps.pool, request.params.owner) }),
  );
};

function scopeOf(ownerId: string, query: z.infer<typeof scopeQuery>) {
  return { ownerId, jobType: query.jobType ?? null, period: query.period };
}
