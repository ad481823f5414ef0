/** Onboarding, profile and credential routes. */
import type { RouteDef } from './types.ts';

export const MERCHANT_ROUTES: RouteDef[] = [
  { method: 'POST', path: '/v1/merchants/email-verification', action: 'merchants.startEmailVerification', auth: 'none' },
  { method: 'POST', path: '/v1/merchants/email-verification/confirm', action: 'merchants.confirmEmail', auth: 'none' },
  { method: 'POST', path: '/v1/merchants/registration-proof-of-work', action: 'merchants.issueProofOfWork', auth: 'none' },
  { method: 'POST', path: '/v1/merchants', action: 'merchants.register', auth: 'bearer-optional' },
  { method: 'GET', path: '/v1/me', action: 'merchants.me', auth: 'key' },
  { method: 'POST', path: '/v1/me/credentials/rotate', action: 'merchants.rotate', auth: 'key' },
  { method: 'POST', path: '/v1/me/credentials/revoke', action: 'merchants.revoke', auth: 'key' },
  { method: 'GET', path: '/v1/me/rail-policy', action: 'merchants.railPolicy', auth: 'key' },
  { method: 'PUT', path: '/v1/me/rail-policy', action: 'merchants.setRailPolicy', auth: 'key' },
];
