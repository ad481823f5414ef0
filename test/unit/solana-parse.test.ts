import {
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  extractSolanaDeposits,
  keyToString,
  type ParsedTransactionLike,
  type TokenBalanceLike,
} from '../../lib/chains/solana/parse.ts';

const PAYER = '8wmfVcbxU4ENc1jEk5nNfsgN4S4wasfxeeLLod1Gnj5e';
const PAYER_ATA = '7QE29swx1A4KVMqUNzxLrM7wpuTrFLd3hcQZnCsjnLi4';
const SESSION = '6ZCVNjZ2Seq8os52Yas6RRpvgJZcZnFsAQEKPveEdkWx';
const SESSION_ATA = 'B55MR4EkrYCHUMPJ22oqZgYQ8jiTMLJTUQg7ZZ6fpHPM';
const OTHER = 'H2TUQN9SyQixN9oE67gk9wk3DviNKPbFn137KZwBgcuk';
const USDC = 'BK5FDKXRxtntc65PHwG9dSMNz2VgWPgjkE3Bjxfh1DFa';
const FAKE_MINT = '241eQpxPLeUZwEi3KwiKMdMdAxtA4r8vMPGYjfpRipni';
const SIG = 'T7D46VQdrmWi5JXv9k11HyJGFjdffc3pNef9FEmbYDwmMSx6TGsxkvLrzKMMqejWAffqwW894w1yKuzULfwnd3Q';

const tb = (accountIndex: number, owner: string, amount: string, mint = USDC, programId = TOKEN_PROGRAM_ID): TokenBalanceLike => ({
  accountIndex,
  mint,
  owner,
  programId,
  uiTokenAmount: { amount, decimals: 6 },
});

/** A USDC payment PAYER → SESSION whose ATA is created in the same transaction (as wallets do). */
function splPayment(overrides: Partial<NonNullable<ParsedTransactionLike['meta']>> = {}): ParsedTransactionLike {
  return {
    slot: 447552004,
    blockTime: 1795309594,
    transaction: {
      signatures: [SIG],
      message: {
        accountKeys: [PAYER, PAYER_ATA, SESSION_ATA, '11111111111111111111111111111111', SESSION, USDC, TOKEN_PROGRAM_ID].map(
          (pubkey, i) => ({
            pubkey,
            signer: i === 0,
            writable: i < 3,
            source: 'transaction',
          }),
        ) as never,
      },
    },
    meta: {
      err: null,
      preBalances: [2000000000, 2039280, 0, 1, 0, 1461600, 1141440],
      postBalances: [1997955720, 2039280, 2039280, 1, 0, 1461600, 1141440],
      preTokenBalances: [tb(1, PAYER, '10000000')],
      postTokenBalances: [tb(1, PAYER, '7500000'), tb(2, SESSION, '2500000')],
      ...overrides,
    },
  };
}

function solPayment(lamportsPaid: number): ParsedTransactionLike {
  return {
    slot: 447552005,
    blockTime: 1795309595,
    transaction: { signatures: ['sig-sol'], message: { accountKeys: [PAYER, SESSION, '11111111111111111111111111111111'] } },
    meta: {
      err: null,
      preBalances: [1997955720, 5, 1],
      postBalances: [1997955720 - lamportsPaid - 5000, 5 + lamportsPaid, 1],
      preTokenBalances: [],
      postTokenBalances: [],
    },
  };
}

