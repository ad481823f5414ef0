/** The calling merchant's standing: the gateway's copy when the request carries one, else one read. */
import { withStanding } from '../../lib/merchants/caller.ts';
import type { Store } from '../../lib/store/port.ts';

/** a store that counts its reads and holds one merchant */
function storeWith(doc: Record<string, unknown> | null) {
  const reads: string[] = [];
  const store = {
    async get(coll: string, id: string) {
      reads.push(`${coll}/${id}`);
      return doc;
    },
  } as unknown as Store;
  return { store, reads };
}

describe('withStanding', () => {
  it('uses the standing the gateway read, without reading the merchant again', async () => {
    const { store, reads } = storeWith({ id: 'mer_1', kyc_status: 'none', rail_policy: null });
    const policy = { allow: [{ chain: 'ethereum' }] };
    const m = await withStanding(store, {
      merchant_id: 'mer_1',
      sandbox: false,
      standing: { kyc_status: 'verified', rail_policy: policy },
    });
    expect(m).toEqual({ id: 'mer_1', sandbox: false, kyc_status: 'verified', rail_policy: policy });
    expect(reads).toEqual([]);
  });

  it('reads the merchant once when the caller carries no standing', async () => {
    const policy = { allow: [{ chain: 'solana' }] };
    const { store, reads } = storeWith({ id: 'mer_2', kyc_status: 'pending', rail_policy: policy });
    const m = await withStanding(store, { merchant_id: 'mer_2', sandbox: true });
    expect(m).toEqual({ id: 'mer_2', sandbox: true, kyc_status: 'pending', rail_policy: policy });
    expect(reads).toEqual(['merchants/mer_2']);
  });

  it('reads no policy as none: a standing without one, or a merchant that is gone', async () => {
    const { store } = storeWith(null);
    expect((await withStanding(store, { merchant_id: 'mer_3', sandbox: true, standing: {} })).rail_policy).toBeNull();
    expect(await withStanding(store, { merchant_id: 'mer_3', sandbox: true })).toEqual({
      id: 'mer_3',
      sandbox: true,
      kyc_status: undefined,
      rail_policy: null,
    });
  });
});
