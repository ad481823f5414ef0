// RPC-shaped views of Solana data for the LiteSVM JSON-RPC harness (solana-rpc.ts):
// jsonParsed instructions (system, spl-token, spl-token-2022, associated-token-account), token
// account / mint decoding, UI token amounts and LiteSVM errors in the RPC's JSON error form.
// The shapes follow what a Solana RPC node returns for getTransaction/getAccountInfo.
import { getBase58Decoder, getBase58Encoder } from '@solana/kit';

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const RENT_SYSVAR = 'SysvarRent111111111111111111111111111111111';

const b58dec = getBase58Decoder();
const b58enc = getBase58Encoder();

export function toBase58(bytes: Uint8Array): string {
  return b58dec.decode(bytes);
}

export function fromBase58(text: string): Uint8Array {
  return new Uint8Array(b58enc.encode(text));
}

export interface UiTokenAmount {
  amount: string;
  decimals: number;
  uiAmount: number | null;
  uiAmountString: string;
}

/** The RPC's uiTokenAmount object (uiAmount is display-only, as on a real node). */
export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  const digits = amount.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const frac = digits.slice(digits.length - decimals).replace(/0+$/, '');
  const uiAmountString = frac.length > 0 ? `${whole}.${frac}` : whole;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

const u64 = (data: Uint8Array, offset: number): bigint =>
  new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(offset, true);
const u32 = (data: Uint8Array, offset: number): number =>
  new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(offset, true);
const key = (data: Uint8Array, offset: number): string => toBase58(data.subarray(offset, offset + 32));

export interface DecodedTokenAccount {
  mint: string;
  owner: string;
  amount: bigint;
  delegate: string | null;
  state: 'uninitialized' | 'initialized' | 'frozen';
  isNative: boolean;
}

/** Decodes an SPL token account (165 bytes; Token-2022 accounts may carry extensions after). */
export function decodeTokenAccount(programId: string, data: Uint8Array): DecodedTokenAccount | null {
  if (programId !== TOKEN_PROGRAM && programId !== TOKEN_2022_PROGRAM) return null;
  if (data.length < 165) return null;
  if (data.length > 165 && (programId !== TOKEN_2022_PROGRAM || data[165] !== 2)) return null;
  const stateByte = data[108]!;
  if (stateByte === 0) return null;
  return {
    mint: key(data, 0),
    owner: key(data, 32),
    amount: u64(data, 64),
    delegate: u32(data, 72) === 1 ? key(data, 76) : null,
    state: stateByte === 2 ? 'frozen' : 'initialized',
    isNative: u32(data, 109) === 1,
  };
}

export interface DecodedMint {
  mintAuthority: string | null;
  supply: bigint;
  decimals: number;
  isInitialized: boolean;
  freezeAuthority: string | null;
}

export function decodeMint(programId: string, data: Uint8Array): DecodedMint | null {
  if (programId !== TOKEN_PROGRAM && programId !== TOKEN_2022_PROGRAM) return null;
  if (data.length < 82) return null;
  if (data.length !== 82 && !(programId === TOKEN_2022_PROGRAM && data.length > 165 && data[165] === 1)) return null;
  return {
    mintAuthority: u32(data, 0) === 1 ? key(data, 4) : null,
    supply: u64(data, 36),
    decimals: data[44]!,
    isInitialized: data[45] === 1,
    freezeAuthority: u32(data, 46) === 1 ? key(data, 50) : null,
  };
}

/** jsonParsed account data for token accounts and mints; null for anything else. */
export function parsedAccountData(
  programId: string,
  data: Uint8Array,
  decimalsOf: (mint: string) => number,
): { program: string; parsed: unknown; space: number } | null {
  const program = programId === TOKEN_PROGRAM ? 'spl-token' : programId === TOKEN_2022_PROGRAM ? 'spl-token-2022' : null;
  if (!program) return null;
  const account = decodeTokenAccount(programId, data);
  if (account) {
    const info: Record<string, unknown> = {
      isNative: account.isNative,
      mint: account.mint,
      owner: account.owner,
      state: account.state,
      tokenAmount: uiTokenAmount(account.amount, decimalsOf(account.mint)),
    };
    if (account.delegate) info.delegate = account.delegate;
    return { program, parsed: { info, type: 'account' }, space: data.length };
  }
  const mint = decodeMint(programId, data);
  if (mint) {
    return {
      program,
      parsed: {
        info: {
          decimals: mint.decimals,
          freezeAuthority: mint.freezeAuthority,
          isInitialized: mint.isInitialized,
          mintAuthority: mint.mintAuthority,
          supply: mint.supply.toString(),
        },
        type: 'mint',
      },
      space: data.length,
    };
  }
  return null;
}

