/** REST routes of agent wallets (spend policies, spend attempts) and x402. */
import type { RouteDef } from './types.ts';

const W = '/v1/agent-wallets/:agent_wallet_id';
export const AGENTS_ROUTES: RouteDef[] = [
  { method: 'PUT', path: `${W}/policy`, action: 'agents.putPolicy', auth: 'key' },
  { method: 'GET', path: `${W}/policy`, action: 'agents.getPolicy', auth: 'key' },
  { method: 'POST', path: `${W}/spend-attempts`, action: 'agents.createAttempt', auth: 'key' },
  { method: 'POST', path: `${W}/spend-attempts/evaluate`, action: 'agents.evaluateAttempt', auth: 'key' },
  { method: 'GET', path: `${W}/spend-attempts`, action: 'agents.listAttempts', auth: 'key' },
  { method: 'GET', path: `${W}/spend-attempts/:attempt_id`, action: 'agents.getAttempt', auth: 'key' },
  { method: 'POST', path: `${W}/spend-attempts/:attempt_id/approve`, action: 'agents.approveAttempt', auth: 'key' },
  { method: 'POST', path: `${W}/spend-attempts/:attempt_id/deny`, action: 'agents.denyAttempt', auth: 'key' },
  { method: 'POST', path: '/v1/x402/challenges', action: 'x402.createChallenge', auth: 'key' },
  { method: 'GET', path: '/v1/x402/challenges/:challenge_id', action: 'x402.getChallenge', auth: 'key' },
  { method: 'POST', path: '/v1/x402/redeem', action: 'x402.redeem', auth: 'key' },
  { method: 'GET', path: '/v1/x402/facilitator/supported', action: 'x402.facilitatorSupported', auth: 'key' },
  { method: 'POST', path: '/v1/x402/facilitator/verify', action: 'x402.facilitatorVerify', auth: 'key' },
  { method: 'POST', path: '/v1/x402/facilitator/settle', action: 'x402.facilitatorSettle', auth: 'key' },
  { method: 'GET', path: '/v1/x402/facilitator/discovery/resources', action: 'x402.discoveryResources', auth: 'none' },
  { method: 'GET', path: '/v1/catalog/prices/:price_id/x402', action: 'x402.payPrice', auth: 'none' },
];
