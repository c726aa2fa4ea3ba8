// Generated from the served OpenAPI document by `npm run client:generate`. Do not edit.

export interface paths {
    "/pets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List animals
         * @description Pets in ascending id order. While more follow, `Link: rel="next"` gives the next page. Needs a key with the scope `pets:read`.
         */
        get: operations["listPets"];
        put?: never;
        /**
         * Add an animal
         * @description Send an Idempotency-Key to make retrying safe. Needs a key with the scope `pets:write`.
         */
        post: operations["addPet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/pets/{petId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get an animal
         * @deprecated
         * @description Deprecated: removed at the Sunset date. Use `GET /pets` with the `status` filter. Needs a key with the scope `pets:read`.
         */
        get: operations["getPet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/rate_limit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The key's account, plan, windows, credits and ban; never counts against them
         * @description The windows are the account's, shared by all of its keys; a ban is the key's own. Answers even while the key is refused or banned. `used` counts what every instance has counted, including requests another instance holds in advance and has not yet served: what the answering instance counted shows at once, the others within about a second (3 s for a key that asks more often than that).
         */
        get: operations["getRateLimit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The keys of the calling key's account
         * @description In ascending id order, revoked ones included; never a secret. While more follow, `Link: rel="next"` gives the next page. Needs a key with the scope `keys:manage`.
         */
        get: operations["listKeys"];
        put?: never;
        /**
         * Issue a key in the calling key's account; its secret is shown only in this answer
         * @description With scopes the calling key has, expiring no later than it does (with it, when `expiresAt` is not given), usable only from the addresses the calling key is. Idempotency-Key is refused here: a replay would have to show the secret again, and it is never stored; after a failure, look for the key by its name in `GET /keys`. Needs a key with the scope `keys:manage`.
         */
        post: operations["createKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/keys/{id}/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Give a key of the account a new secret, shown only in this answer
         * @description The secret replaced stops working at once, or keeps working for `graceSeconds` (at most a week), as on the admin API; the answer's `previousSecretExpiresAt` says until when. The calling key itself included. The key must be within the calling key's rights: no scope it lacks, no later expiry, and no address the calling key may not be used from. The body may be left out. Needs a key with the scope `keys:manage`.
         */
        post: operations["rotateKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke a key of the account; every instance refuses it within a second
         * @description The calling key itself included. Revoking a revoked key changes nothing and answers the same. Needs a key with the scope `keys:manage`.
         */
        delete: operations["revokeKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The usage of the calling key's account, per key and UTC hour or day
         * @description The figures of the admin usage export, for the keys of the calling key’s account alone (never another account’s): requests admitted, refused with 429, and the units the admitted spent. Rows are ordered by period, then key; periods in which a key had no request are left out. While more follow, `Link: rel="next"` gives the next page. An hour shows the requests admitted in it by the database’s clock, each instance reporting within about 5 seconds. Needs a key with the scope `usage:read`.
         */
        get: operations["getUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/decisions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Decides and charges a request that another service received with a customer's key
         * @description For services other than the store: the answer the pets API would give the key for this method and path, charged to the key's account exactly as the pets API charges its own requests, across instances. A refusal is not an error: the answer is 200 with `admitted: false` and its `code`, and a key that keeps sending while refused is banned as on the pets API. `headers` holds the values to send the customer. Needs an operator token of the role `service` (`npm run cli -- operators create --role service`); an API key gets 401.
         */
        post: operations["decide"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/authorize": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Authorizes and charges the request a proxy holds (nginx auth_request, Envoy ext_authz)
         * @description Send the customer's Authorization header and the request's method and URI in X-Original-Method and X-Original-URI. The key is charged for that request as the pets API charges its own (its cost is what the plan's costs name for the method and path, or a template matching it, else 1). 200 carries the key's account, id and scopes in headers for the proxy to pass to the service behind it, with the rate-limit headers for the client; a refusal is 401, 403 or 429 with the Error body and its code also in X-Error-Code. docs/deploy.md has the nginx configuration that carries a 429 to the client. A proxy that checks with the request's own method on its path behind a prefix (Envoy's ext_authz) calls /v1/authorize/{path} with any method instead, and is answered the same.
         */
        get: operations["authorize"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * PetStatus
         * @description Availability status
         * @enum {string}
         */
        PetStatus: "available" | "pending" | "sold";
        /** NewPet */
        NewPet: {
            /** @description The animal's name */
            name: string;
            /**
             * Format: int64
             * @description Identifier of the category the animal belongs to
             */
            categoryId: bigint;
            status?: components["schemas"]["PetStatus"];
        };
        /** Pet */
        Pet: {
            /**
             * Format: int64
             * @description Unique identifier, assigned by the service on creation
             */
            id: bigint;
            /** @description The animal's name */
            name: string;
            /**
             * Format: int64
             * @description Identifier of the category the animal belongs to
             */
            categoryId: bigint;
            status?: components["schemas"]["PetStatus"];
        };
        /** Pets */
        Pets: components["schemas"]["Pet"][];
        /** RateLimitStatus */
        RateLimitStatus: {
            /** @description The customer whose plan and windows the key shares */
            account: {
                /**
                 * Format: int64
                 * @description The account the key belongs to
                 */
                id: bigint;
                /** @description The operator's own id of the customer; null for an account made for a single key */
                externalId: string | null;
            };
            /** @description The account's plan */
            plan: string;
            windows: {
                /** @description The UTC window: second, minute, hour, day or calendar month */
                name: "second" | "minute" | "hour" | "day" | "month";
                /** @description fixed: the window resets at its end; bucket: units come back evenly over the window */
                algorithm: "fixed" | "bucket";
                /** @description A shadow limit: counted like the others, never refusing; `used` may pass its `limit` */
                shadow: boolean;
                /** @description Units the window allows (a bucket: the most it holds, its burst) */
                limit: number;
                /** @description Units counted in the window so far */
                used: number;
                /** @description Units left in the window, or in the bucket */
                remaining: number;
                /** @description Unix time, in seconds, at which the window resets (a bucket: is full again) */
                reset: number;
            }[];
            /** @description The units each route named by the plan costs (`POST /v1/pets`); any other route costs 1 */
            costs: {
                [key: string]: number;
            };
            /** @description The account's prepaid units left; null when it has no credits */
            credits: number | null;
            /** @description Until when the key is banned for sending while refused; null when it is not */
            bannedUntil: string | null;
        };
        /**
         * Scope
         * @description pets:read: GET /v1/pets and /v1/pets/{petId}; pets:write: POST /v1/pets; keys:manage: the key's own account's keys through /v1/keys; usage:read: the key's own account's usage through GET /v1/usage
         * @enum {string}
         */
        Scope: "pets:read" | "pets:write" | "keys:manage" | "usage:read";
        /** ApiKey */
        ApiKey: {
            /**
             * Format: int64
             * @description The key
             */
            id: bigint;
            /**
             * @description The readable start of the secret, the same in the audit trail
             * @example ask_3kT9aQ2x
             */
            prefix: string;
            name: string | null;
            /** @description What the key may do */
            scopes: components["schemas"]["Scope"][];
            /**
             * Format: date-time
             * @description When the key was issued
             */
            createdAt: string;
            expiresAt: string | null;
            revokedAt: string | null;
            previousPrefix: string | null;
            previousSecretExpiresAt: string | null;
        };
        /** ApiKeys */
        ApiKeys: components["schemas"]["ApiKey"][];
        /** IssuedApiKey */
        IssuedApiKey: {
            /**
             * Format: int64
             * @description The key
             */
            id: bigint;
            /**
             * @description The readable start of the secret, the same in the audit trail
             * @example ask_3kT9aQ2x
             */
            prefix: string;
            name: string | null;
            /** @description What the key may do */
            scopes: components["schemas"]["Scope"][];
            /**
             * Format: date-time
             * @description When the key was issued
             */
            createdAt: string;
            expiresAt: string | null;
            revokedAt: string | null;
            previousPrefix: string | null;
            previousSecretExpiresAt: string | null;
            /** @description The secret, shown only this once */
            key: string;
        };
        /** NewApiKey */
        NewApiKey: {
            /** @description A label for the key; no control characters or bidirectional overrides */
            name?: string;
            /** @description What the key may do: only scopes the calling key has itself */
            scopes: components["schemas"]["Scope"][];
            /**
             * Format: date-time
             * @description When the key stops working: no later than the calling key does. Without it, the new key expires with the calling key (never, when that one never does)
             */
            expiresAt?: string;
        };
        /** KeyRotation */
        KeyRotation: {
            /**
             * Format: int64
             * @description How long the secret replaced keeps working beside the new one, by the database clock, on the same account and windows: 0 (the default) stops it at once, 604800 is a week. A secret still in an earlier rotation's grace stops at once either way
             */
            graceSeconds?: bigint;
        };
        /** UsageRow */
        UsageRow: {
            /**
             * Format: date-time
             * @description The start of the UTC hour or day
             */
            start: string;
            /**
             * Format: int64
             * @description The key's account: always the calling key's
             */
            accountId: bigint;
            /**
             * Format: int64
             * @description The key
             */
            keyId: bigint;
            /** @description Requests admitted */
            admitted: number;
            /** @description Requests refused with 429 */
            refused: number;
            /** @description Units the admitted requests spent */
            units: number;
        };
        /** UsageRows */
        UsageRows: components["schemas"]["UsageRow"][];
        /** DecisionRequest */
        DecisionRequest: {
            /**
             * @description The customer's API key, as the customer sent it to the calling service
             * @example ask_3kT9aQ2x_0123456789abcdefghijklmnopqrstuv_1a2b3c
             */
            key: string;
            /**
             * @description The method of the customer's request
             * @example GET
             */
            method: string;
            /**
             * @description The path of the customer's request; a query is ignored. Its cost is what the plan's costs name for this method and path, or for a template that matches it (`GET /v1/orders/{id}`), else 1
             * @example /v1/orders
             */
            path: string;
            /** @description Units to charge instead of the plan's cost for the route */
            cost?: number;
            /**
             * @description The customer's client address: a key with allowed addresses is admitted only with one of them
             * @example 203.0.113.7
             */
            address?: string;
        };
        /** Decision */
        Decision: {
            /** @description Whether the request may go on; it has been charged when it may */
            admitted: boolean;
            /** @description null when admitted; otherwise why not: `invalid_key` (unknown, revoked or expired: nothing else is told), `rate_limited`, `credits_exhausted`, `key_banned` (as the pets API answers 429), `address_not_allowed` (nothing charged) */
            code: "invalid_key" | "rate_limited" | "credits_exhausted" | "key_banned" | "address_not_allowed" | null;
            /**
             * Format: int64
             * @description The key's account
             */
            accountId?: bigint;
            /**
             * Format: int64
             * @description The key
             */
            keyId?: bigint;
            /** @description What the key may do */
            scopes?: components["schemas"]["Scope"][];
            /** @description The operators' metadata on the key */
            metadata?: {
                [key: string]: unknown;
            };
            /** @description The rate-limit headers the pets API would send the customer for this request */
            headers?: {
                "ratelimit-policy": string | null;
                ratelimit: string | null;
                "retry-after": string | null;
            };
        };
        /** Authorization */
        Authorization: {
            /**
             * Format: int64
             * @description The key's account, also in X-Account-Id
             */
            accountId: bigint;
            /**
             * Format: int64
             * @description The key, also in X-Key-Id
             */
            keyId: bigint;
            /** @description What the key may do */
            scopes: components["schemas"]["Scope"][];
        };
        /** Error */
        Error: {
            /**
             * @description Machine-readable error code
             * @example invalid_request
             * @enum {string}
             */
            code: "invalid_request" | "invalid_json" | "unauthorized" | "insufficient_scope" | "address_not_allowed" | "insufficient_role" | "forbidden" | "not_found" | "method_not_allowed" | "not_acceptable" | "request_timeout" | "idempotency_key_in_use" | "account_exists" | "account_closed" | "key_revoked" | "operator_exists" | "gone" | "length_required" | "precondition_failed" | "payload_too_large" | "uri_too_long" | "unsupported_media_type" | "range_not_satisfiable" | "idempotency_key_reused" | "rate_limited" | "credits_exhausted" | "key_banned" | "headers_too_large" | "internal_error" | "service_unavailable";
            /** @description Human-readable description */
            message: string;
            /** @description The HTTP status code */
            status: number;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listPets: {
        parameters: {
            query?: {
                /** @description Maximum number of animals to return */
                limit?: number;
                status?: components["schemas"]["PetStatus"];
                /** @description Opaque position from a `Link: rel="next"` header */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of pets */
            200: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Sent while more follow: the next page, with the same filter and limit */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pets"];
                };
            };
            /** @description `invalid_request`: a query value is invalid, or the cursor is not one this listing issued */
            400: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the API key is missing, malformed, unknown, revoked or expired */
            401: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The bearer challenge, with error="invalid_token" when a key was sent */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_scope`: the API key lacks the scope pets:read; `address_not_allowed`: the API key may not be used from the client address (its allowed addresses); nothing is counted against the key */
            403: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description With insufficient_scope, the bearer challenge naming the scope the operation needs */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: a window of the plan is exhausted; `key_banned`: the key kept sending while refused and is banned for a while. Wait Retry-After seconds before sending again */
            429: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: an unexpected failure */
            500: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the service cannot reach its database */
            503: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    addPet: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: for 24 hours a repeat with the same key and body replays the first 201 and creates nothing. Sent once: a request that repeats the header is a 400 */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPet"];
            };
        };
        responses: {
            /** @description The pet as stored, with its assigned id */
            201: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Sent when this 201 replays the answer to an earlier request */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description `invalid_request`: the body or a header fails validation; `invalid_json`: the body is not JSON */
            400: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the API key is missing, malformed, unknown, revoked or expired */
            401: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The bearer challenge, with error="invalid_token" when a key was sent */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_scope`: the API key lacks the scope pets:write; `address_not_allowed`: the API key may not be used from the client address (its allowed addresses); nothing is counted against the key */
            403: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description With insufficient_scope, the bearer challenge naming the scope the operation needs */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_in_use`: a request with this Idempotency-Key is still running */
            409: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `payload_too_large`: the body is over 16 KiB */
            413: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as application/json */
            415: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_reused`: this Idempotency-Key came with another body */
            422: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: a window of the plan is exhausted; `key_banned`: the key kept sending while refused and is banned for a while. Wait Retry-After seconds before sending again */
            429: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: an unexpected failure */
            500: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the service cannot reach its database */
            503: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Identifier of the animal to retrieve */
                petId: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The pet */
            200: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description RFC 9745: when the operation was deprecated, as @ and Unix seconds */
                    Deprecation?: string;
                    /** @description RFC 8594: when the operation is removed; from then on it answers 410 */
                    Sunset?: string;
                    /** @description The successor operation */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description `invalid_request`: petId is not an int64 integer */
            400: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description RFC 9745: when the operation was deprecated, as @ and Unix seconds */
                    Deprecation?: string;
                    /** @description RFC 8594: when the operation is removed; from then on it answers 410 */
                    Sunset?: string;
                    /** @description The successor operation */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the API key is missing, malformed, unknown, revoked or expired */
            401: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The bearer challenge, with error="invalid_token" when a key was sent */
                    "WWW-Authenticate"?: string;
                    /** @description RFC 9745: when the operation was deprecated, as @ and Unix seconds */
                    Deprecation?: string;
                    /** @description RFC 8594: when the operation is removed; from then on it answers 410 */
                    Sunset?: string;
                    /** @description The successor operation */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_scope`: the API key lacks the scope pets:read; `address_not_allowed`: the API key may not be used from the client address (its allowed addresses); nothing is counted against the key */
            403: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description With insufficient_scope, the bearer challenge naming the scope the operation needs */
                    "WWW-Authenticate"?: string;
                    /** @description RFC 9745: when the operation was deprecated, as @ and Unix seconds */
                    Deprecation?: string;
                    /** @description RFC 8594: when the operation is removed; from then on it answers 410 */
                    Sunset?: string;
                    /** @description The successor operation */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no pet has this id */
            404: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description RFC 9745: when the operation was deprecated, as @ and Unix seconds */
                    Deprecation?: string;
                    /** @description RFC 8594: when the operation is removed; from then on it answers 410 */
                    Sunset?: string;
                    /** @description The successor operation */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `gone`: the Sunset date has passed */
            410: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description RFC 9745: when the operation was deprecated, as @ and Unix seconds */
                    Deprecation?: string;
                    /** @description RFC 8594: when the operation is removed; from then on it answers 410 */
                    Sunset?: string;
                    /** @description The successor operation */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: a window of the plan is exhausted; `key_banned`: the key kept sending while refused and is banned for a while. Wait Retry-After seconds before sending again */
            429: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    /** @description RFC 9745: when the operation was deprecated, as @ and Unix seconds */
                    Deprecation?: string;
                    /** @description RFC 8594: when the operation is removed; from then on it answers 410 */
                    Sunset?: string;
                    /** @description The successor operation */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: an unexpected failure */
            500: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description RFC 9745: when the operation was deprecated, as @ and Unix seconds */
                    Deprecation?: string;
                    /** @description RFC 8594: when the operation is removed; from then on it answers 410 */
                    Sunset?: string;
                    /** @description The successor operation */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the service cannot reach its database */
            503: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    /** @description RFC 9745: when the operation was deprecated, as @ and Unix seconds */
                    Deprecation?: string;
                    /** @description RFC 8594: when the operation is removed; from then on it answers 410 */
                    Sunset?: string;
                    /** @description The successor operation */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getRateLimit: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Where the key stands */
            200: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RateLimitStatus"];
                };
            };
            /** @description `unauthorized`: the API key is missing, malformed, unknown, revoked or expired */
            401: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The bearer challenge, with error="invalid_token" when a key was sent */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `address_not_allowed`: the API key may not be used from the client address (its allowed addresses); nothing is counted against the key */
            403: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: a window of the plan is exhausted; `key_banned`: the key kept sending while refused and is banned for a while. Wait Retry-After seconds before sending again */
            429: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: an unexpected failure */
            500: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the service cannot reach its database */
            503: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listKeys: {
        parameters: {
            query?: {
                /** @description Maximum number of keys to return */
                limit?: number;
                /** @description Opaque position from a `Link: rel="next"` header */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of keys */
            200: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Sent while more follow: the next page, with the same filter and limit */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeys"];
                };
            };
            /** @description `invalid_request`: a query value is invalid, or the cursor is not one this listing issued */
            400: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the API key is missing, malformed, unknown, revoked or expired */
            401: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The bearer challenge, with error="invalid_token" when a key was sent */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_scope`: the API key lacks the scope keys:manage; `address_not_allowed`: the API key may not be used from the client address (its allowed addresses); nothing is counted against the key */
            403: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description With insufficient_scope, the bearer challenge naming the scope the operation needs */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: a window of the plan is exhausted; `key_banned`: the key kept sending while refused and is banned for a while. Wait Retry-After seconds before sending again */
            429: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: an unexpected failure */
            500: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the service cannot reach its database */
            503: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewApiKey"];
            };
        };
        responses: {
            /** @description The key, with its secret */
            201: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IssuedApiKey"];
                };
            };
            /** @description `invalid_request`: the body fails validation, `expiresAt` is past or later than the calling key expires, or the request carries an Idempotency-Key; `invalid_json`: the body is not JSON */
            400: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the API key is missing, malformed, unknown, revoked or expired */
            401: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The bearer challenge, with error="invalid_token" when a key was sent */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_scope`: the API key lacks `keys:manage`, or a scope the change would give it; `address_not_allowed`: the API key may not be used from the client address (its allowed addresses); nothing is counted against the key */
            403: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description With insufficient_scope, the bearer challenge naming the scope the operation needs */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `account_closed`: the calling key's account is closed */
            409: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `payload_too_large`: the body is over 16 KiB */
            413: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unsupported_media_type`: the body is not sent as application/json */
            415: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: a window of the plan is exhausted; `key_banned`: the key kept sending while refused and is banned for a while. Wait Retry-After seconds before sending again */
            429: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: an unexpected failure */
            500: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the service cannot reach its database */
            503: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rotateKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The key */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["KeyRotation"];
            };
        };
        responses: {
            /** @description The key, with its new secret */
            200: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IssuedApiKey"];
                };
            };
            /** @description `invalid_request`: id is not an int64 integer, or graceSeconds is out of range */
            400: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the API key is missing, malformed, unknown, revoked or expired */
            401: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The bearer challenge, with error="invalid_token" when a key was sent */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_scope`: the API key lacks `keys:manage`, or a scope the change would give it; `address_not_allowed`: the API key may not be used from the client address (its allowed addresses); nothing is counted against the key; `forbidden`: the key works after the calling key expires, or from an address it may not be used from */
            403: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description With insufficient_scope, the bearer challenge naming the scope the operation needs */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no key of the calling key's account has this id */
            404: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_revoked`: the key is revoked */
            409: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: a window of the plan is exhausted; `key_banned`: the key kept sending while refused and is banned for a while. Wait Retry-After seconds before sending again */
            429: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: an unexpected failure */
            500: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the service cannot reach its database */
            503: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    revokeKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The key */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key, revoked */
            200: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKey"];
                };
            };
            /** @description `invalid_request`: id is not an int64 integer */
            400: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the API key is missing, malformed, unknown, revoked or expired */
            401: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The bearer challenge, with error="invalid_token" when a key was sent */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_scope`: the API key lacks the scope keys:manage; `address_not_allowed`: the API key may not be used from the client address (its allowed addresses); nothing is counted against the key */
            403: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description With insufficient_scope, the bearer challenge naming the scope the operation needs */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no key of the calling key's account has this id */
            404: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: a window of the plan is exhausted; `key_banned`: the key kept sending while refused and is banned for a while. Wait Retry-After seconds before sending again */
            429: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: an unexpected failure */
            500: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the service cannot reach its database */
            503: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getUsage: {
        parameters: {
            query: {
                /** @description The first hour (or day) read, its start, inclusive: on a UTC hour (or day) boundary */
                from: string;
                /** @description The end of the range, exclusive: on a UTC hour (or day) boundary */
                to: string;
                /** @description A row per key and UTC hour, or per key and UTC day (the sum of its hours) */
                granularity?: "hour" | "day";
                /** @description A JSON array of rows, or CSV with a header row (start,accountId,keyId,admitted,refused,units) */
                format?: "json" | "csv";
                /** @description Maximum number of rows to return */
                limit?: number;
                /** @description Opaque position from a `Link: rel="next"` header */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of rows */
            200: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Sent while more follow: the next page, with the same filter and limit */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UsageRows"];
                    "text/csv": string;
                };
            };
            /** @description `invalid_request`: a query value is invalid, `from` or `to` is not on a boundary of the granularity, `to` is not after `from`, or the cursor is not one this listing issued */
            400: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the API key is missing, malformed, unknown, revoked or expired */
            401: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The bearer challenge, with error="invalid_token" when a key was sent */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_scope`: the API key lacks the scope usage:read; `address_not_allowed`: the API key may not be used from the client address (its allowed addresses); nothing is counted against the key */
            403: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description With insufficient_scope, the bearer challenge naming the scope the operation needs */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: a window of the plan is exhausted; `key_banned`: the key kept sending while refused and is banned for a while. Wait Retry-After seconds before sending again */
            429: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: an unexpected failure */
            500: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the service cannot reach its database */
            503: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    decide: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DecisionRequest"];
            };
        };
        responses: {
            /** @description The decision */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Decision"];
                };
            };
            /** @description `invalid_request`: the body is not a DecisionRequest */
            400: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: no operator token, or one that is unknown or revoked */
            401: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator is not of the role service */
            403: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: the caller's address sent too many requests without a valid token */
            429: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: an unexpected failure */
            500: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the service cannot reach its database */
            503: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    authorize: {
        parameters: {
            query?: never;
            header: {
                /** @example GET */
                "x-original-method": string;
                /** @example /v1/orders?page=2 */
                "x-original-uri": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The request may go on, and has been charged */
            200: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The key's account */
                    "X-Account-Id"?: string;
                    /** @description The key */
                    "X-Key-Id"?: string;
                    /** @description The key's scopes, separated by spaces */
                    "X-Scopes"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Authorization"];
                };
            };
            /** @description `invalid_request`: X-Original-Method or X-Original-URI is missing or malformed */
            400: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The Error body's code, for a proxy that drops the body (nginx's auth_request) */
                    "X-Error-Code"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the API key is missing, malformed, unknown, revoked or expired */
            401: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The bearer challenge, with error="invalid_token" when a key was sent */
                    "WWW-Authenticate"?: string;
                    /** @description The Error body's code, for a proxy that drops the body (nginx's auth_request) */
                    "X-Error-Code"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `address_not_allowed`: the API key may not be used from the client address (its allowed addresses); nothing is counted against the key */
            403: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description The Error body's code, for a proxy that drops the body (nginx's auth_request) */
                    "X-Error-Code"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: a window of the plan is exhausted; `key_banned`: the key kept sending while refused and is banned for a while. Wait Retry-After seconds before sending again */
            429: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    /** @description The Error body's code, for a proxy that drops the body (nginx's auth_request) */
                    "X-Error-Code"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: an unexpected failure */
            500: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the service cannot reach its database */
            503: {
                headers: {
                    /** @description The limit of the binding window: the one with the fewest requests left */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests remaining in the binding window */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time, in seconds, at which the binding window resets */
                    "X-RateLimit-Reset"?: number;
                    /** @description Every window in force (IETF RateLimit fields) */
                    "RateLimit-Policy"?: string;
                    /** @description The binding window: requests remaining and seconds until it resets */
                    RateLimit?: string;
                    /** @description Seconds to wait before sending again */
                    "Retry-After"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}

/** Properties the document declares int64: the client reads them from JSON as exact BigInts. */
export const int64Properties: ReadonlySet<string> = new Set(["accountId","categoryId","graceSeconds","id","keyId"])