export interface RawInstruction {
  programId: string;
  accounts: readonly string[];
  data: Uint8Array;
  stackHeight: number | null;
}

type Info = Record<string, unknown>;

function systemInstruction(ix: RawInstruction): { type: string; info: Info } | null {
  const d = ix.data;
  const a = ix.accounts;
  if (d.length < 4) return null;
  switch (u32(d, 0)) {
    case 0:
      return d.length >= 52 && a.length >= 2
        ? { type: 'createAccount', info: { lamports: u64(d, 4), newAccount: a[1], owner: key(d, 20), source: a[0], space: u64(d, 12) } }
        : null;
    case 1:
      return d.length >= 36 && a.length >= 1 ? { type: 'assign', info: { account: a[0], owner: key(d, 4) } } : null;
    case 2:
      return d.length >= 12 && a.length >= 2 ? { type: 'transfer', info: { destination: a[1], lamports: u64(d, 4), source: a[0] } } : null;
    case 8:
      return d.length >= 12 && a.length >= 1 ? { type: 'allocate', info: { account: a[0], space: u64(d, 4) } } : null;
    default:
      return null;
  }
}

function withAuthority(info: Info, accounts: readonly string[], at: number, field: string): Info {
  if (accounts.length > at + 1) {
    info[`multisig${field[0]!.toUpperCase()}${field.slice(1)}`] = accounts[at];
    info.signers = accounts.slice(at + 1);
  } else {
    info[field] = accounts[at];
  }
  return info;
}

function tokenInstruction(ix: RawInstruction): { type: string; info: Info } | null {
  const d = ix.data;
  const a = ix.accounts;
  if (d.length < 1) return null;
  const freeze = (off: number): string | null => (d.length >= off + 33 && d[off] === 1 ? key(d, off + 1) : null);
  switch (d[0]) {
    case 0: {
      if (d.length < 34 || a.length < 2) return null;
      const info: Info = { decimals: d[1], mint: a[0], mintAuthority: key(d, 2), rentSysvar: a[1] };
      const f = freeze(34);
      if (f) info.freezeAuthority = f;
      return { type: 'initializeMint', info };
    }
    case 1:
      return a.length >= 4 ? { type: 'initializeAccount', info: { account: a[0], mint: a[1], owner: a[2], rentSysvar: a[3] } } : null;
    case 3:
      return d.length >= 9 && a.length >= 3
        ? { type: 'transfer', info: withAuthority({ amount: u64(d, 1).toString(), destination: a[1], source: a[0] }, a, 2, 'authority') }
        : null;
    case 4:
      return d.length >= 9 && a.length >= 3
        ? { type: 'approve', info: withAuthority({ amount: u64(d, 1).toString(), delegate: a[1], source: a[0] }, a, 2, 'owner') }
        : null;
    case 7:
      return d.length >= 9 && a.length >= 3
        ? { type: 'mintTo', info: withAuthority({ account: a[1], amount: u64(d, 1).toString(), mint: a[0] }, a, 2, 'mintAuthority') }
        : null;
    case 8:
      return d.length >= 9 && a.length >= 3
        ? { type: 'burn', info: withAuthority({ account: a[0], amount: u64(d, 1).toString(), mint: a[1] }, a, 2, 'authority') }
        : null;
    case 9:
      return a.length >= 3 ? { type: 'closeAccount', info: withAuthority({ account: a[0], destination: a[1] }, a, 2, 'owner') } : null;
    case 12:
      return d.length >= 10 && a.length >= 4
        ? {
            type: 'transferChecked',
            info: withAuthority(
              { destination: a[2], mint: a[1], source: a[0], tokenAmount: uiTokenAmount(u64(d, 1), d[9]!) },
              a,
              3,
              'authority',
            ),
          }
        : null;
    case 14:
      return d.length >= 10 && a.length >= 3
        ? {
            type: 'mintToChecked',
            info: withAuthority({ account: a[1], mint: a[0], tokenAmount: uiTokenAmount(u64(d, 1), d[9]!) }, a, 2, 'mintAuthority'),
          }
        : null;
    case 15:
      return d.length >= 10 && a.length >= 3
        ? {
            type: 'burnChecked',
            info: withAuthority({ account: a[0], mint: a[1], tokenAmount: uiTokenAmount(u64(d, 1), d[9]!) }, a, 2, 'authority'),
          }
        : null;
    case 16:
      return d.length >= 33 && a.length >= 3
        ? { type: 'initializeAccount2', info: { account: a[0], mint: a[1], owner: key(d, 1), rentSysvar: a[2] } }
        : null;
    case 18:
      return d.length >= 33 && a.length >= 2 ? { type: 'initializeAccount3', info: { account: a[0], mint: a[1], owner: key(d, 1) } } : null;
    case 20: {
      if (d.length < 34 || a.length < 1) return null;
      const info: Info = { decimals: d[1], mint: a[0], mintAuthority: key(d, 2) };
      const f = freeze(34);
      if (f) info.freezeAuthority = f;
      return { type: 'initializeMint2', info };
    }
    case 21:
      return a.length >= 1 ? { type: 'getAccountDataSize', info: { mint: a[0] } } : null;
    case 22:
      return a.length >= 1 ? { type: 'initializeImmutableOwner', info: { account: a[0] } } : null;
    default:
      return null;
  }
}

