/**
 * `npm run demo`: the whole product in one command, on a local chain.
 *
 *  1. starts a local Ethereum node (Hardhat's, on 127.0.0.1, free port) and deploys TestUSDC from
 *     contracts/TestUSDC.sol (6 decimals), minting some to a buyer account;
 *  2. starts the payment service in this process on a free port (a temporary DATA_DIR), with the chain
 *     configured: ETHEREUM_TESTNET_RPC_URL, ETHEREUM_TESTNET_USDC_ADDRESS, ETHEREUM_TESTNET_CONFIRMATIONS=1;
 *  3. starts a small merchant webhook receiver that verifies every request with lib/webhooks/verify.ts;
 *  4. registers a sandbox merchant through the real HTTP flow: the operator trusts the domain, email
 *     verification (the code is read from an in-process mailer), confirmation, proof of work, registration;
 *  5. creates a payment session over HTTP, pays it on chain with ethers from the buyer's wallet;
 *  6. prints the verified `payment_session.completed` webhook and the session, and exits cleanly.
 *
 * Nothing is left running; the temporary data directory is removed. Exit code 0 on success.
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Contract } from 'ethers';
import { loadConfig } from '../config/index.ts';
import { startNode, type RunningNode } from '../app.ts';
import { api, CapturingMailer } from '../test/helpers/node.ts';
import { solvePow } from '../lib/onboarding/pow.ts';
import { verifyWebhook } from '../lib/webhooks/verify.ts';
import { startHardhatNode, type HardhatNode } from '../test/harness/hardhat-node.ts';

const TIMEOUT_MS = Number(process.env.DEMO_TIMEOUT_MS ?? 180_000);
const say = (line: string) => console.log(line);
const step = (n: number, text: string) => say(`\n[${n}/6] ${text}`);

interface Hook {
  raw: string;
  headers: http.IncomingHttpHeaders;
  verified: boolean;
  error?: string;
}

async function main(): Promise<void> {
  let chain: HardhatNode | null = null;
  let node: RunningNode | null = null;
  let receiver: http.Server | null = null;
  const dataDir = mkdtempSync(join(tmpdir(), 'payments-demo-'));
  const timer = setTimeout(() => {
    console.error(`demo: no result within ${TIMEOUT_MS} ms`);
    process.exit(1);
  }, TIMEOUT_MS);
  timer.unref();
  try {
    step(1, 'starting a local Ethereum node (Hardhat) and deploying TestUSDC');
    chain = await startHardhatNode();
    const usdc = await chain.deployTestUsdc();
    const buyer = chain.wallet(1);
    await usdc.mint(buyer.address, 100_000_000n);
    say(`  chain      ${chain.url} (chain id ${chain.chainId})`);
    say(`  TestUSDC   ${usdc.address} (block ${usdc.deployBlock})`);
    say(`  buyer      ${buyer.address} holds 100 USDC`);

    step(2, 'starting the payment service with the chain configured');
    const mailer = new CapturingMailer();
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      POW_DIFFICULTY: '16',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_SCAN_INTERVAL_MS: '200',
      ETHEREUM_TESTNET_RPC_URL: chain.url,
      ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
      ETHEREUM_TESTNET_CONFIRMATIONS: '1',
      CHAIN_POLL_INTERVAL_MS: '250',
    });
    node = await startNode(config, { mailer, defaultMetrics: false });
    const port = (node.broker.getLocalService('api') as unknown as { server: { address(): AddressInfo } }).server.address().port;
    const base = `http://127.0.0.1:${port}`;
    say(`  service    ${base} (data in ${dataDir})`);

    step(3, "starting the merchant's webhook receiver");
    let secret = '';
    const hooks: Hook[] = [];
    let onHook: (h: Hook) => void = () => undefined;
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const hook: Hook = { raw, headers: req.headers, verified: false };
        try {
          hook.verified = verifyWebhook(raw, req.headers['x-service-signature'], secret);
        } catch (e) {
          hook.error = (e as Error).message;
        }
        hooks.push(hook);
        res.writeHead(hook.verified ? 200 : 400).end();
        onHook(hook);
      });
    });
    await new Promise<void>((r) => receiver!.listen(0, '127.0.0.1', () => r()));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/payments`;
    say(`  receiver   ${hookUrl}`);

    step(4, 'registering a sandbox merchant (trusted domain, email code, proof of work)');
    const email = `owner@demo-shop.test`;
    await node.broker.call('operators.trustDomain', { value: 'demo-shop.test' });
    say('  operator   trusted the domain demo-shop.test');
    const intent = await api(base, 'POST', '/v1/merchants/email-verification', { email });
    const code = await mailer.waitForCode(email);
    say(`  email      code ${code} sent to ${email}`);
    await api(base, 'POST', '/v1/merchants/email-verification/confirm', { registration_intent_id: intent.registration_intent_id, code });
    const pow = await api(base, 'POST', '/v1/merchants/registration-proof-of-work', {
      registration_intent_id: intent.registration_intent_id,
    });
    const body: Record<string, unknown> = {
      name: 'Demo Shop',
      sandbox: true,
      registration_intent_id: intent.registration_intent_id,
      webhook_url: hookUrl,
    };
    if (pow.required) {
      const t0 = Date.now();
      body.proof_of_work_challenge_id = pow.challenge_id;
      body.proof_of_work_nonce = solvePow(pow.challenge, pow.difficulty);
      say(`  pow        ${pow.difficulty} leading zero bits solved in ${Date.now() - t0} ms`);
    }
    const merchant = await api(base, 'POST', '/v1/merchants', body);
    secret = merchant.webhook_secret;
    say(`  merchant   ${merchant.id} (api key ${String(merchant.api_key).slice(0, 16)}…)`);

    step(5, 'creating a payment session and paying it on chain');
    const session = await api(
      base,
      'POST',
      '/v1/payment_sessions',
      {
        amount: 25,
        expires_in: '15m',
        paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' },
        metadata: { order: 'demo-1' },
      },
      merchant.api_key,
    );
    say(`  session    ${session.session_id}: ${session.expected_amount} ${session.currency} to ${session.address}, ${session.status}`);
    const completed = new Promise<Hook>((resolve) => {
      onHook = (h) => {
        if (h.headers['x-service-event'] === 'payment_session.completed') resolve(h);
      };
    });
    const token = new Contract(usdc.address, ['function transfer(address to, uint256 amount) returns (bool)'], buyer);
    const tx = await token.getFunction('transfer')(session.address, 25_000_000n);
    const receipt = await tx.wait();
    const paidAt = Date.now();
    say(`  paid       tx ${receipt.hash} in block ${receipt.blockNumber}`);

    step(6, 'waiting for the webhook');
    const hook = await completed;
    if (!hook.verified) throw new Error(`the webhook did not verify: ${hook.error}`);
    say(
      `  received   ${hook.headers['x-service-event']} ${Date.now() - paidAt} ms after the block (X-Service-Signature ${String(hook.headers['x-service-signature']).slice(0, 24)}…): signature verified`,
    );
    say('  body       ' + JSON.stringify(JSON.parse(hook.raw), null, 2).split('\n').join('\n  '));
    const final = await api(base, 'GET', `/v1/payment_sessions/${session.session_id}`, undefined, merchant.api_key);
    say(`  session    ${final.status}, received ${final.received_amount} ${final.currency}, ${final.deposits.length} deposit(s)`);
    say(`  checkout   ${base}/checkout/${final.session_id} (paid; no explorer link: a local chain no public explorer knows)`);
    say('\ndemo: OK (payment_session.completed verified)');
  } finally {
    await node?.stop().catch(() => undefined);
    if (receiver) {
      receiver.closeAllConnections();
      await new Promise((r) => receiver!.close(() => r(undefined)));
    }
    await chain?.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    clearTimeout(timer);
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`demo failed: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
