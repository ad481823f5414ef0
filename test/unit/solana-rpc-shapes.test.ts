// The RPC shapes the LiteSVM harness produces (test/harness/solana-parsed.ts).
import {
  SYSTEM_PROGRAM,
  TOKEN_PROGRAM,
  fromBase58,
  jsonParsedInstruction,
  rustErrorToJson,
  uiTokenAmount,
} from '../harness/solana-parsed.ts';

const A = '8wmfVcbxU4ENc1jEk5nNfsgN4S4wasfxeeLLod1Gnj5e';
const B = '6ZCVNjZ2Seq8os52Yas6RRpvgJZcZnFsAQEKPveEdkWx';
const C = 'B55MR4EkrYCHUMPJ22oqZgYQ8jiTMLJTUQg7ZZ6fpHPM';
const MINT = 'BK5FDKXRxtntc65PHwG9dSMNz2VgWPgjkE3Bjxfh1DFa';

function le64(n: bigint): number[] {
  const out: number[] = [];
  for (let i = 0; i < 8; i++) out.push(Number((n >> BigInt(8 * i)) & 0xffn));
  return out;
}

describe('uiTokenAmount', () => {
  test.each([
    [2_500_000n, 6, '2.5', 2.5],
    [10_000_000n, 6, '10', 10],
    [1n, 6, '0.000001', 0.000001],
    [0n, 6, '0', 0],
    [123n, 0, '123', 123],
  ])('%s at %i decimals', (amount, decimals, str, num) => {
    expect(uiTokenAmount(amount, decimals)).toEqual({ amount: amount.toString(), decimals, uiAmountString: str, uiAmount: num });
  });
});

describe('rustErrorToJson', () => {
  test.each([
    ['InstructionError(0, Custom(1))', { InstructionError: [0, { Custom: 1 }] }],
    ['InstructionError(2, InvalidAccountData)', { InstructionError: [2, 'InvalidAccountData'] }],
    ['AlreadyProcessed', 'AlreadyProcessed'],
    ['InsufficientFundsForRent { account_index: 2 }', { InsufficientFundsForRent: { account_index: 2 } }],
    ['DuplicateInstruction(3)', { DuplicateInstruction: 3 }],
  ])('%s', (text, json) => {
    expect(rustErrorToJson(text)).toEqual(json);
  });
});

describe('jsonParsedInstruction', () => {
  test('system transfer', () => {
    const data = new Uint8Array([2, 0, 0, 0, ...le64(1_000_000_000n)]);
    expect(jsonParsedInstruction({ programId: SYSTEM_PROGRAM, accounts: [A, B], data, stackHeight: null })).toEqual({
      parsed: { type: 'transfer', info: { source: A, destination: B, lamports: 1_000_000_000n } },
      program: 'system',
      programId: SYSTEM_PROGRAM,
      stackHeight: null,
    });
  });

  test('spl-token transferChecked and transfer', () => {
    const checked = new Uint8Array([12, ...le64(2_500_000n), 6]);
    expect(jsonParsedInstruction({ programId: TOKEN_PROGRAM, accounts: [A, MINT, C, B], data: checked, stackHeight: 2 })).toEqual({
      parsed: {
        type: 'transferChecked',
        info: {
          source: A,
          mint: MINT,
          destination: C,
          authority: B,
          tokenAmount: { amount: '2500000', decimals: 6, uiAmount: 2.5, uiAmountString: '2.5' },
        },
      },
      program: 'spl-token',
      programId: TOKEN_PROGRAM,
      stackHeight: 2,
    });
    const plain = new Uint8Array([3, ...le64(7n)]);
    expect(jsonParsedInstruction({ programId: TOKEN_PROGRAM, accounts: [A, C, B], data: plain, stackHeight: null }).parsed).toEqual({
      type: 'transfer',
      info: { source: A, destination: C, authority: B, amount: '7' },
    });
  });

  test('an unknown program stays raw with base58 data', () => {
    const out = jsonParsedInstruction({ programId: MINT, accounts: [A], data: new Uint8Array([1, 2, 3]), stackHeight: null });
    expect(out).toEqual({ accounts: [A], data: 'Ldp', programId: MINT, stackHeight: null });
    expect(Array.from(fromBase58(out.data as string))).toEqual([1, 2, 3]);
  });
});
