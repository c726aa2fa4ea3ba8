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
                    /** @description Sent while more pets follow: the next page, with the same filter and limit */
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
}

/** Properties the document declares int64: the client reads them from JSON as exact BigInts. */
export const int64Properties: ReadonlySet<string> = new Set(["categoryId","id"])
