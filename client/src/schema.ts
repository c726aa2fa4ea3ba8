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
         * @description With scopes the calling key has, expiring no later than it does (with it, when `expiresAt` is not given). Idempotency-Key is refused here: a replay would have to show the secret again, and it is never stored; after a failure, look for the key by its name in `GET /keys`. Needs a key with the scope `keys:manage`.
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
         * @description The secret replaced stops working at once, or keeps working for `graceSeconds` (at most a week), as on the admin API; the answer's `previousSecretExpiresAt` says until when. The calling key itself included. The key must be within the calling key's rights: no scope it lacks, and no later expiry. The body may be left out. Needs a key with the scope `keys:manage`.
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
                /** @description Units the window allows (a bucket: units it refills each window) */
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
         * @description pets:read: GET /v1/pets and /v1/pets/{petId}; pets:write: POST /v1/pets; keys:manage: the key's own account's keys through /v1/keys
         * @enum {string}
         */
        Scope: "pets:read" | "pets:write" | "keys:manage";
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
        /** Error */
        Error: {
            /**
             * @description Machine-readable error code
             * @example invalid_request
             */
            code: string;
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
                /** @description Makes a retry safe: for 24 hours a repeat with the same key and body replays the first 201 and creates nothing */
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
            /** @description `insufficient_scope`: the API key lacks `keys:manage`, or a scope the change would give it; `address_not_allowed`: the API key may not be used from the client address (its allowed addresses); nothing is counted against the key; `forbidden`: the key works after the calling key expires */
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
}

/** Properties the document declares int64: the client reads them from JSON as exact BigInts. */
export const int64Properties: ReadonlySet<string> = new Set(["categoryId","graceSeconds","id"])
