/**
 * @stablecoin-payments/sdk: the typed client of the stablecoin payment service, for Node and browsers.
 * In Node the package resolves to node.ts, which adds the worker-thread proof-of-work solver as the
 * default of `register`.
 */
export { PaymentsClient, createPaymentsClient, retryingFetch } from './client.ts';
export type {
  ClientOptions,
  Schemas,
  PaymentSession,
  CreatePaymentSession,
  Event,
  EventList,
  Rail,
  WebhookDeliveryLog,
  ListEventsQuery,
  ListSessionsQuery,
  Payout,
  CreatePayout,
  Wallet,
  RatesQuery,
  ListWalletsQuery,
  ListPayoutsQuery,
  Refund,
  CreateRefund,
  ListRefundsQuery,
} from './client.ts';
export {
  PaymentsError,
  ErrorCode,
  InternalError,
  NotFoundError,
  BadRequestError,
  RateLimitedError,
  ConflictError,
  AuthenticationError,
  NetworkError,
  type ErrorDetails,
  type FieldError,
} from './errors.ts';
export {
  verifyWebhook,
  isValidWebhook,
  signatureHeader,
  computeSignature,
  parseSignatureHeader,
  WebhookVerificationError,
  SIGNATURE_HEADER,
  EVENT_HEADER,
  EVENT_ID_HEADER,
  DEFAULT_TOLERANCE_SECONDS,
} from './webhooks.ts';
export type { WebhookVerificationReason, VerifyOptions } from './webhooks.ts';
export { streamEvents, parseSse } from './sse.ts';
export type { StreamOptions, StreamedEvent, SseMessage } from './sse.ts';
export { solvePow, powBits, leadingZeroBits } from './pow.ts';
export type { PowSolver, PowProgress, SolveOptions } from './pow.ts';
export { register } from './register.ts';
export type { RegisterOptions, RegisteredMerchant, RegistrationStep } from './register.ts';
export type { paths, components, operations } from './generated/schema.ts';
export {
  requirePayment,
  payingFetch,
  PaymentDeclinedError,
  encodeHeader,
  decodeHeader,
  decodeChallenge,
  HEADERS as X402_HEADERS,
  CHALLENGE_FIELDS,
  X402_VERSION,
} from './x402.ts';
export type { RequirePaymentOptions, PayingFetchOptions, X402Challenge } from './x402.ts';
