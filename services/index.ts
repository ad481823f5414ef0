/**
 * Every service a node can run, by the name used in SERVICES. A node runs all of them unless SERVICES
 * names a subset.
 */
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { createApiService } from './api.service.ts';
import { createDiscoveryService } from './discovery.service.ts';
import { createMerchantsService } from './merchants.service.ts';
import { createMerchantActorsService } from './merchant-actors.service.ts';
import { createOperatorsService } from './operators.service.ts';
import { createHousekeepingService } from './housekeeping.service.ts';
import { createCheckoutService } from './checkout.service.ts';
import { createReceiptsService } from './receipts.service.ts';
import { createRatesService } from './rates.service.ts';
import { createFaucetsService } from './faucets.service.ts';
import { createCatalogService } from './catalog.service.ts';
import { createWebhooksService } from './webhooks.service.ts';
import { createEventsService } from './events.service.ts';
import { createSessionsService } from './sessions.service.ts';
import { createSessionActorsService } from './session-actors.service.ts';
import { createEthereumListenerService } from './ethereum-listener.service.ts';
import { createSolanaListenerService } from './solana-listener.service.ts';
import { createOpsService } from './ops.service.ts';
import { createDiagnosticsService } from './diagnostics.service.ts';
import { createAgentsService } from './agents.service.ts';
import { createAgentWalletActorsService } from './agent-wallet-actors.service.ts';
import { createX402Service } from './x402.service.ts';
import { createTreasuryService } from './treasury.service.ts';
import { createMoneyOutService } from './money-out.service.ts';
import { createWalletsService } from './wallets.service.ts';
import { createPayoutsService } from './payouts.service.ts';
import { createRefundsService } from './refunds.service.ts';

export type ServiceFactory = (rt: Runtime) => ServiceSchema;

export const SERVICE_FACTORIES: Record<string, ServiceFactory> = {
  api: createApiService,
  discovery: createDiscoveryService,
  merchants: createMerchantsService,
  'merchant-actors': createMerchantActorsService,
  operators: createOperatorsService,
  housekeeping: createHousekeepingService,
  checkout: createCheckoutService,
  receipts: createReceiptsService,
  rates: createRatesService,
  faucets: createFaucetsService,
  catalog: createCatalogService,
  webhooks: createWebhooksService,
  events: createEventsService,
  sessions: createSessionsService,
  'session-actors': createSessionActorsService,
  'ethereum-listener': createEthereumListenerService,
  'solana-listener': createSolanaListenerService,
  ops: createOpsService,
  diagnostics: createDiagnosticsService,
  agents: createAgentsService,
  'agent-wallet-actors': createAgentWalletActorsService,
  x402: createX402Service,
  treasury: createTreasuryService,
  'money-out': createMoneyOutService,
  wallets: createWalletsService,
  payouts: createPayoutsService,
  refunds: createRefundsService,
};