describe('extractSolanaDeposits', () => {
  test('SPL: credits the owner of the token account, from zero when the account is new', () => {
    expect(extractSolanaDeposits(splPayment(), { owners: new Set([SESSION]), mints: new Set([USDC]) })).toEqual([
      {
        signature: SIG,
        slot: 447552004,
        blockTime: 1795309594,
        index: 2,
        owner: SESSION,
        mint: USDC,
        account: SESSION_ATA,
        tokenProgram: TOKEN_PROGRAM_ID,
        amount: '2500000',
        sender: PAYER,
      },
    ]);
  });

  test('SPL: an existing token account is credited with the difference', () => {
    const tx = splPayment({
      preTokenBalances: [tb(1, PAYER, '10000000'), tb(2, SESSION, '1000000')],
      postTokenBalances: [tb(1, PAYER, '7500000'), tb(2, SESSION, '3500000')],
    });
    expect(extractSolanaDeposits(tx, { owners: new Set([SESSION]) }).map((d) => d.amount)).toEqual(['2500000']);
  });

  test('SPL: the mint and the token program are checked', () => {
    const wrongMint = splPayment({
      preTokenBalances: [tb(1, PAYER, '10000000', FAKE_MINT)],
      postTokenBalances: [tb(1, PAYER, '7500000', FAKE_MINT), tb(2, SESSION, '2500000', FAKE_MINT)],
    });
    expect(extractSolanaDeposits(wrongMint, { owners: new Set([SESSION]), mints: new Set([USDC]) })).toEqual([]);
    // without a mint filter, the deposit is reported with its mint for the caller to judge
    expect(extractSolanaDeposits(wrongMint, { owners: new Set([SESSION]) })[0]!.mint).toBe(FAKE_MINT);

    const wrongProgram = splPayment({
      preTokenBalances: [tb(1, PAYER, '10000000', USDC, TOKEN_2022_PROGRAM_ID)],
      postTokenBalances: [tb(1, PAYER, '7500000', USDC, TOKEN_2022_PROGRAM_ID), tb(2, SESSION, '2500000', USDC, TOKEN_2022_PROGRAM_ID)],
    });
    expect(extractSolanaDeposits(wrongProgram, { owners: new Set([SESSION]), mints: new Set([USDC]) })).toEqual([]);
    expect(
      extractSolanaDeposits(wrongProgram, {
        owners: new Set([SESSION]),
        mints: new Set([USDC]),
        tokenProgramIds: new Set([TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]),
      }).map((d) => d.tokenProgram),
    ).toEqual([TOKEN_2022_PROGRAM_ID]);

    const noProgramId = splPayment({ postTokenBalances: [{ ...tb(2, SESSION, '2500000'), programId: undefined }] });
    expect(extractSolanaDeposits(noProgramId, { owners: new Set([SESSION]) })).toEqual([]);
  });

  test('the sender is the owner whose money went down, not a sponsoring fee payer; two owners leave it unknown', () => {
    // OTHER pays the fee (account 0), PAYER's token account is debited: the refund belongs to PAYER
    const sponsored = splPayment({
      preBalances: [5000000, 2039280, 0, 1, 0, 1461600, 1141440],
      postBalances: [5000000 - 5000 - 2039280, 2039280, 2039280, 1, 0, 1461600, 1141440],
    });
    sponsored.transaction.message.accountKeys = [
      OTHER,
      PAYER_ATA,
      SESSION_ATA,
      '11111111111111111111111111111111',
      SESSION,
      USDC,
      TOKEN_PROGRAM_ID,
    ];
    expect(extractSolanaDeposits(sponsored, { owners: new Set([SESSION]) })[0]!.sender).toBe(PAYER);
    // two owners' token accounts debited in one transaction (a batch): unknown
    const batch = splPayment({
      preTokenBalances: [tb(1, PAYER, '10000000'), tb(3, OTHER, '1000000')],
      postTokenBalances: [tb(1, PAYER, '8000000'), tb(3, OTHER, '500000'), tb(2, SESSION, '2500000')],
    });
    expect(extractSolanaDeposits(batch, { owners: new Set([SESSION]) })[0]!.sender).toBeNull();
    // SOL: the fee payer's debit beyond its fee is not a payment; the account whose lamports went down is the sender
    const sol: ParsedTransactionLike = {
      slot: 1,
      transaction: { signatures: ['sig-sponsored'], message: { accountKeys: [OTHER, PAYER, SESSION] } },
      meta: { err: null, fee: 5000, preBalances: [1_000_000, 900_000_000, 0], postBalances: [995_000, 800_000_000, 100_000_000] },
    };
    expect(extractSolanaDeposits(sol, { owners: new Set([SESSION]) })[0]).toMatchObject({ amount: '100000000', sender: PAYER });
  });

  test('SOL: a watched address whose balance went up', () => {
    expect(extractSolanaDeposits(solPayment(123_456_789), { owners: new Set([SESSION]) })).toEqual([
      {
        signature: 'sig-sol',
        slot: 447552005,
        blockTime: 1795309595,
        index: 1,
        owner: SESSION,
        mint: null,
        account: SESSION,
        tokenProgram: null,
        amount: '123456789',
        sender: PAYER,
      },
    ]);
  });

  test('a watched address that paid (balance down) or is not watched is not a deposit', () => {
    expect(extractSolanaDeposits(solPayment(10), { owners: new Set([PAYER]) })).toEqual([]);
    expect(extractSolanaDeposits(solPayment(10), { owners: new Set([OTHER]) })).toEqual([]);
    // the paying side of an SPL transfer is not a deposit either
    expect(extractSolanaDeposits(splPayment(), { owners: new Set([PAYER]) })).toEqual([]);
  });

  test('a failed transaction, or one without meta, pays nothing', () => {
    const failed = splPayment({ err: { InstructionError: [1, { Custom: 1 }] } });
    expect(extractSolanaDeposits(failed, { owners: new Set([SESSION]) })).toEqual([]);
    expect(extractSolanaDeposits({ ...splPayment(), meta: null }, { owners: new Set([SESSION]) })).toEqual([]);
  });

  test('sol/tokens switches, predicate owners, several deposits sorted by index', () => {
    const tx = splPayment({
      preBalances: [2000000000, 2039280, 0, 1, 0, 1461600, 1141440],
      postBalances: [1990000000, 2039280, 2039280, 1, 7000000, 1461600, 1141440],
    });
    const all = extractSolanaDeposits(tx, { owners: (a) => a === SESSION });
    expect(all.map((d) => [d.index, d.mint, d.amount])).toEqual([
      [2, USDC, '2500000'],
      [4, null, '7000000'],
    ]);
    expect(extractSolanaDeposits(tx, { owners: new Set([SESSION]), sol: false }).map((d) => d.index)).toEqual([2]);
    expect(extractSolanaDeposits(tx, { owners: new Set([SESSION]), tokens: false }).map((d) => d.index)).toEqual([4]);
  });

  test('accepts web3.js shapes: PublicKey objects as account keys, digit strings and bigints as balances', () => {
    const pk = (s: string) => ({ toBase58: () => s });
    const tx: ParsedTransactionLike = {
      slot: 9,
      transaction: { signatures: ['s'], message: { accountKeys: [{ pubkey: pk(PAYER) }, { pubkey: pk(SESSION) }] } },
      meta: { err: null, preBalances: ['100', 0n], postBalances: ['50', 40n] },
    };
    expect(extractSolanaDeposits(tx, { owners: new Set([SESSION]) })).toEqual([
      expect.objectContaining({ index: 1, owner: SESSION, amount: '40', blockTime: null, mint: null }),
    ]);
    expect(keyToString(pk('abc'))).toBe('abc');
  });

  test('amounts beyond 2^53 stay exact (digit strings)', () => {
    const tx = splPayment({
      preTokenBalances: [],
      postTokenBalances: [tb(2, SESSION, '18446744073709551615')],
    });
    expect(extractSolanaDeposits(tx, { owners: new Set([SESSION]) })[0]!.amount).toBe('18446744073709551615');
  });
});
