/**
 * Wallets (facade): a merchant's own on-chain addresses with ledger balances (issue 9, README "Balances,
 * settlement, fees and payouts"), their transactions, and the operator's ledger check. Sandbox merchants
 * get testnet wallets only; a mainnet wallet needs KYC (same refusal and metric as mainnet sessions).
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { created } from './http-meta.ts';
import { validate } from '../lib/http/validation.ts';
import { REMEDIATION, badRequest } from '../lib/core/errors.ts';
import { balances, checkStoredLedger } from '../lib/ledger/index.ts';
import { openWalletDirectory } from '../lib/wallets/directory.ts';
import { WALLETS, type WalletDoc } from '../lib/wallets/model.ts';
import { presentWallet, presentWalletTx } from '../lib/wallets/present.ts';
import { pageWalletTxs } from '../lib/wallets/listing.ts';
import { pageById } from '../lib/core/paging.ts';
import { checkWalletNetwork } from '../lib/payouts/accept.ts';
import { limitViolation } from '../lib/ops/alerts/index.ts';
import { callingMerchant, loadCallingMerchant } from '../lib/merchants/caller.ts';

type Http = { body?: unknown; query?: unknown; params?: Record<string, string | undefined> };

export function createWalletsService(rt: Runtime): ServiceSchema {
  const { store, config } = rt;
  const wallets = openWalletDirectory(store, config.dataDir, () => rt.now());

  const present = async (w: WalletDoc) => presentWallet(w, await balances(store, w.id), config.rails);

  return {
    name: 'wallets',
    actions: {
      /** POST /v1/wallets */
      async create(ctx: Context<Http>) {
        const m = await loadCallingMerchant(store, ctx);
        const body = validate('CreateWalletRequest', ctx.params.body ?? {});
        if (!config.rails.some((r) => r.chain === body.chain && r.network === body.network)) {
          throw badRequest(`no rail is enabled on ${body.chain} ${body.network}; choose a chain and network from GET /v1/payment_methods`, {
            field: 'chain',
            remediation: REMEDIATION.rails,
          });
        }
        checkWalletNetwork(m, body.network, 'wallets', 'network', () =>
          limitViolation(
            rt,
            {
              signal: 'limit_violation',
              outcome: 'mainnet_kyc_required',
              environment: m.sandbox ? 'sandbox' : 'live',
              chain: body.chain,
              network: body.network,
            },
            { merchant_id: m.id, ctx, log: this.logger },
          ),
        );
        const w = await wallets.create({
          merchant_id: m.id,
          type: body.type ?? 'merchant',
          name: body.name ?? null,
          chain: body.chain,
          network: body.network,
        });
        created(ctx, `/v1/wallets/${w.id}`);
        return present(w);
      },
      /** GET /v1/wallets */
      async list(ctx: Context<Http>) {
        const merchantId = callingMerchant(ctx).merchant_id;
        const q = validate('WalletListQuery', ctx.params.query ?? {}, 'query');
        return pageById<WalletDoc, unknown>(store, WALLETS, { merchant_id: merchantId }, q, present);
      },
      /** GET /v1/wallets/{wallet_id} */
      async get(ctx: Context<Http>) {
        return present(await wallets.own(callingMerchant(ctx).merchant_id, ctx.params.params?.wallet_id));
      },
      /** GET /v1/wallets/{wallet_id}/transactions */
      async transactions(ctx: Context<Http>) {
        const w = await wallets.own(callingMerchant(ctx).merchant_id, ctx.params.params?.wallet_id);
        const q = validate('WalletListQuery', ctx.params.query ?? {}, 'query');
        return pageWalletTxs(store, w.id, q, (r) => presentWalletTx(r, config.rails));
      },
      /** Operator: the ledger's invariants over everything stored (`npm run operator ledger:check`). */
      ledgerCheck: {
        visibility: 'public',
        handler: () => checkStoredLedger(store),
      },
    },
  };
}
