/**
 * Generated from the onejob API's OpenAPI document by `npm run client:types` (openapi-typescript).
 * Do not edit: the tests fail when this file and the API's document disagree.
 */
export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness: the process answers (it does not look at its dependencies) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {boolean} */
                            ok: true;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics: open on loopback, else Authorization: Bearer <ONEJOB_METRICS_TOKEN> */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Prometheus text exposition format; OpenMetrics, with trace ids as exemplars, when Accept names application/openmetrics-text */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/openmetrics-text": string;
                        "text/plain": string;
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/problems/{type}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What a problem type means, and its HTTP status */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    type: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            status: number;
                            title: string;
                            type: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Readiness: PostgreSQL and Temporal (its namespace) both answer; else 503 naming which did not */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            checks: {
                                [key: string]: {
                                    ms: number;
                                    ok: boolean;
                                    reason?: string;
                                };
                            };
                            /** @enum {boolean} */
                            ready: true;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/budgets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Your budgets: per job type (or all) and UTC day or month, what is reserved by attempts that may still bill, what is spent, and what is left */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            budgets: {
                                amount: number;
                                attemptsHolding: number;
                                currency: string;
                                /** @description null: every job type of the owner */
                                jobType: string | null;
                                /** @description the largest worst case a new attempt may have now */
                                left: number;
                                /**
                                 * @description a UTC day or month
                                 * @enum {string}
                                 */
                                period: "day" | "month";
                                periodStart: string;
                                /** @description worst cases of attempts that may still bill: in flight, or of unknown outcome */
                                reserved: number;
                                setAt: string;
                                /** @description what settled attempts cost (their worst case when unknown) */
                                spent: number;
                            }[];
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/callbacks/{provider}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A provider reports the outcome of an attempt (header onejob-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">) */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description t=<unix seconds>,v1=<hex HMAC-SHA256, with the provider secret, of "<t>.<exact body>"> */
                    "onejob-signature": string;
                };
                path: {
                    provider: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        attemptId: string;
                        output: unknown;
                        /** @enum {string} */
                        status: "succeeded";
                    } | {
                        attemptId: string;
                        error: string;
                        /** @enum {string} */
                        status: "failed";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            attemptId: string;
                            state: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's jobs, newest first */
        get: {
            parameters: {
                query?: {
                    /** @description nextCursor of the previous page */
                    cursor?: string;
                    /** @description input, result or input,result: list items carry these only when asked, and such a page stops before its byte bound (ONEJOB_LIST_PAGE_MAX_BYTES), with nextCursor where it stopped. */
                    include?: string;
                    limit?: number;
                    status?: "pending" | "running" | "unknown" | "succeeded" | "failed" | "cancelled";
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            jobs: {
                                attemptCount: number;
                                attempts?: {
                                    /** @enum {unknown} */
                                    callOutcome: "won" | "lost" | "rejected" | "failed" | null;
                                    cost: {
                                        amount: number;
                                        currency: string;
                                    } | null;
                                    error: unknown;
                                    finishedAt: string | null;
                                    id: string;
                                    provider: string;
                                    rawOutput: unknown;
                                    seq: number;
                                    startedAt: string | null;
                                    /** @enum {string} */
                                    state: "starting" | "running" | "succeeded" | "lost" | "failed" | "unknown" | "cancelled";
                                    usage: {
                                        cachedInputTokens?: number;
                                        inputTokens?: number;
                                        outputTokens?: number;
                                    } | null;
                                }[];
                                completedBy: string | null;
                                cost?: {
                                    amounts: {
                                        currency: string;
                                        others: number;
                                        total: number;
                                        winner: number | null;
                                    }[];
                                    tokens: {
                                        cachedInputTokens?: number;
                                        inputTokens?: number;
                                        outputTokens?: number;
                                    };
                                    unknownCalls: number;
                                };
                                createdAt: string;
                                failure: unknown;
                                finishedAt: string | null;
                                /** Format: uuid */
                                id: string;
                                idempotencyKey: string;
                                input?: {
                                    [key: string]: unknown;
                                };
                                keyGeneration: number;
                                keyRelease: {
                                    at: string;
                                    operator: string;
                                    reason: string;
                                } | null;
                                /** @enum {string} */
                                mode: "exclusive" | "hedged";
                                notes: unknown[];
                                providers: string[];
                                result?: unknown;
                                /** @enum {string} */
                                status: "pending" | "running" | "unknown" | "succeeded" | "failed" | "cancelled";
                                supersededBy: string | null;
                                supersedes: string | null;
                                type: string;
                                updatedAt: string;
                                workflowId: string;
                            }[];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        /** Create a job, or get the job this Idempotency-Key already made */
        post: {
            parameters: {
                query?: never;
                header: {
                    /** @description 1-255 printable ASCII characters, chosen by the client per intent. Keys are kept for ever: the same key always answers with its job, unless an operator released the key of an ended job (recorded on it), after which the key makes a new job. */
                    "idempotency-key": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description The job type's input; validated by its schema. */
                        input: {
                            [key: string]: unknown;
                        };
                        /**
                         * @description exclusive (default) or hedged (side-effect-free jobs only).
                         * @enum {string}
                         */
                        mode?: "exclusive" | "hedged";
                        /** @description Provider plan: the primary first, then fallbacks. Default: the service default. */
                        providers?: string[];
                        /** @description Job type, e.g. "summarize". */
                        type: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            attemptCount: number;
                            attempts?: {
                                /** @enum {unknown} */
                                callOutcome: "won" | "lost" | "rejected" | "failed" | null;
                                cost: {
                                    amount: number;
                                    currency: string;
                                } | null;
                                error: unknown;
                                finishedAt: string | null;
                                id: string;
                                provider: string;
                                rawOutput: unknown;
                                seq: number;
                                startedAt: string | null;
                                /** @enum {string} */
                                state: "starting" | "running" | "succeeded" | "lost" | "failed" | "unknown" | "cancelled";
                                usage: {
                                    cachedInputTokens?: number;
                                    inputTokens?: number;
                                    outputTokens?: number;
                                } | null;
                            }[];
                            completedBy: string | null;
                            cost?: {
                                amounts: {
                                    currency: string;
                                    others: number;
                                    total: number;
                                    winner: number | null;
                                }[];
                                tokens: {
                                    cachedInputTokens?: number;
                                    inputTokens?: number;
                                    outputTokens?: number;
                                };
                                unknownCalls: number;
                            };
                            createdAt: string;
                            failure: unknown;
                            finishedAt: string | null;
                            /** Format: uuid */
                            id: string;
                            idempotencyKey: string;
                            input: {
                                [key: string]: unknown;
                            };
                            keyGeneration: number;
                            keyRelease: {
                                at: string;
                                operator: string;
                                reason: string;
                            } | null;
                            /** @enum {string} */
                            mode: "exclusive" | "hedged";
                            notes: unknown[];
                            providers: string[];
                            result: unknown;
                            /** @enum {string} */
                            status: "pending" | "running" | "unknown" | "succeeded" | "failed" | "cancelled";
                            supersededBy: string | null;
                            supersedes: string | null;
                            type: string;
                            updatedAt: string;
                            workflowId: string;
                        };
                    };
                };
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            attemptCount: number;
                            attempts?: {
                                /** @enum {unknown} */
                                callOutcome: "won" | "lost" | "rejected" | "failed" | null;
                                cost: {
                                    amount: number;
                                    currency: string;
                                } | null;
                                error: unknown;
                                finishedAt: string | null;
                                id: string;
                                provider: string;
                                rawOutput: unknown;
                                seq: number;
                                startedAt: string | null;
                                /** @enum {string} */
                                state: "starting" | "running" | "succeeded" | "lost" | "failed" | "unknown" | "cancelled";
                                usage: {
                                    cachedInputTokens?: number;
                                    inputTokens?: number;
                                    outputTokens?: number;
                                } | null;
                            }[];
                            completedBy: string | null;
                            cost?: {
                                amounts: {
                                    currency: string;
                                    others: number;
                                    total: number;
                                    winner: number | null;
                                }[];
                                tokens: {
                                    cachedInputTokens?: number;
                                    inputTokens?: number;
                                    outputTokens?: number;
                                };
                                unknownCalls: number;
                            };
                            createdAt: string;
                            failure: unknown;
                            finishedAt: string | null;
                            /** Format: uuid */
                            id: string;
                            idempotencyKey: string;
                            input: {
                                [key: string]: unknown;
                            };
                            keyGeneration: number;
                            keyRelease: {
                                at: string;
                                operator: string;
                                reason: string;
                            } | null;
                            /** @enum {string} */
                            mode: "exclusive" | "hedged";
                            notes: unknown[];
                            providers: string[];
                            result: unknown;
                            /** @enum {string} */
                            status: "pending" | "running" | "unknown" | "succeeded" | "failed" | "cancelled";
                            supersededBy: string | null;
                            supersedes: string | null;
                            type: string;
                            updatedAt: string;
                            workflowId: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: budget-exceeded */
                402: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: too-many-waits, create-rate-limited, webhook-rate-limited, too-many-open-jobs */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a job; with ?wait=<seconds>, wait until it is terminal */
        get: {
            parameters: {
                query?: {
                    wait?: number;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            attemptCount: number;
                            attempts?: {
                                /** @enum {unknown} */
                                callOutcome: "won" | "lost" | "rejected" | "failed" | null;
                                cost: {
                                    amount: number;
                                    currency: string;
                                } | null;
                                error: unknown;
                                finishedAt: string | null;
                                id: string;
                                provider: string;
                                rawOutput: unknown;
                                seq: number;
                                startedAt: string | null;
                                /** @enum {string} */
                                state: "starting" | "running" | "succeeded" | "lost" | "failed" | "unknown" | "cancelled";
                                usage: {
                                    cachedInputTokens?: number;
                                    inputTokens?: number;
                                    outputTokens?: number;
                                } | null;
                            }[];
                            completedBy: string | null;
                            cost?: {
                                amounts: {
                                    currency: string;
                                    others: number;
                                    total: number;
                                    winner: number | null;
                                }[];
                                tokens: {
                                    cachedInputTokens?: number;
                                    inputTokens?: number;
                                    outputTokens?: number;
                                };
                                unknownCalls: number;
                            };
                            createdAt: string;
                            failure: unknown;
                            finishedAt: string | null;
                            /** Format: uuid */
                            id: string;
                            idempotencyKey: string;
                            input: {
                                [key: string]: unknown;
                            };
                            keyGeneration: number;
                            keyRelease: {
                                at: string;
                                operator: string;
                                reason: string;
                            } | null;
                            /** @enum {string} */
                            mode: "exclusive" | "hedged";
                            notes: unknown[];
                            providers: string[];
                            result: unknown;
                            /** @enum {string} */
                            status: "pending" | "running" | "unknown" | "succeeded" | "failed" | "cancelled";
                            supersededBy: string | null;
                            supersedes: string | null;
                            type: string;
                            updatedAt: string;
                            workflowId: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: too-many-waits, create-rate-limited, webhook-rate-limited, too-many-open-jobs */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Try again, or use the fallback: a new attempt under the same job */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        provider?: string;
                    } | null;
                };
            };
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            attemptId: string;
                            provider: string;
                            seq: number;
                            state: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: no-certified-provider */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel your job: a running attempt is abandoned (its outcome still reconciled); a result already recorded stands (409, with the status it ended in) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Why, as recorded with the job. Default: "cancelled by its owner". */
                        reason?: string;
                    } | null;
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            attemptCount: number;
                            attempts?: {
                                /** @enum {unknown} */
                                callOutcome: "won" | "lost" | "rejected" | "failed" | null;
                                cost: {
                                    amount: number;
                                    currency: string;
                                } | null;
                                error: unknown;
                                finishedAt: string | null;
                                id: string;
                                provider: string;
                                rawOutput: unknown;
                                seq: number;
                                startedAt: string | null;
                                /** @enum {string} */
                                state: "starting" | "running" | "succeeded" | "lost" | "failed" | "unknown" | "cancelled";
                                usage: {
                                    cachedInputTokens?: number;
                                    inputTokens?: number;
                                    outputTokens?: number;
                                } | null;
                            }[];
                            completedBy: string | null;
                            cost?: {
                                amounts: {
                                    currency: string;
                                    others: number;
                                    total: number;
                                    winner: number | null;
                                }[];
                                tokens: {
                                    cachedInputTokens?: number;
                                    inputTokens?: number;
                                    outputTokens?: number;
                                };
                                unknownCalls: number;
                            };
                            createdAt: string;
                            failure: unknown;
                            finishedAt: string | null;
                            /** Format: uuid */
                            id: string;
                            idempotencyKey: string;
                            input: {
                                [key: string]: unknown;
                            };
                            keyGeneration: number;
                            keyRelease: {
                                at: string;
                                operator: string;
                                reason: string;
                            } | null;
                            /** @enum {string} */
                            mode: "exclusive" | "hedged";
                            notes: unknown[];
                            providers: string[];
                            result: unknown;
                            /** @enum {string} */
                            status: "pending" | "running" | "unknown" | "succeeded" | "failed" | "cancelled";
                            supersededBy: string | null;
                            supersedes: string | null;
                            type: string;
                            updatedAt: string;
                            workflowId: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/jobs/{id}/webhook-deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A job's webhook deliveries, in the order they are sent, with every try, a page at a time */
        get: {
            parameters: {
                query?: {
                    /** @description nextCursor of the previous page */
                    cursor?: string;
                    limit?: number;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            deliveries: {
                                createdAt: string;
                                endedAt: string | null;
                                /** Format: uuid */
                                endpointId: string;
                                /** @enum {string} */
                                event: "job.succeeded" | "job.failed" | "job.cancelled" | "job.needs_operator" | "job.late_result";
                                /** Format: uuid */
                                id: string;
                                lastError: string | null;
                                /** @enum {string} */
                                state: "pending" | "delivered" | "failed" | "abandoned";
                                tries: {
                                    at: string;
                                    durationMs: number;
                                    error: string | null;
                                    n: number;
                                    /** @description The receiver's HTTP status; null: no answer. */
                                    status: number | null;
                                }[];
                                url: string;
                                /**
                                 * Format: uuid
                                 * @description Sent as webhook-id, the same on every try: the delivery’s id, or for a redelivery the first delivery’s.
                                 */
                                webhookId: string;
                            }[];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: too-many-waits, create-rate-limited, webhook-rate-limited, too-many-open-jobs */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/attempts/{attemptId}/resolve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Settle an unknown attempt: failed (with a reason) or succeeded (with its result, through the CAS) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    attemptId: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        outcome: "failed";
                        reason: string;
                    } | {
                        /** @enum {string} */
                        outcome: "succeeded";
                        reason: string;
                        result: unknown;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            attemptId: string;
                            /**
                             * @description A `failed` given while the call may still land: held on the attempt, which stays unknown until the call is over (then it settles failed), unless the call answers success first
                             * @enum {boolean}
                             */
                            held?: true;
                            state: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/budgets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every owner's budgets (or one owner's), with their current period's figures */
        get: {
            parameters: {
                query?: {
                    owner?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            budgets: {
                                amount: number;
                                attemptsHolding: number;
                                currency: string;
                                /** @description null: every job type of the owner */
                                jobType: string | null;
                                /** @description the largest worst case a new attempt may have now */
                                left: number;
                                ownerId: string;
                                /**
                                 * @description a UTC day or month
                                 * @enum {string}
                                 */
                                period: "day" | "month";
                                periodStart: string;
                                reason: string;
                                /** @description worst cases of attempts that may still bill: in flight, or of unknown outcome */
                                reserved: number;
                                setAt: string;
                                setBy: string;
                                /** @description what settled attempts cost (their worst case when unknown) */
                                spent: number;
                            }[];
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/budgets/{owner}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Set an owner's budget for a job type (or all) and period; recorded with your name and reason. It holds from the next attempt on */
        put: {
            parameters: {
                query: {
                    /** @description the job type it covers; without it, every job type */
                    jobType?: string;
                    period: "day" | "month";
                };
                header?: never;
                path: {
                    owner: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        amount: number;
                        currency: string;
                        reason: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            changed: boolean;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        post?: never;
        /** Remove an owner's budget; recorded with your name and reason */
        delete: {
            parameters: {
                query: {
                    /** @description the job type it covers; without it, every job type */
                    jobType?: string;
                    period: "day" | "month";
                };
                header?: never;
                path: {
                    owner: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        reason: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            changed: boolean;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/budgets/{owner}/changes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The last 100 changes to an owner's budgets: who, when, why, before and after */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    owner: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            changes: {
                                [key: string]: unknown;
                            }[];
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/jobs/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel a job; results that still arrive are discarded and logged */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        reason: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            jobId: string;
                            status: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/jobs/{id}/release-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Release an ended job's Idempotency-Key: the next create with it makes a new job, linked to this one */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        reason: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            jobId: string;
                            keyGeneration: number;
                            keyRelease: {
                                at: string;
                                operator: string;
                                reason: string;
                            };
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/webhook-actions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What operators did to webhook endpoints (who, what, which endpoint of which owner, why, when), newest first, a page at a time */
        get: {
            parameters: {
                query?: {
                    /** @description nextCursor of the previous page */
                    cursor?: string;
                    /** @description only this endpoint */
                    endpoint?: string;
                    limit?: number;
                    /** @description only this owner's endpoints */
                    owner?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            actions: {
                                /** @enum {string} */
                                action: "disable" | "enable" | "delete";
                                at: string;
                                /** Format: uuid */
                                endpointId: string;
                                id: string;
                                operator: string;
                                ownerId: string;
                                reason: string;
                            }[];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every owner's webhook endpoints (or one owner's), oldest first, a page at a time, never with their secrets */
        get: {
            parameters: {
                query?: {
                    /** @description nextCursor of the previous page */
                    cursor?: string;
                    limit?: number;
                    /** @description only this owner */
                    owner?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            endpoints: {
                                /** @description The endpoint's circuit breaker: a receiver that keeps failing costs a probe, not a try per event */
                                breaker: {
                                    /** @description Tries in a row not answered 2xx; a 2xx sets it back to 0 */
                                    failuresInARow: number;
                                    /** @description When the last hold ends (or ended) */
                                    heldUntil: string | null;
                                    /** @description Why it was held */
                                    reason: string | null;
                                    /**
                                     * @description closed: tries go as events come; open: nothing is sent before heldUntil; half_open: the hold is over, the next try is a probe
                                     * @enum {string}
                                     */
                                    state: "closed" | "open" | "half_open";
                                };
                                createdAt: string;
                                /** @description Set by a delete (only its answer shows one): gone for its owner and operators. */
                                deletedAt: string | null;
                                description: string | null;
                                disabledAt: string | null;
                                /** @description An operator disabled it: its owner cannot enable it, an operator can. */
                                disabledByOperator: boolean;
                                disabledReason: string | null;
                                events: ("job.succeeded" | "job.failed" | "job.cancelled" | "job.needs_operator" | "job.late_result")[];
                                /** Format: uuid */
                                id: string;
                                ownerId: string;
                                url: string;
                            }[];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/webhooks/{id}/delete": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Delete any owner's endpoint: nothing more is sent to it, what waited is abandoned; recorded with your name and reason */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        reason: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            createdAt: string;
                            /** @description Set by a delete (only its answer shows one): gone for its owner and operators. */
                            deletedAt: string | null;
                            description: string | null;
                            disabledAt: string | null;
                            /** @description An operator disabled it: its owner cannot enable it, an operator can. */
                            disabledByOperator: boolean;
                            disabledReason: string | null;
                            events: ("job.succeeded" | "job.failed" | "job.cancelled" | "job.needs_operator" | "job.late_result")[];
                            /** Format: uuid */
                            id: string;
                            ownerId: string;
                            url: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/webhooks/{id}/disable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Disable any owner's endpoint: nothing more is sent to it, what waited is abandoned, and only an operator can enable it again; recorded with your name and reason */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        reason: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            createdAt: string;
                            /** @description Set by a delete (only its answer shows one): gone for its owner and operators. */
                            deletedAt: string | null;
                            description: string | null;
                            disabledAt: string | null;
                            /** @description An operator disabled it: its owner cannot enable it, an operator can. */
                            disabledByOperator: boolean;
                            disabledReason: string | null;
                            events: ("job.succeeded" | "job.failed" | "job.cancelled" | "job.needs_operator" | "job.late_result")[];
                            /** Format: uuid */
                            id: string;
                            ownerId: string;
                            url: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/webhooks/{id}/enable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Enable an endpoint again (whoever disabled it): later events go to it; recorded with your name and reason */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        reason: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            createdAt: string;
                            /** @description Set by a delete (only its answer shows one): gone for its owner and operators. */
                            deletedAt: string | null;
                            description: string | null;
                            disabledAt: string | null;
                            /** @description An operator disabled it: its owner cannot enable it, an operator can. */
                            disabledByOperator: boolean;
                            disabledReason: string | null;
                            events: ("job.succeeded" | "job.failed" | "job.cancelled" | "job.needs_operator" | "job.late_result")[];
                            /** Format: uuid */
                            id: string;
                            ownerId: string;
                            url: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/operator/webhooks/{id}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send events again to any owner's endpoint: one delivery's event, or every event undelivered since a time; the same webhook-id and bytes, recorded with your name and reason */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Send this delivery’s event again, whatever became of it (unless one waits). */
                        deliveryId?: string;
                        /**
                         * Format: date-time
                         * @description Send again every event whose delivery to the endpoint ended undelivered (failed, or abandoned while it was disabled) since this time, not those delivered or waiting since; at most 500 per request.
                         */
                        failedSince?: string;
                        /** @description Why, kept on each new delivery (required from operators). */
                        reason?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The bound was reached: ask again for what may be left (an ask with none sends none). */
                            more: boolean;
                            redelivered: {
                                /**
                                 * Format: uuid
                                 * @description The new delivery, listed with the job’s deliveries.
                                 */
                                deliveryId: string;
                                /** Format: uuid */
                                jobId: string;
                                /**
                                 * Format: uuid
                                 * @description Sent as webhook-id: the first delivery’s, as before.
                                 */
                                webhookId: string;
                            }[];
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Your webhook endpoints, oldest first, a page at a time */
        get: {
            parameters: {
                query?: {
                    /** @description nextCursor of the previous page */
                    cursor?: string;
                    limit?: number;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            endpoints: {
                                /** @description The endpoint's circuit breaker: a receiver that keeps failing costs a probe, not a try per event */
                                breaker: {
                                    /** @description Tries in a row not answered 2xx; a 2xx sets it back to 0 */
                                    failuresInARow: number;
                                    /** @description When the last hold ends (or ended) */
                                    heldUntil: string | null;
                                    /** @description Why it was held */
                                    reason: string | null;
                                    /**
                                     * @description closed: tries go as events come; open: nothing is sent before heldUntil; half_open: the hold is over, the next try is a probe
                                     * @enum {string}
                                     */
                                    state: "closed" | "open" | "half_open";
                                };
                                createdAt: string;
                                description: string | null;
                                disabledAt: string | null;
                                disabledReason: string | null;
                                events: ("job.succeeded" | "job.failed" | "job.cancelled" | "job.needs_operator" | "job.late_result")[];
                                /** Format: uuid */
                                id: string;
                                url: string;
                            }[];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: too-many-waits, create-rate-limited, webhook-rate-limited, too-many-open-jobs */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        /** Register a webhook endpoint: your jobs’ events are POSTed to it, signed per Standard Webhooks with the secret in this answer (shown only here) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        description?: string;
                        /** @description The events it takes. Default: all of them. */
                        events?: ("job.succeeded" | "job.failed" | "job.cancelled" | "job.needs_operator" | "job.late_result")[];
                        /**
                         * Format: uri
                         * @description Where events are POSTed: https, or http where the deployment allows it (ONEJOB_WEBHOOK_PLAIN_HTTP).
                         */
                        url: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            createdAt: string;
                            description: string | null;
                            disabledAt: string | null;
                            disabledReason: string | null;
                            events: ("job.succeeded" | "job.failed" | "job.cancelled" | "job.needs_operator" | "job.late_result")[];
                            /** Format: uuid */
                            id: string;
                            /** @description whsec_…: the signing secret. Keep it; it is not shown again. */
                            secret: string;
                            url: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: too-many-waits, create-rate-limited, webhook-rate-limited, too-many-open-jobs */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One of your webhook endpoints */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The endpoint's circuit breaker: a receiver that keeps failing costs a probe, not a try per event */
                            breaker: {
                                /** @description Tries in a row not answered 2xx; a 2xx sets it back to 0 */
                                failuresInARow: number;
                                /** @description When the last hold ends (or ended) */
                                heldUntil: string | null;
                                /** @description Why it was held */
                                reason: string | null;
                                /**
                                 * @description closed: tries go as events come; open: nothing is sent before heldUntil; half_open: the hold is over, the next try is a probe
                                 * @enum {string}
                                 */
                                state: "closed" | "open" | "half_open";
                            };
                            createdAt: string;
                            description: string | null;
                            disabledAt: string | null;
                            disabledReason: string | null;
                            events: ("job.succeeded" | "job.failed" | "job.cancelled" | "job.needs_operator" | "job.late_result")[];
                            /** Format: uuid */
                            id: string;
                            url: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: too-many-waits, create-rate-limited, webhook-rate-limited, too-many-open-jobs */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Delete a webhook endpoint: nothing more is sent to it; what waited is abandoned */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Deleted. */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: too-many-waits, create-rate-limited, webhook-rate-limited, too-many-open-jobs */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/enable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Turn an endpoint on again after a 410 disabled it: later events go to it (not one an operator disabled) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            createdAt: string;
                            description: string | null;
                            disabledAt: string | null;
                            disabledReason: string | null;
                            events: ("job.succeeded" | "job.failed" | "job.cancelled" | "job.needs_operator" | "job.late_result")[];
                            /** Format: uuid */
                            id: string;
                            url: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: too-many-waits, create-rate-limited, webhook-rate-limited, too-many-open-jobs */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send events again to one of your endpoints: one delivery’s event, or every event undelivered since a time; the same webhook-id and bytes as before */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Send this delivery’s event again, whatever became of it (unless one waits). */
                        deliveryId?: string;
                        /**
                         * Format: date-time
                         * @description Send again every event whose delivery to the endpoint ended undelivered (failed, or abandoned while it was disabled) since this time, not those delivered or waiting since; at most 500 per request.
                         */
                        failedSince?: string;
                        /** @description Why, kept on each new delivery (required from operators). */
                        reason?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The bound was reached: ask again for what may be left (an ask with none sends none). */
                            more: boolean;
                            redelivered: {
                                /**
                                 * Format: uuid
                                 * @description The new delivery, listed with the job’s deliveries.
                                 */
                                deliveryId: string;
                                /** Format: uuid */
                                jobId: string;
                                /**
                                 * Format: uuid
                                 * @description Sent as webhook-id: the first delivery’s, as before.
                                 */
                                webhookId: string;
                            }[];
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: too-many-waits, create-rate-limited, webhook-rate-limited, too-many-open-jobs */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{id}/secret-rotations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Rotate the signing secret without a gap: the new one signs from now on, the old one too until it expires */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description How long the replaced secret still signs. Default: 86400 (a day). */
                        previousSecretExpiresInSeconds?: number;
                    } | null;
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            previousSecretExpiresAt: string;
                            /** @description whsec_…: the new secret; it is not shown again. */
                            secret: string;
                        };
                    };
                };
                /** @description application/problem+json: validation-error, malformed-request, invalid-cursor, malformed-body, idempotency-key-missing, idempotency-key-invalid, unknown-job-type, invalid-input, unknown-provider, incompatible-provider, hedging-not-allowed */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unauthorized, bad-signature */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: not-found */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: idempotency-key-reuse, attempt-in-flight, job-terminal, job-not-ended, key-already-released, attempt-may-take-effect, attempt-not-resolvable, provider-not-certified, attempt-limit-reached, provider-unavailable, too-many-webhook-endpoints, too-many-live-secrets, delivery-pending, endpoint-disabled, endpoint-disabled-by-operator, workflow-paused, budget-currency-fixed */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: body-too-large */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: uri-too-long */
                414: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: unsupported-media-type */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: expectation-failed */
                417: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: too-many-waits, create-rate-limited, webhook-rate-limited, too-many-open-jobs */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: internal */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description application/problem+json: service-unavailable, workflow-start-refused */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/problem+json": {
                            detail?: string;
                            status: number;
                            title: string;
                            type: string;
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: never;
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
