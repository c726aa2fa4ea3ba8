// Generated from the admin API's served OpenAPI document (/admin/v1/openapi.json) by `npm run client:generate`. Do not edit.

export interface paths {
    "/admin/v1/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Keys in ascending id order; while more follow, `Link: rel="next"` gives the next page */
        get: operations["listKeys"];
        put?: never;
        /**
         * Issue a key; its secret is shown only in this answer
         * @description In the account named by `accountId` or `externalId` (one of them), sharing its plan and windows; without one, in a new account of its own with `plan`. Scopes default to both.
         */
        post: operations["createKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One key, never its secret */
        get: operations["getKey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Change a key: its name, scopes, expiry, allowed addresses, metadata, or its account's plan and limits
         * @description The plan and limits are the account's: changing them here changes them for all of its keys. Every instance applies the change within a second.
         */
        patch: operations["changeKey"];
        trace?: never;
    };
    "/admin/v1/keys/{id}/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Revoke a key; every instance refuses it within a second */
        post: operations["revokeKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/keys/leaked": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Revoke the keys whose secrets were found leaked; every instance refuses them within a second
         * @description Each key a secret matches is revoked (with its audit event and `key.revoked`) and gets a `key.leaked` event, revoked before or not. A secret that is no key (a failed checksum among them) matches nothing and is not named in the answer. Needs the role operator or admin.
         */
        post: operations["reportLeakedKeys"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/keys/{id}/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Give a key a new secret, shown only in this answer
         * @description The secret replaced stops working at once, or keeps working for `graceSeconds` (at most a week) on the same account and windows, so that clients can move over; the answer's `previousSecretExpiresAt` says until when. A secret still in an earlier rotation’s grace stops at once.
         */
        post: operations["rotateKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/keys/{id}/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Requests admitted and refused on each of the last days (UTC), today first
         * @description Today's figures may lag by what an instance admitted from its current lease and has not yet reported: at most one lease per instance, reported within about 5 seconds.
         */
        get: operations["keyUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/accounts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Accounts in ascending id order; while more follow, `Link: rel="next"` gives the next page */
        get: operations["listAccounts"];
        put?: never;
        /** Make an account: a customer whose keys share its plan and windows */
        post: operations["createAccount"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/accounts/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One account */
        get: operations["getAccount"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Change an account: its name, its metadata, its plan, its overrides, its cycleAnchor
         * @description `overrides` replaces the account's overrides ([] removes them); `perMinute` and `perDay` set the minute's and the day's for good. A move to another plan without either drops them. Every key of the account follows, on every instance within a second.
         */
        patch: operations["changeAccount"];
        trace?: never;
    };
    "/admin/v1/accounts/{id}/credits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Add to the account's credits, set them, or set their refill
         * @description `add` adds to the balance in one statement, so that adds sent at once all count; an account without credits starts at 0. A balance holds at most 10^15 units: an `add` past it is 400. Each admitted request spends its cost; at 0 the answer is 429 `credits_exhausted`.
         */
        post: operations["changeCredits"];
        /** Remove the account's credits: it has no balance to spend down */
        delete: operations["removeCredits"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/accounts/{id}/close": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Close an account and revoke all of its keys at once; every instance refuses them within a second */
        post: operations["closeAccount"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/accounts/{id}/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The account's keys in ascending id order; while more follow, `Link: rel="next"` gives the next page */
        get: operations["listAccountKeys"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/plans": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every plan, in name order */
        get: operations["listPlans"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/plans/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One plan */
        get: operations["getPlan"];
        /**
         * Make a plan, or replace its limits and costs
         * @description The plan as given, whole: 1 to 10 limits, at most one enforced and one shadow limit per window (a shadow limit is counted and reported, never refusing), and costs of routes of the public API (a route not named costs 1). An audit event and a `plan.changed` webhook event record each change; the same plan put again changes nothing. Every account on the plan follows, on every instance within a second.
         */
        put: operations["putPlan"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/accounts/{id}/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Requests admitted and refused on each of the last days (UTC), all of the account's keys together */
        get: operations["accountUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/accounts/{id}/windows": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The account's windows and credits as they stand, and the keys of it banned now
         * @description Read from the database, never counted: the same windows as `GET /v1/rate_limit`, shared by all of the account's keys. `used` includes what instances have leased ahead and not yet served.
         */
        get: operations["accountWindows"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The audit trail, newest first; while more follow, `Link: rel="next"` gives the next page
         * @description One event for every change to an account or a key, written in the same transaction as the change.
         */
        get: operations["listEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/whoami": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The operator this request's token is, and its role */
        get: operations["whoami"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/operators": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every operator, revoked ones included, in ascending id order; never a token */
        get: operations["listOperators"];
        put?: never;
        /** Make an operator with a role; its token is shown only in this answer and stored only as its hash */
        post: operations["createOperator"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/operators/{id}/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Revoke an operator's token: refused from its next request on, on every instance */
        post: operations["revokeOperator"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Webhook endpoints in ascending id order; while more follow, `Link: rel="next"` gives the next page */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Register a webhook endpoint; its signing secret is shown only in this answer
         * @description Events of the types named are POSTed to the URL, signed per Standard Webhooks, from the moment it is registered. The URL is checked now and, after DNS resolution, at every delivery.
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One webhook endpoint, never its secret */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /** Delete a webhook endpoint and its deliveries, sent or not */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        /**
         * Change a webhook endpoint: its URL, events or description; pause or resume it
         * @description Resuming an endpoint sends what waited while it was paused, in order.
         */
        patch: operations["changeWebhook"];
        trace?: never;
    };
    "/admin/v1/webhooks/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Give an endpoint a new signing secret, shown only in this answer
         * @description During the grace period (a day unless `graceSeconds` says otherwise) every delivery carries two signatures, by the new secret and the previous one, so the receiver can switch at any moment in it.
         */
        post: operations["rotateWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An endpoint's deliveries, newest first, each with its last answer
         * @description While more follow, `Link: rel="next"` gives the next page.
         */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/webhooks/{id}/deliveries/{eventId}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a failed delivery again, with 24 hours of attempts afresh */
        post: operations["retryWebhookDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/v1/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Usage of every key (or one account’s) per UTC hour or day over any range, streamed
         * @description Rows are ordered by period, then key; periods in which a key had no request are left out. The answer is written as the rows are read, a few thousand at a time, never held whole. An hour shows the requests admitted in it by the database’s clock, each instance reporting within about 5 seconds.
         */
        get: operations["exportUsage"];
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
         * PlanName
         * @description The name of a plan of GET /admin/v1/plans: 1 to 40 lowercase letters, digits and hyphens. The seed has free, pro, business and enterprise
         * @example pro
         */
        PlanName: string;
        /** Limit */
        Limit: {
            /**
             * @description second, minute, hour, day or month: the UTC second, minute, hour, day or calendar month (a plan's month may follow the account's cycleAnchor instead: `anchor`)
             * @enum {string}
             */
            window: "second" | "minute" | "hour" | "day" | "month";
            /** @description fixed: at most `limit` units in each window; bucket: a token bucket refilled by `limit` units a window, evenly, holding at most `burst` */
            algorithm: "fixed" | "bucket";
            /** @description Units a window */
            limit: number;
            /** @description A bucket's capacity; null: its limit */
            burst: number | null;
            /**
             * @description Where the month starts: calendar, the first of each UTC calendar month; account, the account's cycleAnchor, each period starting at the anchor plus a whole number of months (the last day of a shorter month for a later day: 31 January, 28 or 29 February, 31 March). account only on a fixed month. Absent: calendar
             * @enum {string}
             */
            anchor?: "account";
        };
        /** PlanLimit */
        PlanLimit: {
            /**
             * @description second, minute, hour, day or month: the UTC second, minute, hour, day or calendar month (a plan's month may follow the account's cycleAnchor instead: `anchor`)
             * @enum {string}
             */
            window: "second" | "minute" | "hour" | "day" | "month";
            /** @description fixed: at most `limit` units in each window; bucket: a token bucket refilled by `limit` units a window, evenly, holding at most `burst` */
            algorithm: "fixed" | "bucket";
            /** @description Units a window */
            limit: number;
            /** @description A bucket's capacity; null: its limit */
            burst: number | null;
            /**
             * @description Where the month starts: calendar, the first of each UTC calendar month; account, the account's cycleAnchor, each period starting at the anchor plus a whole number of months (the last day of a shorter month for a later day: 31 January, 28 or 29 February, 31 March). account only on a fixed month. Absent: calendar
             * @enum {string}
             */
            anchor?: "account";
            /** @description A shadow limit: counted and reported like the others, never refusing (docs/rate-limits.md) */
            shadow: boolean;
        };
        /** LimitInput */
        LimitInput: {
            /**
             * @description second, minute, hour, day or month: the UTC second, minute, hour, day or calendar month (a plan's month may follow the account's cycleAnchor instead: `anchor`)
             * @enum {string}
             */
            window: "second" | "minute" | "hour" | "day" | "month";
            /** @description fixed: at most `limit` units in each window; bucket: a token bucket refilled by `limit` units a window, evenly, holding at most `burst`; fixed when absent */
            algorithm?: "fixed" | "bucket";
            /** @description Units a window */
            limit: number;
            /** @description A bucket's capacity; its limit when absent */
            burst?: number;
            /** @description true: a shadow limit, counted and reported, never refusing; false when absent */
            shadow?: boolean;
            /**
             * @description Where the month starts: calendar, the first of each UTC calendar month; account, the account's cycleAnchor, each period starting at the anchor plus a whole number of months (the last day of a shorter month for a later day: 31 January, 28 or 29 February, 31 March). account only on a fixed month; calendar when absent
             * @enum {string}
             */
            anchor?: "calendar" | "account";
        };
        /** Plan */
        Plan: {
            name: components["schemas"]["PlanName"];
            /** @description At most one enforced and one shadow limit per window, shortest window first, enforced first */
            limits: components["schemas"]["PlanLimit"][];
            /** @description Units a request of the route spends in every limit, by route as the public OpenAPI document names it (`POST /v1/pets`, `GET /v1/pets/{petId}`), or a route of another service that asks through POST /v1/decisions or GET /v1/authorize (`GET /v1/orders`, `GET /v1/orders/{id}`: `{name}` stands for one path segment); a route not named costs 1 */
            costs: {
                [key: string]: number;
            };
            /**
             * Format: date-time
             * @description When the plan was made
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description When its limits or costs last changed
             */
            updatedAt: string;
        };
        /** PlanDefinition */
        PlanDefinition: {
            /** @description 1 to 10 limits, at most one enforced and one shadow limit per window */
            limits: components["schemas"]["LimitInput"][];
            /** @description Units a request of the route spends in every limit, by route as the public OpenAPI document names it (`POST /v1/pets`, `GET /v1/pets/{petId}`), or a route of another service that asks through POST /v1/decisions or GET /v1/authorize (`GET /v1/orders`, `GET /v1/orders/{id}`: `{name}` stands for one path segment); a route not named costs 1 */
            costs?: {
                [key: string]: number;
            };
        };
        /** Override */
        Override: {
            /**
             * @description second, minute, hour, day or month: the UTC second, minute, hour, day or calendar month (a plan's month may follow the account's cycleAnchor instead: `anchor`)
             * @enum {string}
             */
            window: "second" | "minute" | "hour" | "day" | "month";
            /** @description fixed: at most `limit` units in each window; bucket: a token bucket refilled by `limit` units a window, evenly, holding at most `burst` */
            algorithm: "fixed" | "bucket";
            /** @description Units a window */
            limit: number;
            /** @description A bucket's capacity; null: its limit */
            burst: number | null;
            /** @description When the override ends, by the database clock; null: for good */
            until: string | null;
        };
        /** OverrideInput */
        OverrideInput: {
            /**
             * @description second, minute, hour, day or month: the UTC second, minute, hour, day or calendar month (a plan's month may follow the account's cycleAnchor instead: `anchor`)
             * @enum {string}
             */
            window: "second" | "minute" | "hour" | "day" | "month";
            /** @description fixed: at most `limit` units in each window; bucket: a token bucket refilled by `limit` units a window, evenly, holding at most `burst`; fixed when absent */
            algorithm?: "fixed" | "bucket";
            /** @description Units a window */
            limit: number;
            /** @description A bucket's capacity; its limit when absent */
            burst?: number;
            /** @description When the override ends, by the database clock: an instant to come; null or absent: for good */
            until?: string | null;
        };
        /** Credits */
        Credits: {
            /** @description Units left */
            remaining: number;
            /** @description At the start of each UTC day or calendar month the balance rises to `amount`; null: none */
            refill: {
                /** @description Units the balance rises to */
                amount: number;
                /**
                 * @description At the start of each UTC day or calendar month
                 * @enum {string}
                 */
                every: "day" | "month";
            } | null;
            /**
             * Format: date-time
             * @description When the balance was last refilled, or started
             */
            refilledAt: string;
        };
        /**
         * CreditChange
         * @description `add` or `set` (not both), and or a `refill`
         */
        CreditChange: {
            /** @description Units added to the balance, starting one at 0 */
            add?: number;
            /** @description The balance, whatever it was */
            set?: number;
            /** @description null: no refill */
            refill?: {
                /** @description Units the balance rises to */
                amount: number;
                /**
                 * @description At the start of each UTC day or calendar month
                 * @enum {string}
                 */
                every: "day" | "month";
            } | null;
        };
        /**
         * Role
         * @description viewer: reads only; operator: also changes accounts, keys and plans; admin: also operators; service: calls POST /v1/decisions on the public API, and nothing on this one
         * @enum {string}
         */
        Role: "viewer" | "operator" | "admin" | "service";
        /** Operator */
        Operator: {
            /**
             * Format: int64
             * @description The operator
             */
            id: bigint;
            /** @description Its name; its changes are recorded as `operator:<name>` */
            name: string;
            role: components["schemas"]["Role"];
            /** @description The readable start of the operator's token */
            prefix: string;
            /**
             * Format: date-time
             * @description When the operator was made
             */
            createdAt: string;
            revokedAt: string | null;
        };
        /** IssuedOperator */
        IssuedOperator: {
            /**
             * Format: int64
             * @description The operator
             */
            id: bigint;
            /** @description Its name; its changes are recorded as `operator:<name>` */
            name: string;
            role: components["schemas"]["Role"];
            /** @description The readable start of the operator's token */
            prefix: string;
            /**
             * Format: date-time
             * @description When the operator was made
             */
            createdAt: string;
            revokedAt: string | null;
            /** @description The bearer token: shown only in this answer, stored only as its hash */
            token: string;
        };
        /** NewOperator */
        NewOperator: {
            /** @description 1 to 63 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit; unique */
            name: string;
            role: components["schemas"]["Role"];
        };
        /** Whoami */
        Whoami: {
            /** @description `bootstrap` for ADMIN_TOKEN, else `operator:<name>` */
            actor: string;
            /** @description The operator's name, or `bootstrap` */
            name: string;
            role: components["schemas"]["Role"];
        };
        /**
         * Scope
         * @description pets:read: GET /v1/pets and /v1/pets/{petId}; pets:write: POST /v1/pets; keys:manage: the key's own account's keys through /v1/keys; usage:read: the key's own account's usage through GET /v1/usage
         * @enum {string}
         */
        Scope: "pets:read" | "pets:write" | "keys:manage" | "usage:read";
        /**
         * Metadata
         * @description A JSON object of at most 2,048 bytes as compact JSON, for your own systems (a customer id, a note); integers beyond ±9007199254740991 are refused (send them as strings); key order may change
         */
        Metadata: {
            [key: string]: unknown;
        };
        /** Key */
        Key: {
            /**
             * Format: int64
             * @description The key
             */
            id: bigint;
            /**
             * Format: int64
             * @description The account whose plan and windows the key shares
             */
            accountId: bigint;
            /**
             * @description The readable start of the secret, shown in listings
             * @example ask_3kT9aQ2x
             */
            prefix: string;
            name: string | null;
            /** @description What the key may do */
            scopes: components["schemas"]["Scope"][];
            plan: components["schemas"]["PlanName"];
            /**
             * Format: int64
             * @description Units a minute in force for the key's account: its override's, else its plan's; null: none
             */
            perMinute: bigint | null;
            /**
             * Format: int64
             * @description Units a day in force for the key's account: its override's, else its plan's; null: none
             */
            perDay: bigint | null;
            /**
             * Format: date-time
             * @description When the key was issued
             */
            createdAt: string;
            expiresAt: string | null;
            revokedAt: string | null;
            /** @description The prefix of the secret the last rotation replaced, while it still works; else null */
            previousPrefix: string | null;
            /** @description When the secret the last rotation replaced stops working (the end of the rotation's grace period, by the database's clock, or the key's expiry when that comes first); null when no previous secret works: none in its grace, or the key revoked, expired or its account closed */
            previousSecretExpiresAt: string | null;
            /** @description The client addresses the key may be used from, in canonical form; from elsewhere it gets 403 `address_not_allowed` and spends nothing. null: any address */
            allowedAddresses: string[] | null;
            metadata: components["schemas"]["Metadata"];
        };
        /** IssuedKey */
        IssuedKey: {
            /**
             * Format: int64
             * @description The key
             */
            id: bigint;
            /**
             * Format: int64
             * @description The account whose plan and windows the key shares
             */
            accountId: bigint;
            /**
             * @description The readable start of the secret, shown in listings
             * @example ask_3kT9aQ2x
             */
            prefix: string;
            name: string | null;
            /** @description What the key may do */
            scopes: components["schemas"]["Scope"][];
            plan: components["schemas"]["PlanName"];
            /**
             * Format: int64
             * @description Units a minute in force for the key's account: its override's, else its plan's; null: none
             */
            perMinute: bigint | null;
            /**
             * Format: int64
             * @description Units a day in force for the key's account: its override's, else its plan's; null: none
             */
            perDay: bigint | null;
            /**
             * Format: date-time
             * @description When the key was issued
             */
            createdAt: string;
            expiresAt: string | null;
            revokedAt: string | null;
            /** @description The prefix of the secret the last rotation replaced, while it still works; else null */
            previousPrefix: string | null;
            /** @description When the secret the last rotation replaced stops working (the end of the rotation's grace period, by the database's clock, or the key's expiry when that comes first); null when no previous secret works: none in its grace, or the key revoked, expired or its account closed */
            previousSecretExpiresAt: string | null;
            /** @description The client addresses the key may be used from, in canonical form; from elsewhere it gets 403 `address_not_allowed` and spends nothing. null: any address */
            allowedAddresses: string[] | null;
            metadata: components["schemas"]["Metadata"];
            /** @description The secret, shown only this once */
            key: string;
        };
        /** NewKey */
        NewKey: {
            /**
             * Format: int64
             * @description The account, by its id
             */
            accountId?: bigint;
            /** @description The account, by its externalId */
            externalId?: string;
            /**
             * @deprecated
             * @description The account's id or externalId, refused when it is one account's id and another's externalId: send `accountId` or `externalId`. At most one of the three; without any, the key gets an account of its own, with `plan`
             */
            account?: string;
            plan?: components["schemas"]["PlanName"];
            /** @description A label for the key; no control characters or bidirectional overrides */
            name?: string;
            /** @description What the key may do; pets:read and pets:write by default */
            scopes?: components["schemas"]["Scope"][];
            /**
             * Format: int64
             * @description Requests a minute: the account's own minute limit, for good (an override of the minute)
             */
            perMinute?: bigint;
            /**
             * Format: int64
             * @description Requests a day: the account's own day limit, for good (an override of the day)
             */
            perDay?: bigint;
            /**
             * Format: date-time
             * @description When the key stops working
             */
            expiresAt?: string;
            /** @description The client addresses the key may be used from; null, [] or absent: any address */
            allowedAddresses?: string[] | null;
            metadata?: components["schemas"]["Metadata"];
        };
        /** KeyChanges */
        KeyChanges: {
            plan?: components["schemas"]["PlanName"];
            name?: string | null;
            /** @description What the key may do */
            scopes?: components["schemas"]["Scope"][];
            /**
             * Format: int64
             * @description Requests a minute: the account's own minute limit, for good (an override of the minute)
             */
            perMinute?: bigint;
            /**
             * Format: int64
             * @description Requests a day: the account's own day limit, for good (an override of the day)
             */
            perDay?: bigint;
            expiresAt?: string | null;
            /** @description Replaces the client addresses the key may be used from; null or []: any address */
            allowedAddresses?: string[] | null;
            metadata?: components["schemas"]["Metadata"];
        };
        /** KeyRotation */
        KeyRotation: {
            /**
             * Format: int64
             * @description How long the secret replaced keeps working beside the new one, by the database clock, on the same account and windows: 0 (the default) stops it at once, 604800 is a week. A secret still in an earlier rotation's grace stops at once either way
             */
            graceSeconds?: bigint;
        };
        /** Usage */
        Usage: {
            days: {
                /**
                 * Format: date
                 * @description The UTC day
                 */
                date: string;
                /** @description Requests admitted */
                admitted: number;
                /** @description Requests refused with 429 */
                refused: number;
            }[];
        };
        /** Account */
        Account: {
            /**
             * Format: int64
             * @description The account
             */
            id: bigint;
            externalId: string | null;
            name: string | null;
            plan: components["schemas"]["PlanName"];
            /**
             * Format: int64
             * @description Units a minute in force, for all of its keys together: its override's, else its plan's; null: none
             */
            perMinute: bigint | null;
            /**
             * Format: int64
             * @description Units a day in force, for all of its keys together: its override's, else its plan's; null: none
             */
            perDay: bigint | null;
            /** @description Its own limits in place of its plan's, shortest window first; one past its `until` no longer applies */
            overrides: components["schemas"]["Override"][];
            /** @description Its prepaid balance; null: none to spend down */
            credits: components["schemas"]["Credits"] | null;
            metadata: components["schemas"]["Metadata"];
            /**
             * Format: date-time
             * @description Where its months start, for a plan whose month follows it (a limit's `anchor`). An RFC 3339 instant, past or ahead: the periods are the anchor plus k months for every integer k, in UTC
             */
            cycleAnchor: string;
            /**
             * Format: date-time
             * @description When the account was made
             */
            createdAt: string;
            closedAt: string | null;
        };
        /** AccountWindows */
        AccountWindows: {
            /** @description The account's limits in force, shortest window first */
            windows: {
                /** @description The UTC window: second, minute, hour, day or calendar month */
                name: "second" | "minute" | "hour" | "day" | "month";
                /** @description fixed: the window resets at its end; bucket: units come back evenly over the window */
                algorithm: "fixed" | "bucket";
                /** @description A shadow limit: counted like the others, never refusing; `used` may pass its `limit` */
                shadow: boolean;
                /** @description Units the window allows (a bucket: the most it holds, its burst) */
                limit: number;
                /** @description Units counted in the window so far, all keys together; includes units an instance has leased ahead and not yet served, so it may run ahead of the requests served by up to a second of traffic */
                used: number;
                /** @description Units left in the window, or in the bucket */
                remaining: number;
                /** @description Unix time, in seconds, at which the window resets (a bucket: is full again) */
                reset: number;
            }[];
            /** @description The account's prepaid units left; null when it has no credits */
            credits: number | null;
            /** @description The keys of the account banned now for sending while refused, in ascending id order */
            bans: {
                /**
                 * Format: int64
                 * @description The banned key
                 */
                keyId: bigint;
                /** @description The readable start of the key's secret */
                prefix: string;
                /**
                 * Format: date-time
                 * @description When the ban ends
                 */
                bannedUntil: string;
            }[];
        };
        /** NewAccount */
        NewAccount: {
            /** @description The operator's own id of the customer, unique: A-Z, a-z, 0-9, '.', '_', ':' and '-' */
            externalId?: string;
            /** @description A label for the account; no control characters or bidirectional overrides */
            name?: string;
            plan: components["schemas"]["PlanName"];
            /**
             * Format: int64
             * @description Requests a minute: the account's own minute limit, for good (an override of the minute)
             */
            perMinute?: bigint;
            /**
             * Format: int64
             * @description Requests a day: the account's own day limit, for good (an override of the day)
             */
            perDay?: bigint;
            /** @description Limits that replace the plan's for their windows, one per window; [] removes them all */
            overrides?: components["schemas"]["OverrideInput"][];
            metadata?: components["schemas"]["Metadata"];
            /**
             * Format: date-time
             * @description Where its months start, for a plan whose month follows it; the account's creation when absent. An RFC 3339 instant, past or ahead: the periods are the anchor plus k months for every integer k, in UTC
             */
            cycleAnchor?: string;
        };
        /** AccountChanges */
        AccountChanges: {
            name?: string | null;
            plan?: components["schemas"]["PlanName"];
            /**
             * Format: int64
             * @description Requests a minute: the account's own minute limit, for good (an override of the minute)
             */
            perMinute?: bigint;
            /**
             * Format: int64
             * @description Requests a day: the account's own day limit, for good (an override of the day)
             */
            perDay?: bigint;
            /** @description Limits that replace the plan's for their windows, one per window; [] removes them all */
            overrides?: components["schemas"]["OverrideInput"][];
            metadata?: components["schemas"]["Metadata"];
            /**
             * Format: date-time
             * @description Where its months start from now on; the month under way is then the period of the new anchor that holds now, counted afresh. An RFC 3339 instant, past or ahead: the periods are the anchor plus k months for every integer k, in UTC
             */
            cycleAnchor?: string;
        };
        /** AuditEvent */
        AuditEvent: {
            /**
             * Format: int64
             * @description The event; later events have larger ids
             */
            id: bigint;
            /**
             * Format: date-time
             * @description When the change was made
             */
            at: string;
            /** @description Who made the change, as the service authenticated it: `bootstrap` (ADMIN_TOKEN) or `operator:<name>` on the admin API, `key:<prefix>` for a key managing its account's keys, `cli:<OS user>` on the CLI */
            actor: string;
            /**
             * @description account.created, account.changed, account.closed, key.created, key.changed, key.revoked, key.rotated, operator.created or operator.revoked
             * @example key.revoked
             */
            action: string;
            /**
             * Format: int64
             * @description The account changed, or the key’s
             */
            accountId: bigint | null;
            /**
             * Format: int64
             * @description The key changed, if a key was
             */
            keyId: bigint | null;
            /** @description Each field that changed, before and after; never a secret or its hash */
            changes: {
                [key: string]: {
                    before: unknown;
                    after: unknown;
                };
            };
            /** @description The admin request that made it */
            requestId: string | null;
            /** @description Whom the actor said it acted for (X-Audit-Actor), as it said it; never who made the change */
            onBehalfOf: string | null;
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
        /**
         * WebhookEventType
         * @description A kind of event; docs/webhooks.md gives the data of each
         * @enum {string}
         */
        WebhookEventType: "key.created" | "key.rotated" | "key.revoked" | "key.leaked" | "key.expiring" | "account.created" | "plan.changed" | "key.banned" | "usage.threshold" | "limit.would_refuse" | "usage.reported" | "endpoint.paused";
        /** WebhookEndpoint */
        WebhookEndpoint: {
            /**
             * Format: int64
             * @description The endpoint
             */
            id: bigint;
            /** @description Where deliveries are POSTed */
            url: string;
            /** @description The event types sent to the endpoint */
            events: components["schemas"]["WebhookEventType"][];
            description: string | null;
            /** @description Paused endpoints receive nothing; their deliveries wait until resumed */
            paused: boolean;
            pausedAt: string | null;
            failingSince: string | null;
            previousSecretUntil: string | null;
            /**
             * Format: date-time
             * @description When it was registered
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description When it last changed
             */
            updatedAt: string;
        };
        /** WebhookEndpointWithSecret */
        WebhookEndpointWithSecret: {
            /**
             * Format: int64
             * @description The endpoint
             */
            id: bigint;
            /** @description Where deliveries are POSTed */
            url: string;
            /** @description The event types sent to the endpoint */
            events: components["schemas"]["WebhookEventType"][];
            description: string | null;
            /** @description Paused endpoints receive nothing; their deliveries wait until resumed */
            paused: boolean;
            pausedAt: string | null;
            failingSince: string | null;
            previousSecretUntil: string | null;
            /**
             * Format: date-time
             * @description When it was registered
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description When it last changed
             */
            updatedAt: string;
            /**
             * @description The signing secret (Standard Webhooks, `whsec_` and base64), shown only this once
             * @example whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
             */
            secret: string;
        };
        /** NewWebhookEndpoint */
        NewWebhookEndpoint: {
            /** @description https to a public address (WEBHOOKS_ALLOW_HTTP allows http and loopback; WEBHOOKS_ALLOWED_CIDRS private ranges); a name is resolved and checked again at each delivery */
            url: string;
            /** @description The event types sent to the endpoint */
            events: components["schemas"]["WebhookEventType"][];
            /** @description A label for the endpoint; no control characters or bidirectional overrides */
            description?: string;
        };
        /** WebhookEndpointChanges */
        WebhookEndpointChanges: {
            /** @description https to a public address (WEBHOOKS_ALLOW_HTTP allows http and loopback; WEBHOOKS_ALLOWED_CIDRS private ranges); a name is resolved and checked again at each delivery */
            url?: string;
            /** @description The event types sent to the endpoint */
            events?: components["schemas"]["WebhookEventType"][];
            description?: string | null;
            /** @description true pauses the endpoint; false resumes it, its failures forgotten */
            paused?: boolean;
        };
        /** SecretRotation */
        SecretRotation: {
            /**
             * Format: int64
             * @description How long the previous secret keeps signing beside the new one, 86400 (a day) when absent; 0 ends it now
             */
            graceSeconds?: bigint;
        };
        /** WebhookDelivery */
        WebhookDelivery: {
            /**
             * Format: int64
             * @description The event; also the webhook-id, as `evt_<eventId>`
             */
            eventId: bigint;
            /** @description The event type */
            type: string;
            /** @description pending: waiting or being retried; delivered: answered 2xx; failed: given up after 24 hours of attempts */
            status: "pending" | "delivered" | "failed";
            /** @description Attempts made so far */
            attempts: number;
            /**
             * Format: date-time
             * @description When the event was fanned out to this endpoint; its 24 hours count from here
             */
            createdAt: string;
            nextAttemptAt: string | null;
            lastAttemptAt: string | null;
            /** @description The last answer's HTTP status; null when none came */
            lastStatus: number | null;
            /** @description The start of the last answer's body (1 KiB), or why no answer came */
            lastResponse: string | null;
            finishedAt: string | null;
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
    listKeys: {
        parameters: {
            query?: {
                /** @description Keys a page */
                limit?: number;
                /** @description Opaque position from a `Link: rel="next"` header of the same listing */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Key"][];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
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
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewKey"];
            };
        };
        responses: {
            /** @description The key, with its secret */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IssuedKey"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `account_closed`: the account is closed */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getKey: {
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
            /** @description The key */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Key"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no key has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    changeKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path: {
                /** @description The key */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["KeyChanges"];
            };
        };
        responses: {
            /** @description The key as changed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Key"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no key has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_revoked`: the key is revoked */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
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
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Key"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no key has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    reportLeakedKeys: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Secrets as a secret scanner reports them (`ask_…`); those that are no key are left out of the answer */
                    keys: string[];
                };
            };
        };
        responses: {
            /** @description The keys matched, and those revoked now */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description The keys the secrets matched (by the current secret, or a previous one still working), ascending */
                        matched: bigint[];
                        /** @description Those of them this report revoked; the others were revoked already */
                        revoked: bigint[];
                    };
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
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
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IssuedKey"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no key has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_revoked`: the key is revoked */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    keyUsage: {
        parameters: {
            query?: {
                /** @description UTC days, today first */
                days?: number;
            };
            header?: never;
            path: {
                /** @description The key */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One entry a day */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Usage"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no key has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listAccounts: {
        parameters: {
            query?: {
                /** @description Accounts a page */
                limit?: number;
                /** @description Opaque position from a `Link: rel="next"` header of the same listing */
                cursor?: string;
                /** @description The operator's own id of the customer, unique: A-Z, a-z, 0-9, '.', '_', ':' and '-' */
                externalId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of accounts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Account"][];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createAccount: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewAccount"];
            };
        };
        responses: {
            /** @description The account */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Account"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `account_exists`: an account has this externalId already */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAccount: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The account */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The account */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Account"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no account has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    changeAccount: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path: {
                /** @description The account */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AccountChanges"];
            };
        };
        responses: {
            /** @description The account as changed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Account"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no account has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `account_closed`: the account is closed */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    changeCredits: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path: {
                /** @description The account */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreditChange"];
            };
        };
        responses: {
            /** @description The credits as changed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Credits"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no account has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `account_closed`: the account is closed */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    removeCredits: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path: {
                /** @description The account */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed, or there were none */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no account has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    closeAccount: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path: {
                /** @description The account */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The account, closed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Account"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no account has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listAccountKeys: {
        parameters: {
            query?: {
                /** @description Accounts a page */
                limit?: number;
                /** @description Opaque position from a `Link: rel="next"` header of the same listing */
                cursor?: string;
            };
            header?: never;
            path: {
                /** @description The account */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of keys */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Key"][];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no account has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listPlans: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The plans */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Plan"][];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPlan: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The plan */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The plan */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Plan"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no plan has this name */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    putPlan: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path: {
                /** @description The plan */
                name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PlanDefinition"];
            };
        };
        responses: {
            /** @description The plan as changed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Plan"];
                };
            };
            /** @description The plan, made */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Plan"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    accountUsage: {
        parameters: {
            query?: {
                /** @description UTC days, today first */
                days?: number;
            };
            header?: never;
            path: {
                /** @description The account */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One entry a day */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Usage"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no account has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    accountWindows: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The account */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The windows and bans */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AccountWindows"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no account has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listEvents: {
        parameters: {
            query?: {
                /** @description Only events of this account */
                accountId?: bigint;
                /** @description Only events of this key */
                keyId?: bigint;
                /** @description Only events at or after this instant */
                since?: string;
                /** @description Events a page */
                limit?: number;
                /** @description Opaque position from a `Link: rel="next"` header of the same listing */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of events */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditEvent"][];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    whoami: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The operator */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Whoami"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listOperators: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The operators */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operator"][];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createOperator: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewOperator"];
            };
        };
        responses: {
            /** @description The operator, with its token */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IssuedOperator"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `operator_exists`: an operator has this name already */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    revokeOperator: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path: {
                /** @description The operator */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The operator, revoked */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Operator"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no operator has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhooks: {
        parameters: {
            query?: {
                /** @description Endpoints a page */
                limit?: number;
                /** @description Opaque position from a `Link: rel="next"` header of the same listing */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of endpoints */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"][];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewWebhookEndpoint"];
            };
        };
        responses: {
            /** @description The endpoint, with its secret */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpointWithSecret"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The endpoint */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no webhook endpoint has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path: {
                /** @description The endpoint */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no webhook endpoint has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    changeWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path: {
                /** @description The endpoint */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookEndpointChanges"];
            };
        };
        responses: {
            /** @description The endpoint as changed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no webhook endpoint has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    rotateWebhookSecret: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path: {
                /** @description The endpoint */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["SecretRotation"];
            };
        };
        responses: {
            /** @description The endpoint, with its new secret */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpointWithSecret"];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no webhook endpoint has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description pending: waiting or being retried; delivered: answered 2xx; failed: given up after 24 hours of attempts */
                status?: "pending" | "delivered" | "failed";
                /** @description Deliveries a page */
                limit?: number;
                /** @description Opaque position from a `Link: rel="next"` header of the same listing */
                cursor?: string;
            };
            header?: never;
            path: {
                /** @description The endpoint */
                id: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDelivery"][];
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no webhook endpoint has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    retryWebhookDelivery: {
        parameters: {
            query?: never;
            header?: {
                /** @description Whom the change is made for (a sign-up system's user), kept in the audit event as `onBehalfOf`; the actor is always the authenticated operator; no control characters or bidirectional overrides */
                "x-audit-actor"?: string;
            };
            path: {
                /** @description The endpoint */
                id: bigint;
                /** @description The event delivered */
                eventId: bigint;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Pending again */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: no webhook endpoint has this id */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    exportUsage: {
        parameters: {
            query: {
                /** @description The first hour (or day) exported, its start, inclusive */
                from: string;
                /** @description The end of the range, exclusive */
                to: string;
                /** @description A row per key and UTC hour, or per key and UTC day (the sum of its hours) */
                granularity?: "hour" | "day";
                /** @description Only this account's keys */
                accountId?: bigint;
                /** @description csv (a header row first), a JSON array, or one JSON object a line */
                format?: "csv" | "json" | "ndjson";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The rows */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/csv": string;
                    "application/json": {
                        /**
                         * Format: date-time
                         * @description The start of the UTC hour or day
                         */
                        start: string;
                        /**
                         * Format: int64
                         * @description The key's account
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
                    }[];
                    "application/x-ndjson": string;
                };
            };
            /** @description `invalid_request`: a value fails validation; the message names the field */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: the token is missing or wrong */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_role`: the operator's role may not do this */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: too many failed attempts from this address; every request waits */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `service_unavailable`: the database cannot be reached */
            503: {
                headers: {
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
export const int64Properties: ReadonlySet<string> = new Set(["accountId","eventId","graceSeconds","id","keyId","perDay","perMinute"])