function ataInstruction(ix: RawInstruction): { type: string; info: Info } | null {
  const a = ix.accounts;
  const kind = ix.data.length === 0 ? 0 : ix.data[0];
  if ((kind !== 0 && kind !== 1) || a.length < 6) return null;
  return {
    type: kind === 0 ? 'create' : 'createIdempotent',
    info: { account: a[1], mint: a[3], source: a[0], systemProgram: a[4], tokenProgram: a[5], wallet: a[2] },
  };
}

/**
 * One instruction as getTransaction(jsonParsed) shows it: `{ parsed: { info, type }, program,
 * programId, stackHeight }` for the programs a node parses (here: system, spl-token,
 * spl-token-2022, spl-associated-token-account), otherwise `{ accounts, data (base58),
 * programId, stackHeight }`. u64 lamports/space are bigints (the harness serialises them as
 * JSON integers); token amounts are strings, as on a real node.
 */
export function jsonParsedInstruction(ix: RawInstruction): Record<string, unknown> {
  let parsed: { type: string; info: Info } | null = null;
  let program = '';
  if (ix.programId === SYSTEM_PROGRAM) {
    parsed = systemInstruction(ix);
    program = 'system';
  } else if (ix.programId === TOKEN_PROGRAM || ix.programId === TOKEN_2022_PROGRAM) {
    parsed = tokenInstruction(ix);
    program = ix.programId === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022';
  } else if (ix.programId === ATA_PROGRAM) {
    parsed = ataInstruction(ix);
    program = 'spl-associated-token-account';
  }
  if (parsed) return { parsed, program, programId: ix.programId, stackHeight: ix.stackHeight };
  return { accounts: [...ix.accounts], data: toBase58(ix.data), programId: ix.programId, stackHeight: ix.stackHeight };
}

const INNER_ERROR = /^(\w+)\((.*)\)$/;

function parseInstructionError(text: string): unknown {
  const m = INNER_ERROR.exec(text);
  if (!m) return text;
  if (m[1] === 'Custom') return { Custom: Number(m[2]) };
  return { [m[1]!]: m[2] };
}

/**
 * LiteSVM's error (Rust Debug text, e.g. `InstructionError(0, Custom(1))`) in the JSON form a
 * node returns (`{"InstructionError":[0,{"Custom":1}]}`), for meta.err and RPC error data.
 */
export function rustErrorToJson(debugText: string): unknown {
  const t = debugText.trim();
  let m = /^InstructionError\((\d+), (.+)\)$/.exec(t);
  if (m) return { InstructionError: [Number(m[1]), parseInstructionError(m[2]!)] };
  m = /^(\w+)\((\d+)\)$/.exec(t);
  if (m) return { [m[1]!]: Number(m[2]) };
  m = /^(\w+) \{ account_index: (\d+) \}$/.exec(t);
  if (m) return { [m[1]!]: { account_index: Number(m[2]) } };
  if (/^\w+$/.test(t)) return t;
  return { Other: t };
}

/** Extracts the `err: …` part of a LiteSVM FailedTransactionMetadata's string form. */
export function liteSvmErrorText(failed: { toString(): string }): string {
  const s = String(failed);
  const m = /err: (.*?), meta: TransactionMetadata/.exec(s);
  return m ? m[1]! : s;
}
