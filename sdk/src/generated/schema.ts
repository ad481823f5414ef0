// Generated from openapi.json by `npm run generate -w @stablecoin-payments/sdk`; do not edit.
/* eslint-disable */
export interface paths {
    "/checkout/{session_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Hosted checkout page
         * @description The page a session's payment_url points at, server-rendered for the session's state: open (amount and its fiat equivalent when a fresh rate exists, the receiving address and the amount with copy buttons, a QR code and a wallet link for the amount still due, a countdown), partially paid (what is left), paid (a clear paid message, the receipt; no QR, no wallet link) and expired (says so; no QR, no wallet link). A sandbox or demo session shows a TEST MODE banner; the merchant's order reference (metadata.order_id, else metadata.reference) is shown; once paid or expired, the session's return_url is a "Back to the shop" link. The page follows the status live (it polls /status and re-renders from the server). Public: the unguessable session id is the capability. Served with a strict Content-Security-Policy and no external resources.
         */
        get: operations["getCheckoutPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/checkout/{session_id}/receipt": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The buyer's PDF receipt
         * @description The same document as GET /v1/payment_sessions/{session_id}/receipt, for the buyer: public, the unguessable session id is the capability (the hosted checkout page links here once money has arrived). 409 while nothing was received. Limited per client to PUBLIC_RATE_LIMIT_PER_MINUTE a minute (429).
         */
        get: operations["getCheckoutReceipt"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/checkout/{session_id}/status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Buyer-safe status of a checkout
         * @description What the checkout page polls: no merchant id and no metadata.
         */
        get: operations["getCheckoutStatus"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Download this OpenAPI description
         * @description Requires credentials like a merchant endpoint; without them 401 code 7.
         */
        get: operations["getOpenapi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agent-wallets/{agent_wallet_id}/policy": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read an agent wallet's current spend policy */
        get: operations["getAgentSpendPolicy"];
        /**
         * Set an agent wallet's spend policy
         * @description Replaces the wallet's policy with a new version (new `id` pol_…, `version` + 1). A rail absent from `limits` is not allowed; empty allowed_targets / allowed_api_domains mean no restriction; window durations such as 1h, 24h, 7d (1m to 30d); amounts are digit strings of smallest units. Without a policy every attempt is denied (no_policy).
         */
        put: operations["putAgentSpendPolicy"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agent-wallets/{agent_wallet_id}/spend-attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List an agent wallet's spend attempts (newest first) */
        get: operations["listAgentSpendAttempts"];
        put?: never;
        /**
         * Evaluate and record an outbound spend attempt
         * @description Evaluates the attempt against the rules in this order: ownership (wallet_not_owned) → wallet type (not_agent_wallet) → the merchant's own network: testnet for sandbox, mainnet for live (sandbox_mainnet_not_allowed, live_testnet_not_allowed) → KYC for mainnet (kyc_required) → rail enabled and on the wallet's chain (rail_not_enabled, wallet_rail_mismatch) → policy present, unexpired, allowing mainnet, naming the rail in limits (no_policy, policy_expired, policy_mainnet_not_allowed, rail_not_in_policy) → denylist (target_denied) → allowlist of targets and API domains (target_not_allowed, api_domain_not_allowed) → per-attempt cap (per_attempt_cap_exceeded) → window caps over pending and posted spends (window_amount_exceeded, window_count_exceeded) → approval threshold (approval_required, approval_threshold). The first failing rule decides. An allowed attempt the wallet cannot fund is denied with insufficient_funds; one executed on chain is a payout, so the platform's payout limits bind it too (payout_amount_limit_exceeded over PAYOUT_AMOUNT_LIMIT, daily_payout_limit_exceeded over DAILY_PAYOUT_LIMIT, counted with the merchant's payouts of the day), and its network fee is the agent wallet's, reserved when its payout is signed (the payout fails when the wallet's ETH or SOL cannot pay it). `pending` writes the attempt and a pending ledger transfer (`ledger_entry_id`) in one atomic write; `approval_required` reserves nothing; `denied` writes no ledger row. Attempts on one wallet are decided one at a time, so concurrent attempts never reserve more than a window cap. `reference` is the idempotency key: the same reference and body answer 200 with the same attempt, another body 409. A pending attempt is executed at once: to one of this service's wallets or to an x402 challenge's payTo (with `reference` = the challenge id, which also sets `spend_reference` to the X-Service-Payment value) inside the ledger; to any other address as an on-chain payout of the agent wallet (persisted before broadcast, never sent twice). `settlement` shows the execution.
         */
        post: operations["createAgentSpendAttempt"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agent-wallets/{agent_wallet_id}/spend-attempts/{attempt_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a spend attempt */
        get: operations["getAgentSpendAttempt"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agent-wallets/{agent_wallet_id}/spend-attempts/{attempt_id}/approve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Approve an attempt awaiting approval
         * @description Re-evaluates every rule but the approval threshold (the caps against today's spends): pending (reserved and executed) or denied. Only an approval_required attempt (409 otherwise).
         */
        post: operations["approveAgentSpendAttempt"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agent-wallets/{agent_wallet_id}/spend-attempts/{attempt_id}/deny": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deny an attempt awaiting approval
         * @description status denied, reason denied_by_merchant; nothing was reserved. Denying a denied attempt is a no-op.
         */
        post: operations["denyAgentSpendAttempt"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agent-wallets/{agent_wallet_id}/spend-attempts/evaluate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Dry-run a spend attempt
         * @description The decision, the rule trace and the headroom of each window, without writing anything. Another merchant's agent wallet is a 404, like an unknown one, before anything about it is evaluated.
         */
        post: operations["evaluateAgentSpendAttempt"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/audit-events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the merchant's own audit events
         * @description The calling merchant's audit log, newest first: merchant.registered, merchant.api_key.rotated, merchant.webhook_secret.rotated, merchant.credential.revoked, payment_session.webhook.delivered / .failed / .skipped, payout.created / .completed / .failed, operator.kyc.set, operator.rate_limit.set, agent_wallet.policy.set, and more types as the service grows. Each event is written in the same atomic write as the change it records and is then linked into the merchant's hash chain (seq counts the merchant's events without gaps; operators verify the chain). Never contains API keys, webhook secrets, signatures or request bodies. Paged like catalog lists: pass next_cursor as cursor for the next page.
         */
        get: operations["listAuditEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/catalog/prices/{price_id}/checkout-intent": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Resolve a price into checkout fields
         * @description No credentials, no body. Only when the price, its plan, its product and its store are all published (409 naming the one that is not). allowed_payment_methods = the price's methods (or every rail of its token) ∩ enabled rails ∩ testnet only for a sandbox merchant; when that is empty, 409 and nothing is created. The merchant's rail policy (PUT /v1/me/rail-policy) narrows it further; when it excludes every one of them, 400 (code 3, field paymentMethod, the message naming the rails) and nothing is created. Records a checkout snapshot valid for 30 minutes; the price, plan and product become checkout-referenced (immutable: a PATCH makes a new version). At most 300 intents per client and minute (429).
         */
        post: operations["createCheckoutIntent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/catalog/prices/{price_id}/x402": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Buy a published catalog price with any x402 client
         * @description No credentials. Without a payment header: 402 with PAYMENT-REQUIRED (x402 v2 PaymentRequired, one accepts[] entry per rail the price can be paid on, each a challenge of the price's merchant living 5 minutes, resource.url this URL), X-PAYMENT-REQUIRED (the spec's flat challenge of the first) and the spec's 402 body. With PAYMENT-SIGNATURE (x402 v2), X-Service-Payment or X-PAYMENT: the proof is redeemed for the merchant (as POST /v1/x402/redeem): 200 with the purchase and PAYMENT-RESPONSE (a v2 SettleResponse); 202 while the settlement confirms (send the same header again; never pay twice); a proof that does not pay: 402 again with the reason in `error`. The merchant is told by its x402.settled event (the challenge's price_id names the price). A price that is not published (with its plan, product and store): 404; one no x402 client can pay here: 409.
         */
        get: operations["buyPriceWithX402"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/catalog/products": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Discover published products
         * @description No credentials. Published products of published stores, newest first, each with its published plans and their published prices. q: case-insensitive substring search over name and description. Page with limit (1 to 100, default 20) and cursor.
         */
        get: operations["discoverProducts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/catalog/products/{product_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a published product
         * @description No credentials. The same nested shape for one product; 404 unless the product and its store are published.
         */
        get: operations["discoverProduct"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your events
         * @description Newest first. Page with limit (1 to 100, default 20) and cursor (the next_cursor of the previous page); has_more tells whether another page exists. Filters: type, created_after.
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
    "/v1/events/{event_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Retrieve one of your events
         * @description The event as GET /v1/events shows it. Another merchant's event is a 404 like an unknown one.
         */
        get: operations["getEvent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Stream your new events (Server-Sent Events)
         * @description A text/event-stream of the merchant's events as they are committed, on any node of a cluster. Each message is `id: <stream position>`, `event: <event_type>`, `data: <Event as JSON>`. Without Last-Event-ID only events after the connection are sent; with it (the header EventSource sends on a reconnect, or the last_event_id query parameter, or the id of an event from GET /v1/events) every event after that one is sent first, so nothing is missed across a reconnect or a node restart. A comment line is sent every 15 s while idle; the server ends a connection after 30 minutes and the client reconnects with Last-Event-ID.
         */
        get: operations["streamEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The authenticated merchant's profile */
        get: operations["getMe"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/me/credentials/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** End the overlap of the previous credential now */
        post: operations["revokeCredentials"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/me/credentials/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate the API key (default) or the webhook secret
         * @description Returns the new credential once. The previous API key keeps working until previous_api_key_expires_at (24 hours); during a webhook-secret overlap, webhooks carry one v1 signature per live secret.
         */
        post: operations["rotateCredentials"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/me/rail-policy": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The merchant's rail policy
         * @description The rails the merchant accepts (allowed_rails; null: no policy, every enabled rail) and the rails it can be paid on now (effective_rails: enabled, in its environment, allowed by the policy).
         */
        get: operations["getRailPolicy"];
        /**
         * Set the merchant's rail policy
         * @description Replaces the merchant rail policy (the spec's planned rule). From then on, POST /v1/payment_sessions, checkout intents of the merchant's catalog prices and x402 challenges on a rail outside allowed_rails fail before a payable session exists: 400 (code 3) with field paymentMethod, the message naming the rail. A checkout intent offers only the price's methods the policy allows, and is refused when none is left. Every entry must be a rail the service knows, as <chain>:<network>:<token> (enabled or not: a mainnet rail may be named before it is configured); an unknown one is a 400 naming it (field allowed_rails[i]). allowed_rails null removes the policy (every enabled rail, the default). Sessions that already exist are unaffected. Each change writes an audit event merchant.rail_policy.set with the old and the new list, in the same write as the change.
         */
        put: operations["putRailPolicy"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/merchants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Step 4: register a merchant
         * @description Unauthenticated callers must send sandbox true and complete steps 1-3; the email must pass the trust gate (trusted email or domain, or a valid invitation token), otherwise 403 with message `registration is not permitted for this email`. A live (non-sandbox) merchant needs `Authorization: Bearer <token>` of an operator-created user. api_key and webhook_secret are returned once. With idempotency_key, a retry within 24 hours returns the same merchant and the same credentials (sealed under the idempotency key); a different payload with the same key is 409.
         */
        post: operations["registerMerchant"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/merchants/email-verification": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Step 1: start a registration intent
         * @description Always 200 with the same shape, whatever the email; a one-time code is emailed only when the email passes the trust check or a valid invitation_token is given. Disposable-mail domains are refused with 400. A webhook_url given here is checked with the rule of registration (step 4) before any code is sent or counted, so a URL the service would refuse costs no code.
         */
        post: operations["startEmailVerification"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/merchants/email-verification/confirm": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Step 2: confirm the emailed code
         * @description Codes expire after 10 minutes; after 5 wrong codes the intent answers 429 and registration starts again.
         */
        post: operations["confirmEmail"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/merchants/registration-proof-of-work": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Step 3: get a proof-of-work challenge
         * @description Find a nonce such that SHA-256(challenge + ":" + nonce) has at least `difficulty` leading zero bits. Challenges are single-use, expire after 15 minutes and are bound to the registration intent. With a valid invitation token: required false.
         */
        post: operations["issueProofOfWork"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payment_methods": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the globally enabled rails
         * @description The live, authoritative list of enabled rails. A rail is the exact (chain, network, token) triple. Platform-wide; states what the service can settle.
         */
        get: operations["listPaymentMethods"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payment_sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your payment sessions
         * @description Newest first. Page with limit (1 to 100, default 20) and cursor (the next_cursor of the previous page); has_more tells whether another page exists. Filter: status.
         */
        get: operations["listPaymentSessions"];
        put?: never;
        /**
         * Create a payment session
         * @description Creates a session for `amount` (tokens) or `price` (fiat, converted at a fresh rate and locked: see FiatPrice) on the rail in `paymentMethod` (legacy name `payment_method` accepted) and returns it with a fresh deposit address. Rules: the rail must be enabled (GET /v1/payment_methods), matched on (chain, network, token); methodID 1 (fiat) is refused while no fiat rail exists; `amount` must not have more decimals than the token and must be at least the rail's min_amount; `expires_in` is a duration such as 15m, 45m, 1h (a whole number and one of s, m, h, d) between 10s and 7d; `metadata` is at most 4KB as JSON; a metadata.checkout_reference_id is checked against the catalog checkout. Sandbox merchants (service_sk_test_ keys) may use testnet rails only (403); mainnet sessions need the merchant's KYC to be verified (403). When configured, SESSION_AMOUNT_LIMIT caps one session and DAILY_VOLUME_LIMIT caps the merchant's session volume per rail and UTC day (400). A rail outside the merchant's rail policy (PUT /v1/me/rail-policy) is a 400 (code 3) with field paymentMethod naming the rail, before any address is assigned. Refusals change nothing.
         */
        post: operations["createPaymentSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payment_sessions/{session_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Retrieve a payment session
         * @description With the owning merchant's X-API-Key. Another merchant's session is 404. Demo sessions are readable without credentials; without credentials any other id answers 401.
         */
        get: operations["getPaymentSession"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payment_sessions/{session_id}/diagnostics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Explain what is going on with a payment session
         * @description Findings about one of the merchant's sessions, each with a stable code, a severity (info: nothing to do yet; warning: look at it; action: somebody must act), a plain-language explanation and the next step. Codes: stuck_unconfirmed (a payment on chain has not reached the confirmation depth for 15 minutes, or a confirmed payment was recorded but not credited for 2 minutes), confirmation_lag (a payment is on chain with fewer confirmations than required; details carry the current and required depth), listener_lag (no node is watching the session's chain and network, it has made no progress for 2 minutes, it is more than 20 blocks behind, or no connection to that chain is configured), underpaid, overpaid, wrong_token (a payment in another token reached the address), wrong_network (a payment to the address on the other network of the chain), paid_after_expiry (recorded on the session, which stays expired), expired_unpaid, webhook_failing (the session's webhook is failing or gave up). An empty list means nothing is wrong. Ethereum transfers not yet at depth are read from the chain at request time (at most 64 blocks, 5 s); Solana deposits count at the configured commitment within seconds, so Solana sessions show no confirmation_lag. Only the merchant that owns the session; any other session is 404.
         */
        get: operations["getSessionDiagnostics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payment_sessions/{session_id}/receipt": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * PDF receipt of a payment session
         * @description A PDF receipt of a session that has received money (completed, partial_paid, or expired with late money): merchant name, session id, status, expected and received amounts exactly (token units, no rounding), token, chain, network, each counted deposit with its transaction hash and explorer link (sandbox simulations are marked), OVERPAID / PARTIAL / LATE marks, UTC timestamps, a QR code of the explorer link of the paying transaction (else of the deposit address) and, when a rate was recorded at completion (completion_rate), the fiat value of the received amount at that rate. Reproducible: the same session yields byte-identical PDFs (the document's creation date is the completion time, else the last deposit's credit time; no random ids), so the ETag (sha256 of the bytes) is stable and If-None-Match answers 304. A session that has received nothing answers 409 (code 5). Rendered on a worker pool. Authentication: the owning merchant's X-API-Key (another merchant's session is 404); demo sessions without credentials, as on GET /v1/payment_sessions/{session_id}; without credentials any other id answers 401. The buyer gets the same document from GET /checkout/{session_id}/receipt. Requests without a key are limited per client to PUBLIC_RATE_LIMIT_PER_MINUTE a minute (429).
         */
        get: operations["getPaymentSessionReceipt"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payment_sessions/{session_id}/refunds": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a session's refunds
         * @description Newest first. Page with limit (1 to 100, default 20) and cursor.
         */
        get: operations["listRefunds"];
        put?: never;
        /**
         * Refund a payment session
         * @description Refunds a payment session: at most what it received minus its refunds that have not failed (pending ones count), decided atomically: the refund, its pending ledger transfer (id = refund id) from the merchant's settlement wallet of the session's chain and network, the network-fee reservation (the merchant pays the fee and any token-account rent, as for payouts) and the session's refund total are one write, so concurrent refunds of one session can never exceed what it received. Without amount_subunits an overpaid session refunds its excess (the part of it not refunded yet), any other everything left. Without destination the refund goes back to the address that paid: the sender of the session's deposits (the ERC-20 Transfer's from, the ETH transaction's sender, the Solana transfer's owner). The transaction is signed and persisted before it is broadcast and re-sent unchanged, so a refund is never sent twice; a node killed at any point resumes it. A session paid with simulated sandbox money refunds as simulated (completed at once, nothing broadcast). Refusals (nothing changes): 400 destination when the deposits came from more than one address, from an address not known, from a contract or a program's account, from one of this service's addresses, or from an address that also paid three or more other merchants (a shared address such as an exchange's): name the buyer's address then; 400 an invalid destination or amount_subunits; 403 a mainnet session of a merchant whose KYC is not verified (mainnet_kyc_required); 404 another merchant's or a demo session; 409 code 5 when nothing was received, everything is refunded, the amount exceeds what is left (the message says how much is), the session's payment is still being swept into the settlement wallet (retryable), or the wallet cannot cover the amount or its network fee (insufficient available balance). Webhooks refund.completed and refund.failed follow; a failed refund's amount can be refunded again.
         */
        post: operations["createRefund"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payment_sessions/{session_id}/refunds/{refund_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Retrieve a refund */
        get: operations["getRefund"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payment_sessions/{session_id}/simulate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Complete a demo or sandbox session without a chain transaction
         * @description No body. Completes a demo session (anyone) or the calling sandbox merchant's own session while it is pending or partial_paid, with a simulated deposit of the missing amount, and returns the session (status completed; the completed webhook follows for sandbox sessions). Refused, and counted in abuse_signal_total{signal="simulation_abuse"}: a non-demo session that is not the caller's sandbox session (403, outcome blocked_non_demo; another merchant's session answers 404), a session that is not pending or partial_paid (409, outcome blocked_non_pending).
         */
        post: operations["simulatePaymentSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payment_sessions/{session_id}/webhook/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Redeliver the session's webhook events now
         * @description Makes one immediate attempt for every event of the session (or only event_id), whatever its status: a pending event in back-off is tried now (a failure continues its schedule), a failed or delivered event is sent again (a failure leaves its status as it was; the attempt is in the log with manual: true). An event whose attempt is in progress right now is left to that attempt. Answers after the attempts, with the session's delivery log. Only the merchant that owns the session; any other session is 404. The body is optional.
         */
        post: operations["retrySessionWebhooks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payment_sessions/{session_id}/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read the session's webhook delivery log
         * @description Every webhook event of the session with its delivery status and attempts (time, HTTP status, latency, error class). Response bodies and secrets are never kept. Only the owning merchant; otherwise 404.
         */
        get: operations["getSessionWebhooks"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payment_sessions/demo": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a demo session (public)
         * @description Creates a session with demo: true on a testnet rail, without credentials; anyone can read it and complete it with simulate. The body is optional: chain, token (default: the first enabled testnet rail, USDC preferred), network (testnet only), amount (default 1 USDC, or 100 times the rail's min_amount), expires_in (10s to 1h, default 15m). Limited per client (PUBLIC_RATE_LIMIT_PER_MINUTE a minute): 429 beyond. Demo sessions send no webhooks.
         */
        post: operations["createDemoPaymentSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payouts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your payouts
         * @description Newest first, optionally of one wallet. Page with limit (1 to 100, default 20) and cursor.
         */
        get: operations["listPayouts"];
        put?: never;
        /**
         * Pay out from a wallet
         * @description Reserves the amount in the wallet's ledger (a pending transfer whose id is the payout id) in the same atomic write as the payout, so concurrent payouts can never overdraw a wallet. A destination that is one of this service's wallets (same chain and network) settles inside the ledger at once (status completed, execution ledger): that is how a merchant funds an agent wallet. Sandbox money that exists only as a simulation leaves only as a simulated payout (simulated true, completed at once, nothing broadcast). Otherwise the payout is sent on chain (execution chain): pending until its transaction is built, signed, persisted and broadcast (processing), then completed at the rail's confirmation depth, or failed with the reservation released. Refusals (nothing changes): 400 unknown token for the wallet's chain, invalid destination (Ethereum: 0x and 40 hex digits, mixed case must be the EIP-55 checksum; Solana: base58 of 32 bytes), amount below the rail minimum or with too many decimals, both or neither of amount and amount_subunits, over PAYOUT_AMOUNT_LIMIT (amount_limit_exceeded) or DAILY_PAYOUT_LIMIT (daily_volume_limit_exceeded); 403 a wallet on a network that is not the merchant's, or a mainnet wallet of a merchant whose KYC is no longer verified (mainnet_kyc_required), or an agent wallet paying anywhere but back to one of the merchant's merchant wallets (an agent wallet spends through its spend policy: POST /v1/agent-wallets/{id}/spend-attempts); 404 another merchant's wallet; 409 code 5 'insufficient available balance', also when the wallet's ETH or SOL cannot cover the on-chain payout's network fee (the merchant pays it: fee_subunits is the quote, reserved with the amount; docs/money-out.md "Who pays network fees"). Webhooks payout.completed and payout.failed follow.
         */
        post: operations["createPayout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/payouts/{payout_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a payout
         * @description Another merchant's payout is 404 like an unknown id.
         */
        get: operations["getPayout"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/plans": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your plans
         * @description Newest first. Page with limit (1 to 100, default 20) and cursor (the next_cursor of the previous page); has_more tells whether another page exists. Every version is its own row.
         */
        get: operations["listPlans"];
        put?: never;
        /**
         * Create a plan
         * @description Creates a plan in status draft (version 1). Flat body; the parent is referenced by id and must be yours (another merchant's id is 404) and not archived (409).
         */
        post: operations["createPlan"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/plans/{plan_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a plan */
        get: operations["getPlan"];
        put?: never;
        post?: never;
        /**
         * Delete a draft plan
         * @description Hard delete, only for a draft that was never published, is not referenced by a checkout and has no prices; otherwise 409 (archive it instead).
         */
        delete: operations["deletePlan"];
        options?: never;
        head?: never;
        /**
         * Change a plan
         * @description A draft plan that no checkout references changes in place (200). A published, archived or checkout-referenced plan is not changed: a new draft version is created from it with the changes (201, new id, version + 1, supersedes_plan_id = this id).
         */
        patch: operations["updatePlan"];
        trace?: never;
    };
    "/v1/plans/{plan_id}/archive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Archive a plan
         * @description Draft or published → archived; already archived: 200 unchanged. Archived resources are hidden from buyers and cannot be checked out. No body.
         */
        post: operations["archivePlan"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/plans/{plan_id}/publish": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Publish a plan
         * @description Only from draft (otherwise 409). Other published versions of the same plan are archived in the same step, so one version is live. No body.
         */
        post: operations["publishPlan"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prices": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your prices
         * @description Newest first. Page with limit (1 to 100, default 20) and cursor (the next_cursor of the previous page); has_more tells whether another page exists. Every version is its own row.
         */
        get: operations["listPrices"];
        put?: never;
        /**
         * Create a price
         * @description Creates a price in status draft (version 1). Flat body; the parent is referenced by id and must be yours (another merchant's id is 404) and not archived (409).
         */
        post: operations["createPrice"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prices/{price_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a price */
        get: operations["getPrice"];
        put?: never;
        post?: never;
        /**
         * Delete a draft price
         * @description Hard delete, only for a draft that was never published, is not referenced by a checkout and has no children; otherwise 409 (archive it instead).
         */
        delete: operations["deletePrice"];
        options?: never;
        head?: never;
        /**
         * Change a price
         * @description A draft price that no checkout references changes in place (200). A published, archived or checkout-referenced price is not changed: a new draft version is created from it with the changes (201, new id, version + 1, supersedes_price_id = this id).
         */
        patch: operations["updatePrice"];
        trace?: never;
    };
    "/v1/prices/{price_id}/archive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Archive a price
         * @description Draft or published → archived; already archived: 200 unchanged. Archived resources are hidden from buyers and cannot be checked out. No body.
         */
        post: operations["archivePrice"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/prices/{price_id}/publish": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Publish a price
         * @description Only from draft (otherwise 409). Other published versions of the same price are archived in the same step, so one version is live. No body.
         */
        post: operations["publishPrice"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/products": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your products
         * @description Newest first. Page with limit (1 to 100, default 20) and cursor (the next_cursor of the previous page); has_more tells whether another page exists. Every version is its own row.
         */
        get: operations["listProducts"];
        put?: never;
        /**
         * Create a product
         * @description Creates a product in status draft (version 1). Flat body; the parent is referenced by id and must be yours (another merchant's id is 404) and not archived (409).
         */
        post: operations["createProduct"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/products/{product_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a product */
        get: operations["getProduct"];
        put?: never;
        post?: never;
        /**
         * Delete a draft product
         * @description Hard delete, only for a draft that was never published, is not referenced by a checkout and has no plans; otherwise 409 (archive it instead).
         */
        delete: operations["deleteProduct"];
        options?: never;
        head?: never;
        /**
         * Change a product
         * @description A draft product that no checkout references changes in place (200). A published, archived or checkout-referenced product is not changed: a new draft version is created from it with the changes (201, new id, version + 1, supersedes_product_id = this id).
         */
        patch: operations["updateProduct"];
        trace?: never;
    };
    "/v1/products/{product_id}/archive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Archive a product
         * @description Draft or published → archived; already archived: 200 unchanged. Archived resources are hidden from buyers and cannot be checked out. No body.
         */
        post: operations["archiveProduct"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/products/{product_id}/publish": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Publish a product
         * @description Only from draft (otherwise 409). Other published versions of the same product are archived in the same step, so one version is live. The product is discoverable once its store is published too. No body.
         */
        post: operations["publishProduct"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/rates": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Spot rates of the enabled tokens
         * @description Public (no credentials; limited per client to 4 × PUBLIC_RATE_LIMIT_PER_MINUTE a minute). Without parameters: every enabled token against USD. Sources are tried per pair in the order of RATE_SOURCES: a Chainlink AggregatorV3 feed read with latestRoundData over the chain's RPC (answer <= 0, incomplete rounds and rounds older than the feed's limit are refused), an HTTP API in CoinGecko's /simple/price shape (RATES_HTTP_URL), and a static table (RATES_STATIC, for sandbox). The first value not older than RATES_MAX_AGE wins; when no source is that fresh, the freshest value not older than RATES_REFUSE_AGE is served with stale: true. Values are cached for RATES_CACHE_TTL and shared by all nodes. A pair with no source giving a value is a 503 (code 1) whose message names the pair and why, never an invented number; in the default list such pairs are listed under `unavailable` while others have a rate.
         */
        get: operations["listRates"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sandbox/faucets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Testnet faucets of the enabled rails
         * @description Public (no credentials: the list is configuration). One entry per faucet of an enabled testnet rail, from FAUCETS (default: the public faucets for Sepolia ETH, Sepolia and Solana devnet USDC, and Solana devnet SOL), never for a rail that is not enabled. When a testnet rail's RPC URL is a local development chain (a loopback address), that rail lists the service's own drip instead (local: true; POST /v1/sandbox/faucets/drip) and not the public faucets, which serve the public testnets.
         */
        get: operations["listFaucets"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sandbox/faucets/drip": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send test funds on a local development chain
         * @description Sandbox merchants only (a service_sk_test_ X-API-Key; a live key is 403). Sends FAUCET_DRIP_AMOUNTS of the token (default 1 ETH, 100 USDC, 1 SOL) from the chain's development gas wallet to `address`, through the transaction outbox (signed on the worker pool and persisted before it is broadcast). Only on a testnet rail whose RPC URL is a loopback address (and, for Ethereum, whose node reports a development chain id, 31337 or 1337); on any other chain 400. One drip per address, chain and token per FAUCET_DRIP_INTERVAL (default 10m) and FAUCET_DRIP_PER_MERCHANT drips (default 20) per merchant in that window: 429 beyond. A gas wallet that cannot pay is a 503 naming the wallet to fund.
         */
        post: operations["dripFaucet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stores": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your stores
         * @description Newest first. Page with limit (1 to 100, default 20) and cursor (the next_cursor of the previous page); has_more tells whether another page exists.
         */
        get: operations["listStores"];
        put?: never;
        /**
         * Create a store
         * @description Creates a store in status draft. Flat body; the parent is referenced by id and must be yours (another merchant's id is 404) and not archived (409).
         */
        post: operations["createStore"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stores/{store_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a store */
        get: operations["getStore"];
        put?: never;
        post?: never;
        /**
         * Delete a draft store
         * @description Hard delete, only for a draft that was never published, is not referenced by a checkout and has no products; otherwise 409 (archive it instead).
         */
        delete: operations["deleteStore"];
        options?: never;
        head?: never;
        /**
         * Change a store
         * @description Changes the store in place, in any status (200).
         */
        patch: operations["updateStore"];
        trace?: never;
    };
    "/v1/stores/{store_id}/archive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Archive a store
         * @description Draft or published → archived; already archived: 200 unchanged. Archived resources are hidden from buyers and cannot be checked out. No body.
         */
        post: operations["archiveStore"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/stores/{store_id}/publish": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Publish a store
         * @description Draft or archived → published (a store may be published again); already published: 200 unchanged. Its published products become discoverable. No body.
         */
        post: operations["publishStore"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List your wallets
         * @description Newest first. Page with limit (1 to 100, default 20) and cursor (the next_cursor of the previous page); has_more tells whether another page exists.
         */
        get: operations["listWallets"];
        put?: never;
        /**
         * Create a wallet
         * @description Creates a wallet of the calling merchant on one chain and network, with its own on-chain address derived from the platform key material on a BIP-44 account separate from deposit addresses (never reused), so any balance can be checked on an explorer. A merchant's wallets live on its own network, like its sessions: sandbox merchants testnet only, live merchants mainnet only (403 otherwise), and a mainnet wallet needs verified KYC (403). Asking for mainnet without the right counts abuse outcome mainnet_kyc_required, as for mainnet sessions. Each merchant also has a default `merchant` wallet per chain and network, created on the first deposit that settles there (is_default true).
         */
        post: operations["createWallet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets/{wallet_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a wallet with its balances
         * @description Another merchant's wallet is 404 like an unknown id. `available` can be paid out now; `pending` is settled money still on its way (a deposit not yet swept from its deposit address into the wallet address and confirmed).
         */
        get: operations["getWallet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/wallets/{wallet_id}/transactions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a wallet's transactions
         * @description Every ledger transfer into or out of the wallet, newest first, one transaction per transfer side (an internal transfer shows as transfer_out in one wallet and transfer_in in the other). Page with limit (1 to 100, default 20) and cursor.
         */
        get: operations["listWalletTransactions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/x402/challenges": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create an x402 challenge for a resource
         * @description Stores a challenge to pay `amount_subunits` (or a published catalog price's amount) on one rail into the merchant's wallet of that chain and network, and returns the X402Challenge and its base64 `header` for PAYMENT-REQUIRED / X-PAYMENT-REQUIRED. `memo` is the challenge id; every proof is bound to it. `fee_payer` is the service's gas wallet (the fee payer a Solana payment transaction must name). expires_in: 10s to 24h, default 5m. A catalog price in fiat is converted at a fresh rate of the rail's token (rounded up) and the response carries its quote; no fresh rate: 503. A rail outside the merchant's rail policy (PUT /v1/me/rail-policy) is a 400 (code 3, field paymentMethod) naming the rail; no challenge is stored. The merchant's own network only, as for sessions: a sandbox merchant charges on testnet, a live merchant on mainnet and only after KYC; anything else is a 403 (code 7, field paymentMethod.network). Besides the flat challenge the answer carries `payment_required`, the x402 v2 PaymentRequired (CAIP-2 network read from the node, the token's EIP-712 name and version read from the token, the challenge id in `extra.challengeId`), for PAYMENT-REQUIRED. An amount below the rail's x402 minimum (X402_MIN_AMOUNTS, never below the rail's min_amount) is a 400: a challenge must bring more than settling it costs.
         */
        post: operations["createX402Challenge"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/x402/challenges/{challenge_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a challenge and whether it was redeemed */
        get: operations["getX402Challenge"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/x402/facilitator/discovery/resources": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * x402 discovery (bazaar): catalog prices payable with x402
         * @description No credentials. The x402 bazaar's discovery list (what withBazaar(new HTTPFacilitatorClient({url: '<service>/v1/x402/facilitator'})).extensions.bazaar.listResources() reads): every published price (of a published plan, product and store) that standard x402 clients can pay, newest first, as a paid resource of this service (GET /v1/catalog/prices/{price_id}/x402) with one accepts[] entry per rail: USDC with a configured token, on the merchant's own network, allowed by its rail policy and the price's allowed_payment_methods (a fiat price converted at a fresh rate; below the rail's x402 minimum it is left out). Filters: type (http), payTo, network, scheme; limit 1–100 (20), offset. The newest 1,000 published prices are looked at. Listing a price creates its merchant's settlement wallet on that rail when it has none yet (payTo).
         */
        get: operations["x402DiscoveryResources"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/x402/facilitator/settle": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * x402 facilitator: settle a payment into one of your wallets
         * @description Authenticated with the merchant's X-API-Key. `paymentRequirements.payTo` must be the address of one of the merchant's wallets on that chain and network: otherwise 403, nothing read or written. A network whose rail is outside the merchant's rail policy (PUT /v1/me/rail-policy) is a 400 (code 3, field paymentRequirements.network) naming the rail; nothing is read or moved. The payload is checked as a redeemed proof is (payee, amount, asset, EIP-3009 validity window and signature over the token's domain, any nonce; Solana: fee payer = the gas wallet and in no instruction, one transferChecked to payTo's token account, compute-unit limit required and bounded). The gas wallet submits (EIP-3009) or co-signs as fee payer (Solana) the settlement, persisted before it is sent; the payment is recorded as a challenge of the merchant (id xfs_…, one per payment, GET /v1/x402/challenges/{id}) and, once confirmed at the rail's depth, credits the wallet in the ledger exactly once (deposit transfer x402:<id>), books the network fee as a platform cost and queues an x402.settled event, like a redeemed challenge. The same payload settled again is refused (already_redeemed), except a settlement that answered settlement_pending: settled again, it answers success once it has confirmed. 200 with success false and errorReason for a payment that does not pay.
         */
        post: operations["x402FacilitatorSettle"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/x402/facilitator/supported": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * x402 facilitator: what this service settles
         * @description For HTTPFacilitatorClient({url: '<service>/v1/x402/facilitator', createAuthHeaders}) with the merchant's X-API-Key. One `exact` kind per network the service can settle on (USDC with a configured token contract or mint): eip155:<chain id> (EIP-3009) and solana:<genesis hash prefix> (SPL transferChecked, `extra.feePayer` = the gas wallet).
         */
        get: operations["x402FacilitatorSupported"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/x402/facilitator/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * x402 facilitator: verify a payment without settling it
         * @description Authenticated with the merchant's X-API-Key. `paymentRequirements.payTo` must be the address of one of the merchant's wallets on that chain and network: otherwise 403, nothing read or written. A network whose rail is outside the merchant's rail policy (PUT /v1/me/rail-policy) is a 400 (code 3, field paymentRequirements.network) naming the rail; nothing is read or moved. The payload is checked as a redeemed proof is (payee, amount, asset, EIP-3009 validity window and signature over the token's domain, any nonce; Solana: fee payer = the gas wallet and in no instruction, one transferChecked to payTo's token account, compute-unit limit required and bounded). Also reads what settling would find on chain (the authorization unused, the payer's balance). Writes nothing. 200 with isValid false and invalidReason for a payment that does not pay.
         */
        post: operations["x402FacilitatorVerify"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/x402/redeem": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Verify and settle a proof, consuming its challenge once
         * @description `proof` is the proof header the client sent: X-Service-Payment (the spec's wire), PAYMENT-SIGNATURE (an x402 v2 PaymentPayload, the challenge named by `accepted.extra.challengeId`) or X-PAYMENT (an x402 v1 payload, the challenge found by resource, payTo and amount). Payloads: an EIP-3009 transferWithAuthorization with any nonce (keccak256(memo) as the spec's proofs use, or a random one; the token's own nonce and the unique proof key make it pay once) submitted by the service's gas wallet; a Solana transaction paying payTo, signed by the payer, with the gas wallet as fee payer, a compute-unit limit (required, at most 200,000) and a memo (the challenge id on the spec's wire; any on the v2 wire), co-signed and submitted; or an agent wallet's spend attempt (`spend_reference`). One payment per challenge across every proof type: an agent spend of the challenge and an on-chain proof in flight cannot both pay it. An EIP-3009 authorization that someone else submitted first still paid payTo: the token's AuthorizationUsed log (with its Transfer to payTo of the amount) settles the challenge with that transaction. 200 when settled (serve the resource; send `payment_response`, an x402 v2 SettleResponse, as PAYMENT-RESPONSE); 202 when the settlement has not confirmed in time (do not ask for a new payment: present the same proof again later, it is served once when settled); 402 with the reason leading the message when the proof does not pay (wrong_amount, wrong_asset, wrong_payee, wrong_network, wrong_resource, memo_mismatch, challenge_expired, not_yet_valid, authorization_expired, bad_signature, compute_limit_missing, already_redeemed, settlement_failed, …). Of concurrent redeems of one challenge exactly one wins. A settled on-chain payment books its network fee as a platform cost and queues an x402.settled event.
         */
        post: operations["redeemX402Proof"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    x402Event: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * An x402 payment event sent to the merchant's webhook_url
         * @description Sent when an x402 payment settles on chain into one of the merchant's wallets. Same signature (X-Service-Signature), event id header, retries and 2xx rule as payment session events.
         */
        post: operations["receiveX402Event"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    payoutEvent: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A payout event sent to the merchant's webhook_url
         * @description Sent when a payout completes or fails. Same signature (X-Service-Signature), event id header, retries and 2xx rule as payment session events.
         */
        post: operations["receivePayoutEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    refundEvent: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A refund event sent to the merchant's webhook_url
         * @description Sent when a refund completes or fails. Same signature (X-Service-Signature), event id header, retries and 2xx rule as payment session events.
         */
        post: operations["receiveRefundEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    paymentSessionEvent: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A payment session event sent to the merchant's webhook_url
         * @description Sent when a session completes, is partially paid or expires. Only a 2xx answer counts as delivered; redirects are not followed; failed deliveries are retried with exponential backoff and jitter for about three days. Verify X-Service-Signature over the raw body before trusting it, and de-duplicate by X-Service-Event-Id.
         */
        post: operations["receivePaymentSessionEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /**
         * @description The error envelope. code and message are the spec's (unchanged); the other fields say which input is at fault, what fixes it, which request it was and whether the same request may succeed later.
         * @example {
         *       "code": 3,
         *       "message": "body.amount must be > 0",
         *       "field": "amount",
         *       "remediation": "Send amount > 0.",
         *       "request_id": "req_01jd5k8w3h4q2x9y7z6v5t4s3r",
         *       "retryable": false,
         *       "errors": [
         *         {
         *           "field": "amount",
         *           "message": "body.amount must be > 0"
         *         },
         *         {
         *           "field": "paymentMethod.network",
         *           "message": "body.paymentMethod.network must be one of \"testnet\", \"mainnet\""
         *         }
         *       ]
         *     }
         */
        Error: {
            /**
             * @description 1 internal, 2 not found, 3 bad request, 4 rate limited, 5 conflict, 7 credentials
             * @enum {integer}
             */
            code: 1 | 2 | 3 | 4 | 5 | 7;
            /** @description what is wrong; for invalid input, the first problem */
            message: string;
            /**
             * @description the first invalid input: a body or query field's path (names joined by dots, [i] for an array item: paymentMethod.chain, webhook_url, allowed_payment_methods[0]) or a header's name (Idempotency-Key, X-Merchant-Id, Last-Event-ID). Absent when no single input is at fault (credentials, a missing resource, a server error).
             * @example paymentMethod.chain
             */
            field?: string;
            /** @description one sentence saying what to do: the header, setting, command or value that fixes it (a 401 names X-API-Key) */
            remediation: string;
            /** @description equals the X-Request-Id header of the response; quote it to the operator */
            request_id: string;
            /** @description true only where the same request can succeed later unchanged: 429, 5xx (a rate with no fresh source included), a lost race; false where the request itself must change */
            retryable: boolean;
            /** @description every invalid input at once (validation failures); the first is the one message and field name */
            errors?: components["schemas"]["FieldError"][];
        };
        /** @description One invalid input */
        FieldError: {
            /** @description its path, as Error.field; absent when the whole input is at fault */
            field?: string;
            message: string;
        };
        /**
         * Format: date-time
         * @description ISO 8601, UTC
         */
        Timestamp: string;
        Rail: {
            /**
             * @example ethereum
             * @example solana
             */
            chain: string;
            /** @enum {string} */
            network: "testnet" | "mainnet";
            /**
             * @example USDC
             * @example ETH
             * @example SOL
             */
            token: string;
            display_name: string;
            decimals: number;
            /** @description erc20, native or spl */
            kind: string;
            /** @description smallest accepted amount in token units */
            min_amount: number;
        };
        AgentSpendPolicyRequest: {
            /** @description per rail key <chain>:<network>:<token> */
            limits: {
                [key: string]: {
                    per_attempt_subunits?: string;
                    approval_above_subunits?: string;
                    windows?: {
                        duration: string;
                        max_subunits?: string;
                        max_count?: number;
                    }[];
                };
            };
            allowed_targets?: string[];
            denied_targets?: string[];
            allowed_api_domains?: string[];
            allow_mainnet?: boolean;
            /** Format: date-time */
            expires_at?: string | null;
        };
        AgentSpendPolicy: {
            /** @description pol_…, one per version */
            id: string;
            agent_wallet_id: string;
            version: number;
            /** @description per rail key <chain>:<network>:<token> */
            limits: {
                [key: string]: {
                    per_attempt_subunits?: string;
                    approval_above_subunits?: string;
                    windows?: {
                        duration: string;
                        max_subunits?: string;
                        max_count?: number;
                    }[];
                };
            };
            allowed_targets: string[];
            denied_targets: string[];
            allowed_api_domains: string[];
            allow_mainnet: boolean;
            /** Format: date-time */
            expires_at: string | null;
            /** Format: date-time */
            created_at: string;
        };
        AgentSpendAttemptRequest: {
            /** @description destination address, API payee or resource target */
            target: string;
            amount: number;
            /** @description must equal amount in the token's smallest units */
            amount_subunits: string;
            token_symbol: string;
            chain: string;
            /** @enum {string} */
            network: "testnet" | "mainnet";
            api_domain?: string;
            /** @description idempotency key of the attempt; an x402 challenge id when paying one */
            reference?: string;
            metadata?: Record<string, unknown>;
        };
        AgentSpendSettlement: {
            /** @enum {string} */
            status: "awaiting_execution" | "settled" | "submitted" | "failed";
            /** @enum {string} */
            execution: "ledger" | "chain" | "simulated";
            payout_id?: string;
            tx_hash?: string | null;
            settled_at?: string | null;
            failure_reason?: string | null;
        };
        AgentSpendRuleResult: {
            rule: string;
            passed: boolean;
            reason?: string;
        };
        AgentSpendAttempt: {
            id: string;
            merchant_id: string;
            agent_wallet_id: string;
            target: string;
            amount: number;
            amount_subunits: string;
            token_symbol: string;
            chain: string;
            network: string;
            /** @enum {string} */
            status: "pending" | "approval_required" | "denied";
            /** Format: date-time */
            created_at: string;
            /** @enum {string} */
            reason?: "wallet_not_owned" | "not_agent_wallet" | "sandbox_mainnet_not_allowed" | "live_testnet_not_allowed" | "kyc_required" | "rail_not_enabled" | "wallet_rail_mismatch" | "no_policy" | "policy_expired" | "policy_mainnet_not_allowed" | "rail_not_in_policy" | "target_denied" | "target_not_allowed" | "api_domain_not_allowed" | "per_attempt_cap_exceeded" | "window_amount_exceeded" | "window_count_exceeded" | "approval_threshold" | "insufficient_funds" | "denied_by_merchant" | "challenge_closed" | "payout_amount_limit_exceeded" | "daily_payout_limit_exceeded";
            policy_id?: string;
            ledger_entry_id?: string;
            /** @description for an x402 payment: the complete X-Service-Payment value */
            spend_reference?: string;
            api_domain?: string;
            reference?: string;
            metadata?: Record<string, unknown>;
            settlement?: components["schemas"]["AgentSpendSettlement"];
            trace?: components["schemas"]["AgentSpendRuleResult"][];
        };
        AgentSpendAttemptList: {
            data: components["schemas"]["AgentSpendAttempt"][];
            has_more: boolean;
            next_cursor: string | null;
        };
        /** @description Query of GET /v1/agent-wallets/{agent_wallet_id}/spend-attempts: each parameter once, as text. */
        AgentSpendAttemptListQuery: {
            /** @description page size, 1 to 100, default 20 */
            limit?: string;
            cursor?: string;
            /** @enum {string} */
            status?: "pending" | "approval_required" | "denied";
        };
        AgentSpendEvaluation: {
            /** @enum {string} */
            status: "pending" | "approval_required" | "denied";
            reason?: string;
            trace: components["schemas"]["AgentSpendRuleResult"][];
            windows: {
                rail?: string;
                duration?: string;
                used_subunits?: string;
                used_count?: number;
                max_subunits?: string | null;
                max_count?: number | null;
                remaining_subunits?: string | null;
                remaining_count?: number | null;
            }[];
        };
        /** @description The spec's flat challenge: all fields optional strings, no others. Amounts are digit strings in smallest units; memo is the challenge id. */
        X402Challenge: {
            version?: string;
            scheme?: string;
            network?: string;
            maxAmountRequired?: string;
            amount?: string;
            asset?: string;
            payTo?: string;
            recipient?: string;
            memo?: string;
            resource?: string;
            description?: string;
        };
        X402ChallengeRequest: {
            resource: string;
            amount_subunits?: string;
            price_id?: string;
            paymentMethod: {
                chain: string;
                /** @enum {string} */
                network: "testnet" | "mainnet";
                token: string;
            };
            description?: string;
            expires_in?: string;
        };
        X402ChallengeCreated: {
            challenge_id: string;
            /** Format: date-time */
            expires_at: string;
            challenge: components["schemas"]["X402Challenge"];
            /** @description base64 JSON of challenge (the spec's flat X402Challenge), for X-PAYMENT-REQUIRED */
            header: string;
            chain?: string;
            fee_payer?: string;
            /** @enum {string} */
            status?: "open" | "redeemed" | "expired";
            redeemed_at?: string | null;
            /** @description present when price_id names a catalog price in fiat: the fresh rate its amount in tokens was converted at (rounded up to the token's smallest unit) and locked with the challenge */
            quote?: components["schemas"]["SessionQuote"];
            /** @description the x402 v2 PaymentRequired for PAYMENT-REQUIRED; present when standard x402 clients can pay the rail (USDC with a configured token contract or mint) */
            payment_required?: components["schemas"]["X402PaymentRequired"];
        };
        X402RedeemRequest: {
            proof: string;
            resource: string;
        };
        X402Redemption: {
            challenge_id: string;
            /** @enum {string} */
            status: "settled" | "pending";
            payer: string;
            amount_subunits: string;
            tx_hash?: string;
            settled_at: string | null;
            /** @description base64 JSON of settle_response, for the PAYMENT-RESPONSE header */
            payment_response: string;
            settle_response?: components["schemas"]["X402SettleResponse"];
        };
        /** @description One way to pay on the x402 v2 wire (an `accepts[]` entry; what a client copies back as `accepted`). `extra`: on Ethereum the token's EIP-712 `name` and `version` read from the token (never assumed), on Solana `feePayer` (the service's gas wallet) and `memo`; for a challenge of this service also `challengeId`. */
        X402PaymentRequirements: {
            /** @enum {string} */
            scheme: "exact";
            /** @description CAIP-2: eip155:<chain id read from the node>, or solana:<first 32 characters of the node's genesis hash> (mainnet solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp, devnet solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1) */
            network: string;
            /** @description smallest units */
            amount: string;
            /** @description token contract (Ethereum) or mint (Solana) */
            asset: string;
            payTo: string;
            maxTimeoutSeconds: number;
            extra?: Record<string, unknown> | null;
        };
        /** @description The x402 v2 PaymentRequired carried (base64 JSON) in PAYMENT-REQUIRED, as @x402/core validates it. The spec's flat X402Challenge stays in X-PAYMENT-REQUIRED and in the 402 body; PAYMENT-REQUIRED also carries the flat fields beside these (all but `resource`, an object here), so a client that reads the spec's challenge from it keeps working. */
        X402PaymentRequired: {
            /** @enum {integer} */
            x402Version: 2;
            error?: string;
            resource: {
                url: string;
                description?: string;
                mimeType?: string;
            };
            accepts: components["schemas"]["X402PaymentRequirements"][];
        };
        /** @description x402 v2 SettleResponse: PAYMENT-RESPONSE (base64 JSON, with challenge_id, status and chain beside it) and the facilitator's /settle answer. */
        X402SettleResponse: {
            success: boolean;
            /** @description transaction hash or signature that moved the money ('' when none: an agent-wallet payment inside the ledger, or a refusal) */
            transaction: string;
            /** @description CAIP-2 where the challenge was offered on the v2 wire; else testnet or mainnet */
            network: string;
            payer?: string;
            /** @description a refusal's reason: the redeem reasons (wrong_amount, already_redeemed, settlement_failed, …), the facilitator's (invalid_network, invalid_asset, invalid_payload, invalid_payment_requirements, amount_below_minimum, insufficient_funds), or settlement_pending (settle the same payload again later) */
            errorReason?: string;
            errorMessage?: string;
            challenge_id?: string;
            /** @enum {string} */
            status?: "settled" | "pending";
            chain?: string;
        };
        X402VerifyResponse: {
            isValid: boolean;
            payer?: string;
            invalidReason?: string;
            invalidMessage?: string;
        };
        /** @description What @x402/core's HTTPFacilitatorClient posts to /verify and /settle. */
        X402FacilitatorRequest: {
            /** @enum {integer} */
            x402Version?: 1 | 2;
            /** @description the client's x402 v2 PaymentPayload {x402Version: 2, resource, accepted, payload} */
            paymentPayload: Record<string, unknown>;
            paymentRequirements: components["schemas"]["X402PaymentRequirements"];
        };
        X402Supported: {
            kinds: {
                x402Version: number;
                scheme: string;
                network: string;
                extra?: Record<string, unknown>;
            }[];
            extensions: string[];
            /** @description per network, the gas wallet that submits (Ethereum) or pays the fee of (Solana) the settlement */
            signers: {
                [key: string]: string[];
            };
        };
        X402DiscoveryQuery: {
            /** @description http (the only type listed) */
            type?: string;
            payTo?: string;
            /** @description CAIP-2 */
            network?: string;
            scheme?: string;
            extensions?: string;
            /** @description 1 to 100, default 20 */
            limit?: string;
            offset?: string;
        };
        /** @description @x402/extensions bazaar DiscoveryResourcesResponse. */
        X402DiscoveryResources: {
            /** @enum {integer} */
            x402Version: 2;
            items: {
                /** @description absolute URL of the paid resource: <PUBLIC_URL>/v1/catalog/prices/{price_id}/x402 */
                resource: string;
                /** @enum {string} */
                type: "http";
                x402Version: number;
                accepts: components["schemas"]["X402PaymentRequirements"][];
                lastUpdated: string;
                description?: string;
                mimeType?: string;
                serviceName?: string;
            }[];
            pagination: {
                limit: number;
                offset: number;
                total: number;
            };
        };
        /** @description A catalog price bought with x402. */
        X402Purchase: {
            /** @enum {string} */
            status: "paid";
            price_id: string;
            plan_id: string;
            product_id: string;
            store_id: string;
            merchant_id: string;
            /** @description the plan's entitlement */
            entitlement?: Record<string, unknown> | null;
            challenge_id: string;
            amount_subunits: string;
            payer: string;
            transaction: string;
            network: string;
            settled_at: string | null;
        };
        /** @description The body of x402.settled: an x402 payment settled on chain into one of the merchant's wallets (a redeemed challenge, a catalog price bought with x402, or a payment settled through the facilitator), in the same write that credits the wallet. POSTed like session events (same headers, X-Service-Signature scheme, retries and delivery log) and listed by the events API. */
        X402SettledWebhookEvent: {
            /** @enum {string} */
            event_type: "x402.settled";
            /** @description xch_… (a challenge) or xfs_… (a facilitator settlement) */
            challenge_id: string;
            /** @enum {string} */
            status: "settled";
            /** @description token units */
            amount: number;
            amount_subunits: string;
            currency: string;
            chain: string;
            network: string;
            wallet_id: string;
            resource: string;
            payer: string;
            tx_hash: string | null;
            /** @description unix seconds */
            timestamp: string;
        };
        /** @description A store of a merchant. Stores do not version: PATCH changes them in place, and an archived store can be published again. */
        CatalogStore: {
            id: string;
            merchant_id: string;
            name: string;
            slug: string | null;
            description: string | null;
            /** @enum {string} */
            status: "draft" | "published" | "archived";
            created_at: components["schemas"]["Timestamp"];
            updated_at: components["schemas"]["Timestamp"];
        };
        /** @description A version of a product. PATCH of a draft changes it in place; PATCH of a published, archived or checkout-referenced product creates a new draft version (new id, version + 1, supersedes_product_id set) and leaves this one unchanged. Versions of a product share its plans. */
        CatalogProduct: {
            id: string;
            store_id: string;
            merchant_id: string;
            /** @description the merchant's sandbox flag */
            sandbox: boolean;
            name: string;
            slug: string | null;
            description: string | null;
            /** @enum {string} */
            fulfillment_type: "one_time" | "subscription" | "metered" | "service";
            /** @enum {string} */
            status: "draft" | "published" | "archived";
            version: number;
            /** @description the version this one was made from by PATCH */
            supersedes_product_id: string | null;
            /** @description a checkout intent references this version: it is immutable */
            checkout_referenced: boolean;
            created_at: components["schemas"]["Timestamp"];
            updated_at: components["schemas"]["Timestamp"];
        };
        /** @description A version of a plan of a product (versioned like products). product_id is the product version it was created under; the plan belongs to every version of that product. */
        CatalogPlan: {
            id: string;
            product_id: string;
            name: string;
            slug: string | null;
            entitlement: Record<string, unknown> | null;
            /** @enum {string} */
            status: "draft" | "published" | "archived";
            version: number;
            supersedes_plan_id: string | null;
            checkout_referenced: boolean;
            created_at: components["schemas"]["Timestamp"];
            updated_at: components["schemas"]["Timestamp"];
        };
        /** @description A version of a price of a plan (versioned like products). plan_id is the plan version it was created under; the price belongs to every version of that plan. */
        CatalogPrice: {
            id: string;
            plan_id: string;
            amount_subunits: string;
            currency_or_token: string;
            /** @description the token's decimals on the price's rails, or the fiat currency's minor-unit digits: amount = amount_subunits / 10^decimals */
            decimals: number;
            /** @description null: every enabled rail of the token (of any token for a price in fiat) */
            allowed_payment_methods: string[] | null;
            /** @enum {string} */
            status: "draft" | "published" | "archived";
            version: number;
            supersedes_price_id: string | null;
            checkout_referenced: boolean;
            created_at: components["schemas"]["Timestamp"];
            updated_at: components["schemas"]["Timestamp"];
        };
        CatalogStoreList: {
            data: components["schemas"]["CatalogStore"][];
            has_more: boolean;
            /** @description pass as cursor for the next page; null on the last page */
            next_cursor: string | null;
        };
        CatalogProductList: {
            data: components["schemas"]["CatalogProduct"][];
            has_more: boolean;
            /** @description pass as cursor for the next page; null on the last page */
            next_cursor: string | null;
        };
        CatalogPlanList: {
            data: components["schemas"]["CatalogPlan"][];
            has_more: boolean;
            /** @description pass as cursor for the next page; null on the last page */
            next_cursor: string | null;
        };
        CatalogPriceList: {
            data: components["schemas"]["CatalogPrice"][];
            has_more: boolean;
            /** @description pass as cursor for the next page; null on the last page */
            next_cursor: string | null;
        };
        CatalogDeleted: {
            id: string;
            /** @enum {string} */
            object: "store" | "product" | "plan" | "price";
            /** @constant */
            deleted: true;
        };
        /** @description Create a store (status draft). */
        CatalogStoreCreate: {
            /** @description display name */
            name: string;
            /** @description URL-friendly label; not required to be unique */
            slug?: string;
            description?: string;
        };
        /** @description Create a product in a store of yours that is not archived (status draft, version 1). */
        CatalogProductCreate: {
            store_id: string;
            /** @description display name */
            name: string;
            /** @description URL-friendly label; not required to be unique */
            slug?: string;
            description?: string;
            /** @enum {string} */
            fulfillment_type: "one_time" | "subscription" | "metered" | "service";
        };
        /** @description Create a plan of a product of yours that is not archived (status draft, version 1). */
        CatalogPlanCreate: {
            product_id: string;
            /** @description display name */
            name: string;
            /** @description URL-friendly label; not required to be unique */
            slug?: string;
            /** @description freeform entitlement (at most 4096 bytes of JSON), e.g. {"seats": 5} */
            entitlement?: Record<string, unknown>;
        };
        /** @description Create a price of a plan of yours that is not archived (status draft, version 1). */
        CatalogPriceCreate: {
            plan_id: string;
            /**
             * @description positive integer in the token's smallest unit (decimals from GET /v1/payment_methods), digits only without leading zeros, e.g. "2500000" for 2.5 USDC; at least the min_amount of every rail it may be paid on For a price in fiat: the currency's minor units (2 decimals for USD, EUR, GBP, CHF; 0 for JPY), at most 10^12 of the currency; the rails' min_amount is checked on the converted amount when the session is created.
             * @example 2500000
             */
            amount_subunits: string;
            /**
             * @description token symbol of an enabled rail, e.g. USDC, ETH, SOL. Or a fiat currency (USD, EUR, GBP, CHF, JPY): amount_subunits is then in the currency's minor unit (cents: "2500" for 25.00 USD), the price may be paid on any rail, and the payment session converts it at a fresh rate when it is created (price {amount, currency}; see FiatPrice).
             * @example USDC
             */
            currency_or_token: string;
            /**
             * @description <chain>:<network>:<token> entries, each a known rail (GET /v1/payment_methods lists the enabled ones) of currency_or_token; omitted means every enabled rail of the token For a price in fiat: known rails of any token; omitted means every enabled rail.
             * @example [
             *       "solana:testnet:USDC",
             *       "ethereum:testnet:USDC"
             *     ]
             */
            allowed_payment_methods?: string[];
        };
        /** @description Fields to change; null clears slug or description. Stores change in place in any status. */
        CatalogStoreUpdate: {
            /** @description display name */
            name?: string;
            /** @description URL-friendly label; not required to be unique */
            slug?: string | null;
            description?: string | null;
        };
        /** @description Fields to change; null clears slug or description. The store cannot change. */
        CatalogProductUpdate: {
            /** @description display name */
            name?: string;
            /** @description URL-friendly label; not required to be unique */
            slug?: string | null;
            description?: string | null;
            /** @enum {string} */
            fulfillment_type?: "one_time" | "subscription" | "metered" | "service";
        };
        /** @description Fields to change; null clears slug or entitlement. The product cannot change. */
        CatalogPlanUpdate: {
            /** @description display name */
            name?: string;
            /** @description URL-friendly label; not required to be unique */
            slug?: string | null;
            /** @description freeform entitlement (at most 4096 bytes of JSON), e.g. {"seats": 5} */
            entitlement?: Record<string, unknown> | null;
        };
        /** @description Fields to change; null clears allowed_payment_methods (every enabled rail of the token). The result is validated as a whole. The plan cannot change. */
        CatalogPriceUpdate: {
            /**
             * @description positive integer in the token's smallest unit (decimals from GET /v1/payment_methods), digits only without leading zeros, e.g. "2500000" for 2.5 USDC; at least the min_amount of every rail it may be paid on For a price in fiat: the currency's minor units (2 decimals for USD, EUR, GBP, CHF; 0 for JPY), at most 10^12 of the currency; the rails' min_amount is checked on the converted amount when the session is created.
             * @example 2500000
             */
            amount_subunits?: string;
            /**
             * @description token symbol of an enabled rail, e.g. USDC, ETH, SOL. Or a fiat currency (USD, EUR, GBP, CHF, JPY): amount_subunits is then in the currency's minor unit (cents: "2500" for 25.00 USD), the price may be paid on any rail, and the payment session converts it at a fresh rate when it is created (price {amount, currency}; see FiatPrice).
             * @example USDC
             */
            currency_or_token?: string;
            /**
             * @description <chain>:<network>:<token> entries, each a known rail (GET /v1/payment_methods lists the enabled ones) of currency_or_token; omitted means every enabled rail of the token For a price in fiat: known rails of any token; omitted means every enabled rail.
             * @example [
             *       "solana:testnet:USDC",
             *       "ethereum:testnet:USDC"
             *     ]
             */
            allowed_payment_methods?: string[] | null;
        };
        /** @description no body, or an empty object */
        CatalogEmptyBody: Record<string, unknown>;
        CatalogStoreListQuery: {
            /** @description next_cursor of the previous page */
            cursor?: string;
            /** @description page size, 1 to 100, default 20 */
            limit?: string;
            /** @enum {string} */
            status?: "draft" | "published" | "archived";
        };
        CatalogProductListQuery: {
            /** @description next_cursor of the previous page */
            cursor?: string;
            /** @description page size, 1 to 100, default 20 */
            limit?: string;
            /** @enum {string} */
            status?: "draft" | "published" | "archived";
            store_id?: string;
        };
        CatalogPlanListQuery: {
            /** @description next_cursor of the previous page */
            cursor?: string;
            /** @description page size, 1 to 100, default 20 */
            limit?: string;
            /** @enum {string} */
            status?: "draft" | "published" | "archived";
            product_id?: string;
        };
        CatalogPriceListQuery: {
            /** @description next_cursor of the previous page */
            cursor?: string;
            /** @description page size, 1 to 100, default 20 */
            limit?: string;
            /** @enum {string} */
            status?: "draft" | "published" | "archived";
            plan_id?: string;
        };
        CatalogDiscoveryQuery: {
            /** @description next_cursor of the previous page */
            cursor?: string;
            /** @description page size, 1 to 100, default 20 */
            limit?: string;
            merchant_id?: string;
            /** @enum {string} */
            sandbox?: "true" | "false";
            /** @description At least 3 characters, unless merchant_id narrows the search to one merchant (a shorter term cannot use the text index). */
            q?: string;
        };
        CatalogDiscoveredPrice: {
            id: string;
            /** @description the plan it is listed under */
            plan_id: string;
            amount_subunits: string;
            currency_or_token: string;
            decimals: number;
            allowed_payment_methods: string[] | null;
            /** @constant */
            status: "published";
            version?: number;
            supersedes_price_id?: string | null;
        };
        CatalogDiscoveredPlan: {
            id: string;
            /** @description the product it is listed under */
            product_id: string;
            name: string;
            slug?: string | null;
            entitlement?: Record<string, unknown> | null;
            /** @constant */
            status: "published";
            version?: number;
            supersedes_plan_id?: string | null;
            prices: components["schemas"]["CatalogDiscoveredPrice"][];
        };
        CatalogDiscoveredProduct: {
            id: string;
            store_id: string;
            merchant_id: string;
            sandbox: boolean;
            name: string;
            slug?: string | null;
            description?: string | null;
            /** @enum {string} */
            fulfillment_type: "one_time" | "subscription" | "metered" | "service";
            /** @constant */
            status: "published";
            version: number;
            supersedes_product_id?: string | null;
            store?: {
                id?: string;
                name?: string;
                slug?: string | null;
                description?: string | null;
            };
            plans: components["schemas"]["CatalogDiscoveredPlan"][];
        };
        CatalogDiscoveryList: {
            data: components["schemas"]["CatalogDiscoveredProduct"][];
            has_more: boolean;
            next_cursor: string | null;
        };
        /** @description A checkout snapshot of a price. Create a payment session for the merchant with metadata.checkout_reference_id set to checkout_reference_id, for exactly amount_subunits (amount_subunits / 10^decimals token units) on one of allowed_payment_methods, before expires_at. For a price in fiat (currency_or_token USD, EUR, …) create it with price {amount: amount_subunits / 10^decimals, currency: currency_or_token} instead of an amount: the session converts it at a fresh rate of the chosen rail's token and carries the quote. */
        CheckoutIntent: {
            checkout_reference_id: string;
            price_id: string;
            plan_id: string;
            product_id: string;
            store_id: string;
            merchant_id: string;
            amount_subunits: string;
            currency_or_token: string;
            decimals?: number;
            /** @description the price's methods ∩ enabled rails ∩ (testnet only for a sandbox merchant) ∩ the merchant's rail policy */
            allowed_payment_methods: string[];
            expires_at: components["schemas"]["Timestamp"];
        };
        CheckoutStatus: {
            session_id: string;
            /** @enum {string} */
            status: "pending" | "partial_paid" | "completed" | "expired";
            expected_amount: number;
            received_amount: number;
            /** @description received_amount exactly, in smallest units (the page compares it to notice a payment) */
            received_amount_subunits?: string;
            currency: string;
            chain: string;
            /** @enum {string} */
            network: "testnet" | "mainnet";
            address: string;
            qr_data: string;
            /** @description absent on a local development chain (no public explorer) */
            explorer_url?: string;
            expires_at: components["schemas"]["Timestamp"];
            completed_at?: components["schemas"]["Timestamp"];
            demo: boolean;
        };
        /** @description An event: the exact webhook body plus id and created_at. payment_session.* events carry every WebhookEvent field; payout.* events every PayoutWebhookEvent field and refund.* events every RefundWebhookEvent field. */
        Event: {
            /** @description evt_…, the X-Service-Event-Id of its deliveries */
            id: string;
            /** Format: date-time */
            created_at: string;
            /** @description payment_session.completed, payment_session.expired, payment_session.partial_paid, payout.completed, payout.failed, refund.completed, refund.failed, x402.settled */
            event_type: string;
            session_id?: string;
            status?: string;
            amount?: number;
            currency?: string;
            chain?: string;
            /** @enum {string} */
            network?: "testnet" | "mainnet";
            /** @description unix seconds carried as a string */
            timestamp?: string;
        } & {
            [key: string]: unknown;
        };
        EventList: {
            data: components["schemas"]["Event"][];
            has_more: boolean;
            next_cursor: string | null;
        };
        EventListQuery: {
            cursor?: string;
            limit?: string;
            type?: string;
            created_after?: string;
        };
        EventStreamQuery: {
            type?: string;
            last_event_id?: string;
        };
        EmailVerificationRequest: {
            /** Format: email */
            email: string;
            invitation_token?: string;
            /** @description the webhook_url you will register with, checked now (https on a public host; http and private hosts only where configuration allows): a 400 here costs no verification code */
            webhook_url?: string;
        };
        EmailVerificationResponse: {
            registration_intent_id: string;
            expires_at: components["schemas"]["Timestamp"];
        };
        EmailConfirmRequest: {
            registration_intent_id: string;
            code: string;
        };
        EmailConfirmResponse: {
            registration_intent_id: string;
            verified: boolean;
        };
        ProofOfWorkRequest: {
            registration_intent_id: string;
        };
        ProofOfWorkChallenge: {
            required: boolean;
            /** @description absent when required is false */
            challenge_id?: string;
            /** @constant */
            algorithm_version: "sha256-leading-zero-bits-v1";
            /** @description absent when required is false */
            challenge?: string;
            /** @description leading zero bits */
            difficulty: number;
            expires_at: components["schemas"]["Timestamp"];
        };
        RegisterMerchantRequest: {
            name: string;
            /** @default false */
            sandbox: boolean;
            /** @description https URL of a public host (http and private hosts only where configuration allows) */
            webhook_url?: string;
            idempotency_key?: string;
            registration_intent_id?: string;
            proof_of_work_challenge_id?: string;
            proof_of_work_nonce?: string;
        };
        Merchant: {
            id: string;
            name: string;
            email?: string;
            sandbox?: boolean;
            /** @description returned in full only once */
            api_key: string;
            webhook_url?: string;
            /** @description returned once */
            webhook_secret?: string;
            /** Format: int64 */
            rate_limit_per_minute?: number;
            /** @enum {string} */
            kyc_status?: "none" | "pending" | "verified" | "rejected";
            created_at: components["schemas"]["Timestamp"];
        };
        MerchantProfile: {
            id: string;
            name: string;
            email?: string;
            sandbox?: boolean;
            webhook_url?: string;
            /** Format: int64 */
            rate_limit_per_minute: number;
            /** @enum {string} */
            kyc_status?: "none" | "pending" | "verified" | "rejected";
            /** @description the first characters of the active key, to tell keys apart */
            api_key_prefix?: string;
            /** @description present during a rotation overlap */
            previous_api_key_expires_at?: components["schemas"]["Timestamp"];
            created_at: components["schemas"]["Timestamp"];
        };
        RotateCredentialsRequest: {
            /**
             * @default api_key
             * @enum {string}
             */
            credential: "api_key" | "webhook_secret";
        };
        RotateCredentialsResponse: {
            /**
             * @default api_key
             * @enum {string}
             */
            credential: "api_key" | "webhook_secret";
            api_key?: string;
            previous_api_key_expires_at?: components["schemas"]["Timestamp"];
            webhook_secret?: string;
            previous_webhook_secret_expires_at?: components["schemas"]["Timestamp"];
        };
        RevokeCredentialsRequest: {
            /**
             * @default api_key
             * @enum {string}
             */
            credential: "api_key" | "webhook_secret";
        };
        RevokeCredentialsResponse: {
            /**
             * @default api_key
             * @enum {string}
             */
            credential: "api_key" | "webhook_secret";
            /** @description false when there was no overlapping previous credential */
            revoked: boolean;
        };
        RailPolicyRequest: {
            /** @description the rails the merchant accepts, as <chain>:<network>:<token> (GET /v1/payment_methods); null removes the policy. Empty is refused: omit the policy with null instead. */
            allowed_rails: string[] | null;
        };
        RailPolicy: {
            /** @description the policy, in the rail list's order; null: no policy (every enabled rail) */
            allowed_rails: string[] | null;
            /** @description the rails the merchant can be paid on now: enabled (GET /v1/payment_methods), in its environment (sandbox: testnet only; live: mainnet only) and allowed by the policy */
            effective_rails: string[];
            /** @description when the policy was last set; null without a policy */
            updated_at: components["schemas"]["Timestamp"] | null;
        };
        WalletBalance: {
            /** @enum {string} */
            token: "USDC" | "ETH" | "SOL";
            /** @description token units (the nearest double of the exact amount; the exact value is the *_subunits digit string) */
            available: number;
            /** @description smallest units (wei, lamports, USDC micro-units) as a digit string */
            available_subunits: string;
            /** @description token units (the nearest double of the exact amount; the exact value is the *_subunits digit string) */
            pending: number;
            /** @description smallest units (wei, lamports, USDC micro-units) as a digit string */
            pending_subunits: string;
            /** @description the part of available that is simulated sandbox money (leaves only as a simulated payout or an internal transfer) */
            simulated_available_subunits?: string;
        };
        Wallet: {
            /** @description wal_… */
            id: string;
            merchant_id: string;
            /** @enum {string} */
            type: "merchant" | "agent";
            name: string | null;
            /** @enum {string} */
            chain: "ethereum" | "solana";
            /** @enum {string} */
            network: "testnet" | "mainnet";
            /** @description the wallet's own on-chain address (EIP-55 on Ethereum, base58 on Solana) */
            address: string;
            /** @description the merchant's settlement wallet of this chain and network */
            is_default?: boolean;
            /** @description one entry per enabled rail of the wallet's chain and network */
            balances: components["schemas"]["WalletBalance"][];
            /** Format: date-time */
            created_at: string;
        };
        WalletList: {
            data: components["schemas"]["Wallet"][];
            next_cursor: string | null;
            has_more: boolean;
        };
        WalletTransaction: {
            /** @description wtx_…, stable */
            id: string;
            wallet_id: string;
            /** @enum {string} */
            type: "settlement" | "settlement_reversal" | "payout" | "payout_reversal" | "transfer_in" | "transfer_out" | "agent_spend" | "fee" | "deposit" | "refund";
            /** @enum {string} */
            direction?: "in" | "out";
            /** @description token units (the nearest double of the exact amount; the exact value is the *_subunits digit string) */
            amount: number;
            /** @description smallest units (wei, lamports, USDC micro-units) as a digit string */
            amount_subunits: string;
            token: string;
            /**
             * @description pending: reserved or on its way; posted: final; voided: released (a failed payout, a reorged deposit before its sweep)
             * @enum {string}
             */
            status: "pending" | "posted" | "voided";
            session_id?: string;
            payout_id?: string;
            /** @description re_…: the refund of a payment session this transaction belongs to (type refund, or its fee) */
            refund_id?: string;
            spend_attempt_id?: string;
            tx_hash?: string;
            simulated?: boolean;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            posted_at?: string;
        };
        WalletTransactionList: {
            data: components["schemas"]["WalletTransaction"][];
            next_cursor: string | null;
            has_more: boolean;
        };
        CreateWalletRequest: {
            name?: string;
            /**
             * @default merchant
             * @enum {string}
             */
            type: "merchant" | "agent";
            /** @enum {string} */
            chain: "ethereum" | "solana";
            /** @enum {string} */
            network: "testnet" | "mainnet";
        };
        WalletListQuery: {
            cursor?: string;
            /** @description page size, 1 to 100, default 20 */
            limit?: string;
        };
        Payout: {
            /** @description po_… */
            id: string;
            merchant_id: string;
            wallet_id: string;
            chain: string;
            network: string;
            token: string;
            /** @description token units (the nearest double of the exact amount; the exact value is the *_subunits digit string) */
            amount: number;
            /** @description smallest units (wei, lamports, USDC micro-units) as a digit string */
            amount_subunits: string;
            /** @description normalized (EIP-55 on Ethereum) */
            destination: string;
            /** @description set when the destination is one of this service's wallets (settled inside the ledger) */
            destination_wallet_id?: string | null;
            /**
             * @description moves forward only: pending → processing → completed | failed
             * @enum {string}
             */
            status: "pending" | "processing" | "completed" | "failed";
            /** @enum {string} */
            execution?: "chain" | "ledger" | "simulated";
            simulated?: boolean;
            tx_hash: string | null;
            /** @description The network fee and any token-account rent this payout costs the merchant, in the chain's native coin's smallest units (wei, lamports; the merchant pays them: docs/money-out.md "Who pays network fees"). On an on-chain payout it is first the quote, reserved from the wallet's ETH or SOL together with the amount at acceptance; once the payout is final it is what was charged: exactly what the chain took, so at most the quote unless a stuck transaction had to be replaced at a higher gas price. "0" for payouts settled inside the ledger or simulated. */
            fee_subunits: string | null;
            /** @description Why an accepted on-chain payout is not on its way yet, when it waits: gas_wallet_empty, custody_move_pending (money moved into the wallet inside the ledger is still on its way to its address), or a missing RPC. Null otherwise. */
            waiting_reason?: string | null;
            failure_reason: string | null;
            metadata?: Record<string, unknown> | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
            /** Format: date-time */
            completed_at: string | null;
        };
        PayoutList: {
            data: components["schemas"]["Payout"][];
            next_cursor: string | null;
            has_more: boolean;
        };
        CreatePayoutRequest: {
            wallet_id: string;
            /** @description token units; send this or amount_subunits */
            amount?: number;
            /** @description smallest units as a digit string; send this or amount */
            amount_subunits?: string;
            token: string;
            destination: string;
            /** @description up to 4KB as JSON */
            metadata?: Record<string, unknown>;
        };
        PayoutListQuery: {
            cursor?: string;
            /** @description page size, 1 to 100, default 20 */
            limit?: string;
            wallet_id?: string;
        };
        /** @description The body of payout.completed and payout.failed, POSTed like session events (same headers, X-Service-Signature scheme, retries and delivery log). */
        PayoutWebhookEvent: {
            /** @enum {string} */
            event_type: "payout.completed" | "payout.failed";
            payout_id: string;
            /** @enum {string} */
            status: "completed" | "failed";
            /** @description the payout amount in token units */
            amount: number;
            currency: string;
            chain: string;
            network: string;
            /** @description unix seconds */
            timestamp: string;
            tx_hash: string | null;
        };
        SessionDiagnostics: {
            session_id: string;
            /** @description The session's status now */
            status: string;
            /** Format: date-time */
            checked_at: string;
            findings: components["schemas"]["DiagnosticFinding"][];
        };
        DiagnosticFinding: {
            /**
             * @description Stable; new codes may be added
             * @enum {string}
             */
            code: "stuck_unconfirmed" | "confirmation_lag" | "listener_lag" | "underpaid" | "overpaid" | "wrong_token" | "wrong_network" | "paid_after_expiry" | "expired_unpaid" | "webhook_failing";
            /** @enum {string} */
            severity: "info" | "warning" | "action";
            /** @description What is going on, in plain language */
            explanation: string;
            /** @description What to do about it */
            next_step: string;
            /** @description Numbers and public chain references of the finding: tx_hash, amounts as decimal strings of token units with the token (expected, received, missing, excess), confirmations and required_confirmations, minutes_waiting, blocks_behind, failed_attempts, last_http_status, … */
            details: {
                [key: string]: string | number | boolean | null;
            };
        };
        AuditEventsQuery: {
            limit?: string;
            cursor?: string;
            type?: string;
        };
        AuditEvent: {
            /** @description aud_… */
            id: string;
            type: string;
            /** Format: date-time */
            created_at: string;
            /** @description Position in the merchant's hash chain; null for a moment after the write, until the event is sealed */
            seq: number | null;
            /** @description What the event records: ids (session_id, event_id, payout_id), outcomes, statuses, amounts as digit strings */
            details: {
                [key: string]: unknown;
            };
        };
        AuditEventPage: {
            data: components["schemas"]["AuditEvent"][];
            has_more: boolean;
            next_cursor: string | null;
        };
        RatesQuery: {
            /** @description token symbol of an enabled rail (case-insensitive); default: every enabled token */
            base?: string;
            /** @description fiat currency code (case-insensitive); default USD */
            quote?: string;
        };
        SpotRate: {
            /** @example USDC */
            base: string;
            /** @example USD */
            quote: string;
            /**
             * @description 1 base = rate quote, an exact decimal string (never a float)
             * @example 0.99991
             */
            rate: string;
            /** @enum {string} */
            source: "chainlink" | "http" | "static";
            /** @description when the source observed the value (Chainlink: the round's updatedAt; HTTP: last_updated_at; static: the time of the answer) */
            as_of: components["schemas"]["Timestamp"];
            /** @description as_of is older than RATES_MAX_AGE */
            stale: boolean;
        };
        /** @description The token's rate against USD recorded when the session completed, from the service's shared rate cache (no network call at completion). Absent when no rate was known then, and while the session is not completed. */
        RecordedRate: components["schemas"]["SpotRate"];
        RatesList: {
            data: components["schemas"]["SpotRate"][];
            /** @description pairs of the default list that have no rate now (present only then) */
            unavailable?: {
                base: string;
                quote: string;
                message: string;
            }[];
        };
        Faucet: {
            chain: string;
            /** @enum {string} */
            network: "testnet";
            token: string;
            name: string;
            /** @description the faucet's page, or for the local drip the endpoint to POST to */
            url: string;
            /** @description what one request gives (token units and symbol); null when the faucet's operator sets it */
            amount: string | null;
            /** @description how often one may ask; null when the faucet's operator sets it */
            interval: string | null;
            notes: string;
            /** @description true: this service's own drip on a local development chain */
            local: boolean;
        };
        FaucetList: {
            data: components["schemas"]["Faucet"][];
        };
        FaucetDripRequest: {
            /** @description receiving address on that chain */
            address: string;
            /** @enum {string} */
            chain: "ethereum" | "solana";
            /** @description ETH, SOL or USDC (of the chain's testnet rail) */
            token: string;
        };
        FaucetDrip: {
            /** @example drp_01j… */
            id: string;
            chain: string;
            /** @enum {string} */
            network: "testnet";
            token: string;
            address: string;
            /** @description the development gas wallet */
            from_address: string;
            /** @description token units, exact */
            amount: string;
            amount_subunits: string;
            tx_hash: string;
            /**
             * @description the transaction's state when the answer was sent (the request waits up to 10 s for it to be final)
             * @enum {string}
             */
            status: "sent" | "confirmed" | "failed";
            failure_reason?: string;
        };
        /** @description Money sent back to whoever paid a payment session, from the merchant's settlement wallet of its chain and network. */
        Refund: {
            /** @description re_… */
            id: string;
            session_id: string;
            merchant_id: string;
            /** @description the merchant's settlement wallet of the session's chain and network, which pays the refund */
            wallet_id?: string;
            chain: string;
            /** @enum {string} */
            network: "testnet" | "mainnet";
            token: string;
            /** @description token units (the nearest double of the exact amount; the exact value is amount_subunits) */
            amount: number;
            /** @description smallest units (wei, lamports, USDC micro-units) as a digit string */
            amount_subunits: string;
            /** @description Where the refund goes (EIP-55 on Ethereum). The address that paid the session when the request named none (destination_source sender). Null only for a simulated refund of simulated sandbox money sent without one. */
            destination: string | null;
            /**
             * @description sender: the address that paid the session; merchant: the request named it
             * @enum {string}
             */
            destination_source?: "sender" | "merchant";
            reason: string | null;
            /**
             * @description moves forward only: pending → processing (its transaction signed and persisted, then broadcast) → completed | failed; a simulated refund is completed at once
             * @enum {string}
             */
            status: "pending" | "processing" | "completed" | "failed";
            /**
             * @description chain: sent on chain from the settlement wallet; simulated: sandbox money, nothing broadcast
             * @enum {string}
             */
            execution?: "chain" | "simulated";
            simulated: boolean;
            tx_hash: string | null;
            /** @description The network fee and any token-account rent the refund costs the merchant, in the chain's native coin's smallest units (as for payouts: docs/money-out.md "Who pays network fees"): first the quote, reserved with the amount at acceptance; once final, what the chain took. "0" when simulated. */
            fee_subunits: string | null;
            /** @description Why an accepted refund is not on its way yet (a missing RPC, custody_move_pending); null otherwise. */
            waiting_reason?: string | null;
            failure_reason: string | null;
            metadata?: Record<string, unknown> | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
            /** Format: date-time */
            completed_at: string | null;
        };
        RefundList: {
            data: components["schemas"]["Refund"][];
            next_cursor: string | null;
            has_more: boolean;
        };
        CreateRefundRequest: {
            /** @description smallest units as a digit string; default: an overpaid session's excess, otherwise everything left to refund */
            amount_subunits?: string;
            /** @description the address to refund; default: the address that paid the session */
            destination?: string;
            /** @description free text kept on the refund (e.g. requested_by_customer, duplicate) */
            reason?: string;
            /** @description up to 4KB as JSON */
            metadata?: Record<string, unknown>;
        };
        RefundListQuery: {
            cursor?: string;
            /** @description page size, 1 to 100, default 20 */
            limit?: string;
        };
        /** @description The body of refund.completed and refund.failed, POSTed like session events (same headers, X-Service-Signature scheme, retries, delivery log and events API). */
        RefundWebhookEvent: {
            /** @enum {string} */
            event_type: "refund.completed" | "refund.failed";
            refund_id: string;
            session_id: string;
            /** @enum {string} */
            status: "completed" | "failed";
            /** @description the refund amount in token units */
            amount: number;
            amount_subunits: string;
            currency: string;
            chain: string;
            network: string;
            destination: string | null;
            /** @description unix seconds */
            timestamp: string;
            tx_hash: string | null;
            simulated: boolean;
            failure_reason: string | null;
        };
        /** @description The one rail the buyer selected. The rail is matched on the whole (chain, network, token) triple against GET /v1/payment_methods. */
        SessionPaymentMethod: {
            /**
             * @description 0 = on-chain crypto transfer; 1 = fiat (no fiat rail is enabled today: refused with 400)
             * @enum {integer}
             */
            methodID: 0 | 1;
            /**
             * @example ethereum
             * @example solana
             */
            chain: string;
            /**
             * @example USDC
             * @example ETH
             * @example SOL
             */
            token: string;
            /** @enum {string} */
            network: "testnet" | "mainnet";
        };
        /** @description paymentMethod (or its legacy name payment_method) is required as well, and exactly one of an amount in tokens (amount or amount_subunits) or a price in fiat (price). */
        CreatePaymentSessionRequest: {
            /** @description token units, e.g. 12.5 (USDC); at most the token's decimals; at least the rail's min_amount; at most 10^15. A number whose digits a JSON double cannot carry exactly is refused: send amount_subunits instead. One of amount and amount_subunits is required (both must agree). */
            amount?: number;
            /**
             * @description a whole number followed by s, m, h or d; between 10s and 7d
             * @example 15m
             * @example 45m
             * @example 1h
             */
            expires_in: string;
            paymentMethod?: components["schemas"]["SessionPaymentMethod"];
            /**
             * @deprecated
             * @description legacy name of paymentMethod
             */
            payment_method?: components["schemas"]["SessionPaymentMethod"];
            /** @description caller-supplied, at most 4KB as JSON; checkout_reference_id (string) ties the session to a catalog checkout; for a catalog price in fiat the session must be created with the same price {amount, currency} */
            metadata?: Record<string, unknown>;
            /** @description the amount exactly, in the token's smallest units (wei, lamports, USDC 6-decimal units); the way to send amounts with more digits than a JSON number carries (an 18-decimal ETH price, say) */
            amount_subunits?: string;
            price?: components["schemas"]["FiatPrice"];
            /**
             * @description optional: where the hosted checkout page links the buyer back to the shop once the session is paid or expired ("Back to the shop"). An absolute https URL; plain http only when the service runs with WEBHOOK_ALLOW_PRIVATE (local development); no credentials. Stored and returned on the session.
             * @example https://shop.example/orders/1001
             */
            return_url?: string;
        };
        CreateDemoSessionRequest: {
            /**
             * @example ethereum
             * @example solana
             */
            chain?: string;
            /** @enum {string} */
            network?: "testnet";
            /**
             * @example USDC
             * @example ETH
             * @example SOL
             */
            token?: string;
            amount?: number;
            /**
             * @description 10s to 1h; default 15m
             * @example 15m
             */
            expires_in?: string;
        };
        PaymentSessionDeposit: {
            /** @description null for a simulated deposit */
            tx_hash: string | null;
            /** @description log or instruction index within the transaction */
            index?: number;
            amount: number;
            amount_subunits: string;
            token: string;
            confirmations: number;
            detected_at?: components["schemas"]["Timestamp"];
            /** @description arrived after the session expired: recorded and counted in received_amount, the session stays expired */
            late: boolean;
            /** @description false for a transfer in another token than the session's (recorded, not summed) */
            counted?: boolean;
            /** @description taken back by a chain reorganisation; no longer counted */
            reverted: boolean;
            simulated: boolean;
        };
        /** @description A payment session: one expected amount on one rail, a fresh deposit address and an expiry. status is pending, partial_paid, completed or expired (see the README section Payment sessions). Amounts are token units as JSON numbers; the exact smallest-unit integers are in expected_amount_subunits and received_amount_subunits. */
        PaymentSession: {
            /** @example ps_01jd5k8w3h4q2x9y7z6v5t4s3r */
            session_id: string;
            /** @description demo for demo sessions */
            merchant_id: string;
            /** @description the amount to collect before fulfillment */
            expected_amount: number;
            /** @description sum of the counted deposits; may exceed expected_amount (overpayment is kept visible) */
            received_amount: number;
            expected_amount_subunits?: string;
            received_amount_subunits?: string;
            /** @description what the session's refunds took, in token units: every refund not failed (pending ones count, as Stripe's amount_refunded); 0 when none */
            refunded_amount?: number;
            /** @description refunded_amount exactly, in smallest units */
            refunded_amount_subunits?: string;
            /** @description a fresh deposit address for this session only (Ethereum: EIP-55; Solana: base58; SPL tokens arrive in its associated token account) */
            address: string;
            /** @enum {string} */
            status: "pending" | "partial_paid" | "completed" | "expired";
            metadata: Record<string, unknown>;
            expires_at: components["schemas"]["Timestamp"];
            completed_at?: components["schemas"]["Timestamp"];
            expired_at?: components["schemas"]["Timestamp"];
            created_at: components["schemas"]["Timestamp"];
            updated_at: components["schemas"]["Timestamp"];
            demo: boolean;
            /** @description token symbol */
            currency?: string;
            /** @description the hosted checkout page: PUBLIC_URL/checkout/<session_id> */
            payment_url?: string;
            /** @description Ethereum: EIP-681 URI (ethereum:<usdc contract>@<chain id>/transfer?address=<address>&uint256=<subunits> for USDC, ethereum:<address>@<chain id>?value=<wei> for ETH); Solana: Solana Pay URI (solana:<address>?amount=<units>[&spl-token=<USDC mint>]) */
            qr_data?: string;
            /** @description public block explorer page of the address, or of the paying transaction once one is credited; absent on a local development chain (a loopback RPC URL), which no public explorer knows */
            explorer_url?: string;
            paymentMethod: {
                /** @enum {integer} */
                methodID: 0 | 1;
                chain: string;
                token: string;
                /** @enum {string} */
                network: "testnet" | "mainnet";
            };
            deposits?: components["schemas"]["PaymentSessionDeposit"][];
            quote?: components["schemas"]["SessionQuote"];
            completion_rate?: components["schemas"]["RecordedRate"];
            /** @description the return_url the session was created with (absent when none) */
            return_url?: string;
        };
        PaymentSessionList: {
            data: components["schemas"]["PaymentSession"][];
            has_more: boolean;
            next_cursor: string | null;
        };
        PaymentSessionListQuery: {
            cursor?: string;
            limit?: string;
            /** @enum {string} */
            status?: "pending" | "partial_paid" | "completed" | "expired";
        };
        /** @description A price in fiat instead of an amount in tokens. The service reads a fresh spot rate of the rail's token in this currency (GET /v1/rates; its sources and RATES_MAX_AGE), converts the price to the token's smallest units rounded UP (exact decimal arithmetic: never less than the price at that rate, at most one smallest unit more), and locks that amount for the session's life; the session's quote says how. Underpayment and overpayment are judged in tokens against that amount. No fresh rate: 503 (retryable true when a source is configured but has no fresh value; false when none is configured for the pair). The converted amount must reach the rail's min_amount (400). */
        FiatPrice: {
            /**
             * @description a positive decimal string with at most the currency's minor-unit digits (2 for USD, EUR, GBP, CHF; 0 for JPY); at most 10^12
             * @example 25.00
             */
            amount: string;
            /**
             * @description ISO 4217 code
             * @enum {string}
             */
            currency: "USD" | "EUR" | "GBP" | "CHF" | "JPY";
        };
        /** @description How a session priced in fiat got its expected amount: expected_amount_subunits = ceil(amount × 10^decimals / rate), computed once at creation and locked. */
        SessionQuote: {
            /**
             * @description the price's currency (ISO 4217)
             * @example USD
             */
            currency: string;
            /**
             * @description the price, a decimal string with the currency's minor-unit digits
             * @example 25.00
             */
            amount: string;
            /**
             * @description 1 token = rate units of currency, a decimal string, exactly as the source gave it
             * @example 2500
             */
            rate: string;
            /** @description the rate source: chainlink, http or static (see GET /v1/rates) */
            source: string;
            /** @description when the source observed the rate */
            rate_as_of: components["schemas"]["Timestamp"];
            /** @description when the amount was computed and locked */
            quoted_at: components["schemas"]["Timestamp"];
        };
        /** @description The body POSTed to the merchant's webhook_url. Each webhook is an HTTP POST of a WebhookEvent (Content-Type application/json) to the merchant's webhook_url with the headers X-Service-Event (the event_type), X-Service-Event-Id (stable per event, the same on every attempt: de-duplicate on it) and X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by webhook_secret> (Stripe's scheme; during a webhook-secret rotation overlap one v1 entry per live secret). Verify against the raw body bytes, accept any matching v1, and refuse a t more than 300 s away from now. Only 2xx is success; redirects are not followed; each attempt times out after 10 s. Retries: 30 s, 1 min, 2 min, 5 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h, 24 h (±20 % jitter) within 72 h of the event, then the event is failed. */
        WebhookEvent: {
            /** @enum {string} */
            event_type: "payment_session.completed" | "payment_session.expired" | "payment_session.partial_paid";
            session_id: string;
            status: string;
            /** @description the session's expected amount in token units, the same in every event of a session; the received amount is on the session */
            amount: number;
            /** @description token symbol */
            currency: string;
            chain: string;
            /** @enum {string} */
            network: "testnet" | "mainnet";
            /** @description unix seconds carried as a string */
            timestamp: string;
        };
        /** @description Optional body of the retry endpoint; without event_id every event of the session is redelivered. */
        WebhookRetryRequest: {
            /** @description redeliver only this event (evt_…) of the session */
            event_id?: string;
        };
        WebhookDeliveryAttempt: {
            at: components["schemas"]["Timestamp"];
            /** @description HTTP status of the answer; null when none arrived */
            status: number | null;
            latency_ms: number;
            /**
             * @description error class; null on success. blocked_address: the host is or resolves to a private, loopback, link-local or metadata address; blocked_url: the scheme is not allowed; redirect: a 3xx (never followed)
             * @enum {string|null}
             */
            error: null | "invalid_url" | "blocked_url" | "blocked_address" | "dns_error" | "timeout" | "connection_refused" | "connection_reset" | "tls_error" | "network_error" | "redirect" | "http_error";
            /** @description made by the retry endpoint */
            manual?: boolean;
        };
        WebhookDeliveryEvent: {
            /** @description the X-Service-Event-Id of the requests */
            event_id: string;
            event_type: string;
            /**
             * @description pending: being retried; delivered: a 2xx arrived; failed: the 72 h schedule ended; skipped: the merchant has no webhook_url
             * @enum {string}
             */
            status: "pending" | "delivered" | "failed" | "skipped";
            body: components["schemas"]["WebhookEvent"];
            created_at: components["schemas"]["Timestamp"];
            /** Format: date-time */
            delivered_at: string | null;
            /** Format: date-time */
            next_attempt_at: string | null;
            attempts: components["schemas"]["WebhookDeliveryAttempt"][];
        };
        WebhookDeliveryLog: {
            session_id: string;
            events: components["schemas"]["WebhookDeliveryEvent"][];
        };
    };
    responses: {
        /** @description Bad request, check the body (code 3) */
        BadRequest: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Missing or invalid credentials (code 7) */
        Unauthorized: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Insufficient credentials (code 7) */
        Forbidden: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Not found (code 2) */
        NotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Conflict (code 5) */
        Conflict: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Rate limited (code 4). No X-RateLimit-* headers are sent. */
        RateLimited: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Internal error (code 1): nothing about the cause is sent; quote request_id to the operator. retryable is true. */
        InternalError: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description The id of this request: the caller's X-Request-Id when it sent a sane one (1 to 128 letters, digits and . _ : @ + = / -, starting with a letter or digit), else a new req_… id. An error's request_id is the same value, and so is the id in the server's log line for the request. */
        "X-Request-Id": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getCheckoutPage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML page */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description Unknown checkout: an HTML page for a browser (Accept: text/html), the error envelope (code 2) for any other client */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                    "application/json": components["schemas"]["Error"];
                };
            };
            500: components["responses"]["InternalError"];
        };
    };
    getCheckoutReceipt: {
        parameters: {
            query?: never;
            header?: {
                /** @description An ETag from an earlier answer: 304 without a body when the receipt is unchanged. */
                "If-None-Match"?: string;
            };
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The receipt */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description sha256 of the PDF bytes, quoted */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/pdf": string;
                };
            };
            /** @description Not modified */
            304: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description sha256 of the PDF bytes, quoted */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getCheckoutStatus: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Status */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CheckoutStatus"];
                };
            };
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
        };
    };
    getOpenapi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.1 description */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, unknown>;
                };
            };
            401: components["responses"]["Unauthorized"];
            500: components["responses"]["InternalError"];
        };
    };
    getAgentSpendPolicy: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description an agent wallet (a wallet of type agent) of the calling merchant */
                agent_wallet_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The current policy */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentSpendPolicy"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    putAgentSpendPolicy: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description an agent wallet (a wallet of type agent) of the calling merchant */
                agent_wallet_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AgentSpendPolicyRequest"];
            };
        };
        responses: {
            /** @description The new policy version */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentSpendPolicy"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    listAgentSpendAttempts: {
        parameters: {
            query?: {
                limit?: number;
                cursor?: string;
                status?: "pending" | "approval_required" | "denied";
            };
            header?: never;
            path: {
                /** @description an agent wallet (a wallet of type agent) of the calling merchant */
                agent_wallet_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentSpendAttemptList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    createAgentSpendAttempt: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description an agent wallet (a wallet of type agent) of the calling merchant */
                agent_wallet_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AgentSpendAttemptRequest"];
            };
        };
        responses: {
            /** @description An attempt with this reference already exists */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentSpendAttempt"];
                };
            };
            /** @description Recorded (any status) */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentSpendAttempt"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getAgentSpendAttempt: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description an agent wallet (a wallet of type agent) of the calling merchant */
                agent_wallet_id: string;
                attempt_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The attempt */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentSpendAttempt"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    approveAgentSpendAttempt: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description an agent wallet (a wallet of type agent) of the calling merchant */
                agent_wallet_id: string;
                attempt_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The decided attempt */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentSpendAttempt"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    denyAgentSpendAttempt: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description an agent wallet (a wallet of type agent) of the calling merchant */
                agent_wallet_id: string;
                attempt_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The denied attempt */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentSpendAttempt"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    evaluateAgentSpendAttempt: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description an agent wallet (a wallet of type agent) of the calling merchant */
                agent_wallet_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AgentSpendAttemptRequest"];
            };
        };
        responses: {
            /** @description The decision */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentSpendEvaluation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    listAuditEvents: {
        parameters: {
            query?: {
                /** @description 1 to 100, default 20 */
                limit?: string;
                /** @description next_cursor of the previous page */
                cursor?: string;
                /** @description only events of this type */
                type?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of audit events */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditEventPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    createCheckoutIntent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description price id */
                price_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CatalogEmptyBody"];
            };
        };
        responses: {
            /** @description The checkout intent */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CheckoutIntent"];
                };
            };
            400: components["responses"]["BadRequest"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    buyPriceWithX402: {
        parameters: {
            query?: never;
            header?: {
                "PAYMENT-SIGNATURE"?: string;
                "X-Service-Payment"?: string;
                "X-PAYMENT"?: string;
            };
            path: {
                price_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Paid: the purchase */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description base64 JSON of an X402SettleResponse */
                    "PAYMENT-RESPONSE"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["X402Purchase"];
                };
            };
            /** @description Paid, settlement pending */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        status?: string;
                        challenge_id?: string;
                        retry?: string;
                    };
                };
            };
            /** @description Payment required (or the proof does not pay: error) */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description base64 JSON of an X402PaymentRequired */
                    "PAYMENT-REQUIRED"?: string;
                    /** @description base64 JSON of an X402Challenge */
                    "X-PAYMENT-REQUIRED"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        x402Version?: number;
                        error?: string;
                        accepts?: components["schemas"]["X402Challenge"][];
                        chain?: string;
                        fee_payer?: string;
                    };
                };
            };
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    discoverProducts: {
        parameters: {
            query?: {
                merchant_id?: string;
                sandbox?: boolean;
                /** @description case-insensitive text search over name and description; at least 3 characters, unless merchant_id narrows the search to one merchant (a shorter term cannot use the text index) */
                q?: string;
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogDiscoveryList"];
                };
            };
            400: components["responses"]["BadRequest"];
            500: components["responses"]["InternalError"];
        };
    };
    discoverProduct: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description product id */
                product_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogDiscoveredProduct"];
                };
            };
            404: components["responses"]["NotFound"];
            500: components["responses"]["InternalError"];
        };
    };
    listEvents: {
        parameters: {
            query?: {
                /** @description next_cursor of the previous page */
                cursor?: string;
                limit?: number;
                /** @description Only events of this type; several types may be separated by commas (payment_session.completed,payment_session.expired). */
                type?: string;
                /** @description Only events created strictly after this time. */
                created_after?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getEvent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description evt_… */
                event_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Event"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    streamEvents: {
        parameters: {
            query?: {
                /** @description Only events of this type; several types may be separated by commas (payment_session.completed,payment_session.expired). */
                type?: string;
                /** @description Resume after this stream position (or evt_ id); the Last-Event-ID header wins when both are sent. */
                last_event_id?: string;
            };
            header?: {
                /** @description The id of the last message received (EventSource sends it when it reconnects). */
                "Last-Event-ID"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The event stream */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getMe: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MerchantProfile"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    revokeCredentials: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["RevokeCredentialsRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RevokeCredentialsResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    rotateCredentials: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["RotateCredentialsRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RotateCredentialsResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getRailPolicy: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RailPolicy"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    putRailPolicy: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RailPolicyRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RailPolicy"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    registerMerchant: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RegisterMerchantRequest"];
            };
        };
        responses: {
            /** @description Merchant created */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Merchant"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            500: components["responses"]["InternalError"];
        };
    };
    startEmailVerification: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EmailVerificationRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EmailVerificationResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    confirmEmail: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EmailConfirmRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EmailConfirmResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    issueProofOfWork: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ProofOfWorkRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProofOfWorkChallenge"];
                };
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    listPaymentMethods: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Enabled rails */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Rail"][];
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    listPaymentSessions: {
        parameters: {
            query?: {
                /** @description next_cursor of the previous page */
                cursor?: string;
                limit?: number;
                status?: "pending" | "partial_paid" | "completed" | "expired";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaymentSessionList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    createPaymentSession: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry: the same key with the same body within 24 hours answers 201 with the session the first request created (in its current state); the same key with another body is 409 (code 5). Scoped to the merchant. A refused request leaves the key unused. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreatePaymentSessionRequest"];
            };
        };
        responses: {
            /** @description Created; Location names the session */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaymentSession"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            /** @description A price in fiat with no fresh rate of the rail's token in its currency (code 1): the message names the pair and why; retryable says whether sending the same request later can succeed */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPaymentSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The session */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaymentSession"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getSessionDiagnostics: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The payment session (ps_…) */
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The findings */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionDiagnostics"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getPaymentSessionReceipt: {
        parameters: {
            query?: never;
            header?: {
                /** @description An ETag from an earlier answer: 304 without a body when the receipt is unchanged. */
                "If-None-Match"?: string;
            };
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The receipt */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description sha256 of the PDF bytes, quoted */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/pdf": string;
                };
            };
            /** @description Not modified (If-None-Match matched the ETag) */
            304: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description sha256 of the PDF bytes, quoted */
                    ETag?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    listRefunds: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of refunds */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RefundList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    createRefund: {
        parameters: {
            query?: never;
            header?: {
                /** @description 1 to 255 visible ASCII characters, scoped to the merchant. The same key with the same session and body within 24 hours returns the refund it created with 201 (as it is now); with another session or body 409 code 5 'idempotency key was already used with a different payload'. Concurrent requests with one key create exactly one refund and one ledger transfer. */
                "Idempotency-Key"?: string;
            };
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateRefundRequest"];
            };
        };
        responses: {
            /** @description Created (or the refund of a replayed Idempotency-Key) */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description path of the created resource */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Refund"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            /** @description The chain cannot be read now to quote the network fee or check the paying address (code 1); retryable says whether the same request can succeed later */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getRefund: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
                refund_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The refund */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Refund"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    simulatePaymentSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The completed session */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaymentSession"];
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    retrySessionWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The payment session (ps_…) */
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["WebhookRetryRequest"];
            };
        };
        responses: {
            /** @description The session's delivery log */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryLog"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getSessionWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The payment session (ps_…) */
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The session's delivery log */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryLog"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    createDemoPaymentSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CreateDemoSessionRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaymentSession"];
                };
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    listPayouts: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
                wallet_id?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of payouts */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PayoutList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    createPayout: {
        parameters: {
            query?: never;
            header?: {
                /** @description 1 to 255 visible ASCII characters, scoped to the merchant. The same key with the same body within 24 hours returns the payout it created with 201 (as it is now); with a different body 409 code 5 'idempotency key was already used with a different payload'. Concurrent requests with one key create exactly one payout and one ledger transfer. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreatePayoutRequest"];
            };
        };
        responses: {
            /** @description Created (or the payout of a replayed Idempotency-Key) */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description path of the created resource */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Payout"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            /** @description An on-chain payout's network fee cannot be quoted (code 1): the chain has no RPC configured (retryable false) or did not answer (retryable true); nothing changed */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPayout: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                payout_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The payout */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Payout"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    listPlans: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
                status?: "draft" | "published" | "archived";
                /** @description only plans of this product (any of its versions) */
                product_id?: string;
            };
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPlanList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    createPlan: {
        parameters: {
            query?: never;
            header?: {
                /** @description 1 to 255 visible ASCII characters, scoped to the merchant and the resource type. The same key with the same body within 24 hours returns the original resource with 201 (even if it changed since); with a different body 409 code 5 'idempotency key was already used with a different payload'. Concurrent requests with one key create one resource. */
                "Idempotency-Key"?: string;
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CatalogPlanCreate"];
            };
        };
        responses: {
            /** @description Created (or the original resource for a replayed Idempotency-Key) */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description path of the created resource */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPlan"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getPlan: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description plan id */
                plan_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPlan"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    deletePlan: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description plan id */
                plan_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogDeleted"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    updatePlan: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description plan id */
                plan_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CatalogPlanUpdate"];
            };
        };
        responses: {
            /** @description Changed in place */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPlan"];
                };
            };
            /** @description A new draft version */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description path of the created resource */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPlan"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    archivePlan: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description plan id */
                plan_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CatalogEmptyBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPlan"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    publishPlan: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description plan id */
                plan_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CatalogEmptyBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPlan"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    listPrices: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
                status?: "draft" | "published" | "archived";
                /** @description only prices of this plan (any of its versions) */
                plan_id?: string;
            };
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPriceList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    createPrice: {
        parameters: {
            query?: never;
            header?: {
                /** @description 1 to 255 visible ASCII characters, scoped to the merchant and the resource type. The same key with the same body within 24 hours returns the original resource with 201 (even if it changed since); with a different body 409 code 5 'idempotency key was already used with a different payload'. Concurrent requests with one key create one resource. */
                "Idempotency-Key"?: string;
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CatalogPriceCreate"];
            };
        };
        responses: {
            /** @description Created (or the original resource for a replayed Idempotency-Key) */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description path of the created resource */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPrice"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getPrice: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description price id */
                price_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPrice"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    deletePrice: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description price id */
                price_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogDeleted"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    updatePrice: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description price id */
                price_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CatalogPriceUpdate"];
            };
        };
        responses: {
            /** @description Changed in place */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPrice"];
                };
            };
            /** @description A new draft version */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description path of the created resource */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPrice"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    archivePrice: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description price id */
                price_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CatalogEmptyBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPrice"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    publishPrice: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description price id */
                price_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CatalogEmptyBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogPrice"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    listProducts: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
                status?: "draft" | "published" | "archived";
                /** @description only products of this store */
                store_id?: string;
            };
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogProductList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    createProduct: {
        parameters: {
            query?: never;
            header?: {
                /** @description 1 to 255 visible ASCII characters, scoped to the merchant and the resource type. The same key with the same body within 24 hours returns the original resource with 201 (even if it changed since); with a different body 409 code 5 'idempotency key was already used with a different payload'. Concurrent requests with one key create one resource. */
                "Idempotency-Key"?: string;
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CatalogProductCreate"];
            };
        };
        responses: {
            /** @description Created (or the original resource for a replayed Idempotency-Key) */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description path of the created resource */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogProduct"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getProduct: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description product id */
                product_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogProduct"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    deleteProduct: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description product id */
                product_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogDeleted"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    updateProduct: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description product id */
                product_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CatalogProductUpdate"];
            };
        };
        responses: {
            /** @description Changed in place */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogProduct"];
                };
            };
            /** @description A new draft version */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description path of the created resource */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogProduct"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    archiveProduct: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description product id */
                product_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CatalogEmptyBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogProduct"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    publishProduct: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description product id */
                product_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CatalogEmptyBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogProduct"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    listRates: {
        parameters: {
            query?: {
                /** @description token symbol of an enabled rail, e.g. ETH */
                base?: string;
                /** @description fiat code, default USD */
                quote?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Rates */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RatesList"];
                };
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            /** @description No source has a fresh-enough rate (code 1); the message says which pair and why */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listFaucets: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Faucets */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FaucetList"];
                };
            };
            500: components["responses"]["InternalError"];
        };
    };
    dripFaucet: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["FaucetDripRequest"];
            };
        };
        responses: {
            /** @description Sent (status sent or confirmed; failed with failure_reason when the chain refused it) */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FaucetDrip"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            /** @description The development gas wallet cannot pay (code 1); the message names it */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    listStores: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
                status?: "draft" | "published" | "archived";
            };
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogStoreList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    createStore: {
        parameters: {
            query?: never;
            header?: {
                /** @description 1 to 255 visible ASCII characters, scoped to the merchant and the resource type. The same key with the same body within 24 hours returns the original resource with 201 (even if it changed since); with a different body 409 code 5 'idempotency key was already used with a different payload'. Concurrent requests with one key create one resource. */
                "Idempotency-Key"?: string;
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CatalogStoreCreate"];
            };
        };
        responses: {
            /** @description Created (or the original resource for a replayed Idempotency-Key) */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description path of the created resource */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogStore"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getStore: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description store id */
                store_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogStore"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    deleteStore: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description store id */
                store_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogDeleted"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    updateStore: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description store id */
                store_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CatalogStoreUpdate"];
            };
        };
        responses: {
            /** @description Changed in place */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogStore"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    archiveStore: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description store id */
                store_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CatalogEmptyBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogStore"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    publishStore: {
        parameters: {
            query?: never;
            header?: {
                /** @description Bearer callers: the merchant to act for (one whose live registration used this bearer token). Required when the user owns several merchants; a merchant the user does not own is 403. With X-API-Key it may be omitted; if sent it must be the key's merchant. */
                "X-Merchant-Id"?: string;
            };
            path: {
                /** @description store id */
                store_id: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CatalogEmptyBody"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CatalogStore"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    listWallets: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of wallets */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WalletList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    createWallet: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateWalletRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    /** @description path of the created resource */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Wallet"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    getWallet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                wallet_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The wallet */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Wallet"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    listWalletTransactions: {
        parameters: {
            query?: {
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path: {
                wallet_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of wallet transactions */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WalletTransactionList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    createX402Challenge: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["X402ChallengeRequest"];
            };
        };
        responses: {
            /** @description The challenge */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["X402ChallengeCreated"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            /** @description A catalog price in fiat with no fresh rate of the rail's token (code 1); retryable says whether the same request can succeed later */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getX402Challenge: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                challenge_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The challenge */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["X402ChallengeCreated"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    x402DiscoveryResources: {
        parameters: {
            query?: {
                type?: string;
                payTo?: string;
                network?: string;
                scheme?: string;
                limit?: string;
                offset?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description DiscoveryResourcesResponse */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["X402DiscoveryResources"];
                };
            };
            400: components["responses"]["BadRequest"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    x402FacilitatorSettle: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["X402FacilitatorRequest"];
            };
        };
        responses: {
            /** @description SettleResponse */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["X402SettleResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    x402FacilitatorSupported: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Supported kinds */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["X402Supported"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    x402FacilitatorVerify: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["X402FacilitatorRequest"];
            };
        };
        responses: {
            /** @description VerifyResponse */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["X402VerifyResponse"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    redeemX402Proof: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["X402RedeemRequest"];
            };
        };
        responses: {
            /** @description Settled */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["X402Redemption"];
                };
            };
            /** @description Settlement pending */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["X402Redemption"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description The proof does not pay; the message starts with the reason code */
            402: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            404: components["responses"]["NotFound"];
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
        };
    };
    receiveX402Event: {
        parameters: {
            query?: never;
            header: {
                /** @description equals the body's event_type */
                "X-Service-Event": "x402.settled";
                /** @description t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by webhook_secret> */
                "X-Service-Signature": string;
                /** @description stable across retries of one event */
                "X-Service-Event-Id": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["X402SettledWebhookEvent"];
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the event */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receivePayoutEvent: {
        parameters: {
            query?: never;
            header: {
                /** @description equals the body's event_type */
                "X-Service-Event": "payout.completed" | "payout.failed";
                /** @description t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by webhook_secret> */
                "X-Service-Signature": string;
                /** @description stable across retries of one event */
                "X-Service-Event-Id": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PayoutWebhookEvent"];
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the event */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receiveRefundEvent: {
        parameters: {
            query?: never;
            header: {
                /** @description equals the body's event_type */
                "X-Service-Event": "refund.completed" | "refund.failed";
                /** @description t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by webhook_secret> */
                "X-Service-Signature": string;
                /** @description stable across retries of one event */
                "X-Service-Event-Id": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RefundWebhookEvent"];
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the event */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    receivePaymentSessionEvent: {
        parameters: {
            query?: never;
            header: {
                /** @description equals the body's event_type */
                "X-Service-Event": "payment_session.completed" | "payment_session.expired" | "payment_session.partial_paid";
                /** @description t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by webhook_secret>; one v1 per live secret during a rotation overlap */
                "X-Service-Signature": string;
                /** @description stable across retries of one event */
                "X-Service-Event-Id": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookEvent"];
            };
        };
        responses: {
            /** @description Any 2xx acknowledges the event */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
