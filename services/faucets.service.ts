/**
 * Testnet faucets (facade): GET /v1/sandbox/faucets (public: the list is configuration, nothing secret)
 * and, on local development chains only, POST /v1/sandbox/faucets/drip {address, chain, token} with a
 * sandbox merchant's X-API-Key: test funds from the chain's development gas wallet, through the
 * transaction outbox (signed in the pool, persisted, then broadcast), limited per merchant and address.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { callingMerchant } from '../lib/merchants/caller.ts';
import { requestMeta } from '../lib/core/request-meta.ts';
import { validate } from '../lib/http/validation.ts';
import { ServiceError, badRequest, forbidden, rateLimited, unavailable } from '../lib/core/errors.ts';
import { newId } from '../lib/core/ids.ts';
import { fromSubunits } from '../lib/core/money.ts';
import { loadSeedPhrase } from '../lib/addresses/addresses.ts';
import { PoolSigner } from '../lib/chains/signer.ts';
import { Broadcaster } from '../lib/chains/broadcast/outbox.ts';
import { configuredDrivers } from '../lib/chains/broadcast/drivers.ts';
import { ethProvider, nativeBalance, tokenBalance } from '../lib/chains/clients.ts';
import { NATIVE } from '../lib/treasury/gas-wallet.ts';
import { moneyOutMetrics } from '../lib/chains/metrics.ts';
import { DEV_CHAIN_IDS, DripRefusal, faucetList, planDrip, type DripPlan } from '../lib/faucets/index.ts';
import type { ChainTxDoc } from '../lib/chains/broadcast/types.ts';

/** how long a drip request waits for its transaction to be final before answering with its current status */
const DRIP_WAIT_MS = 10_000;

