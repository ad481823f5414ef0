/**
 * Solana "already processed" (issue 18, leak 1): a node answers it for bytes whose signature has landed,
 * and that counts as this outbox row's success only when the chain knows the row's own signature. The
 * LiteSVM harness always tells the truth, so the untruthful answer is played by a connection that says
 * "already processed" for a signature it has no status for (what an RPC pool behind a load balancer, or
 * a row whose bytes another row shared before memos, would show).
 */
import { Keypair, SystemProgram, Transaction, type Connection } from '@solana/web3.js';
import { encodeBase58 } from 'ethers';
import { SolanaTxDriver } from '../../lib/chains/solana/tx-driver.ts';
import type { Signer } from '../../lib/chains/signer.ts';

function signedBytes(): { raw: string; signature: string } {
  const payer = Keypair.generate();
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: Keypair.generate().publicKey.toBase58() });
  tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }));
  tx.sign(payer);
  return { raw: tx.serialize().toString('base64'), signature: encodeBase58(tx.signatures[0]!.signature!) };
}

function driverWith(known: boolean, asked: string[]) {
  const connection = {
    sendRawTransaction: async () => {
      throw new Error('Transaction simulation failed: This transaction has already been processed');
    },
    getSignatureStatuses: async (sigs: string[]) => {
      asked.push(...sigs);
      return {
        context: { slot: 1 },
        value: sigs.map(() => (known ? { slot: 1, confirmations: null, err: null, confirmationStatus: 'confirmed' } : null)),
      };
    },
  } as unknown as Connection;
  return new SolanaTxDriver({ network: 'testnet', connection: () => connection, signer: {} as Signer, commitment: 'confirmed' });
}

describe('Solana send: "already processed" is success only for the row’s own signature', () => {
  it('the chain knows the signature: a re-broadcast of landed bytes, success', async () => {
    const asked: string[] = [];
    const { raw, signature } = signedBytes();
    await expect(driverWith(true, asked).send(raw)).resolves.toBeUndefined();
    expect(asked).toEqual([signature]);
  });

  it('the chain does not know it: an error, never a success borrowed from another transaction', async () => {
    const asked: string[] = [];
    const { raw, signature } = signedBytes();
    await expect(driverWith(false, asked).send(raw)).rejects.toThrow(/already processed.*is not on chain/);
    // the status asked for is that of these bytes' own signature
    expect(asked).toEqual([signature]);
  });
});