export function createFaucetsService(rt: Runtime): ServiceSchema {
  let signer: PoolSigner | null = null;
  let outbox: Broadcaster | null = null;

  /**
   * The outbox used to create and push drips. Its scanner is not started here: the node that runs the
   * money-out scanner finishes any drip this request leaves unconfirmed, with every other purpose's hooks.
   */
  function broadcaster(log: { warn(...a: unknown[]): void }): { signer: PoolSigner; outbox: Broadcaster } {
    signer ??= new PoolSigner(loadSeedPhrase(rt.config.dataDir).phrase);
    outbox ??= new Broadcaster({
      store: rt.store,
      driver: configuredDrivers(rt.config, signer),
      pollIntervalMs: rt.config.moneyOut.pollIntervalMs,
      rebroadcastMs: rt.config.moneyOut.rebroadcastMs,
      bumpAfterMs: rt.config.moneyOut.bumpAfterMs,
      now: () => rt.now(),
      log,
      metrics: moneyOutMetrics(rt.metrics.registry),
    });
    return { signer, outbox };
  }

  /** A second check beside the loopback URL: an Ethereum node must say it is a development chain. */
  async function assertDevChain(plan: DripPlan): Promise<void> {
    if (plan.rail.chain !== 'ethereum') return;
    const id = Number(await (await ethProvider(plan.rpcUrl)).send('eth_chainId', []));
    if (!DEV_CHAIN_IDS.has(id))
      throw badRequest(`the drip works only on a local development chain; this ethereum testnet node has chain id ${id}`, {
        remediation: 'Use a public testnet faucet from GET /v1/sandbox/faucets; the drip serves local development chains only.',
      });
  }

  /** The gas wallet must hold the drip (and gas); otherwise a 503 telling the operator what to fund. */
  async function assertFunded(plan: DripPlan, from: string): Promise<void> {
    const { chain, token, decimals } = plan.rail;
    const native = NATIVE[chain];
    const have =
      plan.rail.kind === 'native'
        ? await nativeBalance(chain, plan.rpcUrl, from)
        : await tokenBalance(chain, plan.rpcUrl, rt.config.chains[chain].testnet.usdcToken, from);
    const gas = plan.rail.kind === 'native' ? have : await nativeBalance(chain, plan.rpcUrl, from);
    if (have < plan.amountSubunits || gas === 0n) {
      throw unavailable(
        `the development gas wallet ${from} on ${chain} testnet holds ${fromSubunits(have, decimals)} ${token}` +
          `${plan.rail.kind === 'native' ? '' : ` and ${fromSubunits(gas, native.decimals)} ${native.token}`}; it needs ${plan.amount} ${token} and gas: fund it`,
      );
    }
  }

  return {
    name: 'faucets',
    actions: {
      /** GET /v1/sandbox/faucets */
      list: {
        handler(ctx: Context) {
          requestMeta(ctx).$responseHeaders = { 'Cache-Control': 'public, max-age=60' };
          return { data: faucetList(rt.config) };
        },
      },

      /** POST /v1/sandbox/faucets/drip */
      drip: {
        async handler(ctx: Context<{ body: unknown }>) {
          const caller = callingMerchant(ctx);
          if (!caller.sandbox)
            throw forbidden('the faucet drip is for sandbox merchants (a service_sk_test_ key)', {
              remediation: "Call the drip with a sandbox merchant's key (service_sk_test_…).",
            });
          const body = validate('FaucetDripRequest', ctx.params.body);
          let plan: DripPlan;
          try {
            plan = planDrip(rt.config, body);
          } catch (e) {
            if (e instanceof DripRefusal)
              throw badRequest(e.message, {
                remediation: 'Change the request as the message says; GET /v1/sandbox/faucets lists what the drip serves.',
              });
            throw e;
          }
          const { chain, token } = plan.rail;
          const { signer: keys, outbox: out } = broadcaster(this.logger);
          const from = keys.address(plan.intent.from);
          try {
            await assertDevChain(plan);
            await assertFunded(plan, from);
          } catch (e) {
            if (e instanceof ServiceError) throw e;
            // the local node is down: a 503 that says so, not a 500 (and never the RPC URL)
            this.logger.warn(`faucet drip: ${chain} testnet read failed (${(e as Error).name})`);
            throw unavailable(`the local ${chain} testnet node does not answer; start it (or fix its RPC URL) and retry`);
          }
          const window = rt.config.faucets.dripIntervalMs;
          const perMerchant = await rt.store.increment(`faucet:merchant:${caller.merchant_id}`, 1, window, rt.now());
          if (perMerchant > rt.config.faucets.dripPerMerchant) {
            throw rateLimited(
              `at most ${rt.config.faucets.dripPerMerchant} drips per merchant every ${Math.round(window / 60_000)} min; retry later`,
              { remediation: 'Wait for the drip window to pass, then retry.' },
            );
          }
          const perAddress = await rt.store.increment(`faucet:address:${chain}:${token}:${plan.address}`, 1, window, rt.now());
          if (perAddress > 1)
            throw rateLimited(
              `${plan.address} already received ${token} on ${chain} within the last ${Math.round(window / 60_000)} min; retry later`,
              { remediation: 'Wait for the drip window to pass, then retry for this address.' },
            );

          const id = newId('drp');
          const { doc } = await out.create({
            id: `faucet:${id}`,
            chain,
            network: 'testnet',
            purpose: 'faucet',
            ref: id,
            intent: plan.intent,
          });
          // broadcast now and follow it briefly: a local chain mines at once
          let row: ChainTxDoc | null = doc;
          const deadline = Date.now() + DRIP_WAIT_MS;
          while (row && row.status !== 'confirmed' && row.status !== 'failed' && Date.now() < deadline) {
            row = (await out.process(doc.id)) ?? (await rt.store.get<ChainTxDoc>('chain_txs', doc.id));
            if (row && row.status !== 'confirmed' && row.status !== 'failed') await new Promise((r) => setTimeout(r, 100));
          }
          const final = row ?? doc;
          return {
            id,
            chain,
            network: 'testnet',
            token,
            address: plan.address,
            from_address: from,
            amount: plan.amount,
            amount_subunits: plan.amountSubunits.toString(),
            tx_hash: final.tx_hash,
            status: final.status === 'signed' ? 'sent' : final.status,
            ...(final.failure_reason ? { failure_reason: final.failure_reason } : {}),
          };
        },
      },
    },
    async stopped() {
      await signer?.close();
    },
  };
}
