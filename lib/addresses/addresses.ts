/**
 * Deposit addresses: one fresh address per payment session, derived from the platform's key material
 * (DESIGN.md: Deposit addresses), and the payment links built on them (qr_data, explorer_url).
 *
 * - Ethereum: BIP-44 m/44'/60'/0'/0/i, EIP-55 checksummed.
 * - Solana: SLIP-0010 ed25519 m/44'/501'/i'/0' (every level hardened, as ed25519 requires), base58.
 * - Key material: the BIP-39 mnemonic in SEED_MNEMONIC, else a testnet mnemonic created once in
 *   DATA_DIR/seed (mode 0600, written to a temporary file and linked into place, so that several
 *   processes sharing the data dir agree on one seed). The seed is never logged.
 * - The index i comes from a per-chain sequence in the store (`address_indexes`, one document per chain,
 *   shared by its networks), reserved in small blocks by compare-and-set: no address is handed out twice,
 *   on any node, on any network. Unused indexes of a block (a node stopping) leave harmless gaps.
 *
 * Deriving an address is the pool's cost per session (a worker's, lib/addresses/workers.ts): each HMAC
 * takes its key as a KeyObject (a Buffer key costs twice as much: ~14 µs against ~7), and the Ethereum
 * address is hashed and checksummed on its bytes with @noble/hashes' keccak (ethers' getAddress parses the
 * text again and hashes through hex strings): 73 µs an address before, 44–58 after. A Solana address: 136 µs
 * before, ~85 after (ed25519PublicKey).
 */
import { createHmac, createPrivateKey, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { resolve } from 'node:path';
import { HDNodeWallet, Mnemonic, encodeBase58, getBytes } from 'ethers';
import { keccak_256 } from '@noble/hashes/sha3.js';
// libsecp256k1 through N-API (prebuilt in the package; ~50 µs a public key against ~650 µs in JavaScript);
// where the native build cannot load, the package falls back to its JavaScript implementation itself
import secp256k1 from 'secp256k1';
import { isConflict, isDuplicate, type Doc, type Store } from '../store/port.ts';
import { fromSubunits } from '../core/money.ts';
import { ConfigError } from '../../config/errors.ts';

export type AddressChain = 'ethereum' | 'solana';

const HARDENED = 0x8000_0000;
/** the order of the secp256k1 group */
const SECP256K1_N = BigInt('0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141');
/** PKCS#8 DER prefix of a raw 32-byte ed25519 private key (RFC 8410) */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

// ---------------------------------------------------------------------------------------------------
// Key material

export interface SeedSource {
  phrase: string;
  /** env: SEED_MNEMONIC; file: an existing DATA_DIR/seed; created: made now in DATA_DIR/seed */
  source: 'env' | 'file' | 'created';
}

const normalizePhrase = (p: string) => p.trim().normalize('NFKD').split(/\s+/).join(' ');

/** Reads the mnemonic (SEED_MNEMONIC, else DATA_DIR/seed, created on first start). Never logs it. */
export function loadSeedPhrase(dataDir: string, env: Record<string, string | undefined> = process.env): SeedSource {
  const fromEnv = env.SEED_MNEMONIC;
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    const phrase = normalizePhrase(fromEnv);
    if (!Mnemonic.isValidMnemonic(phrase))
      throw new ConfigError('SEED_MNEMONIC', fromEnv, 'must be a valid BIP-39 English mnemonic (12 to 24 words)');
    return { phrase, source: 'env' };
  }
  const file = resolve(dataDir, 'seed');
  let source: SeedSource['source'] = 'file';
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    const tmp = resolve(dataDir, `.seed.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    // 24 words (256 bits of entropy); the file holds the phrase only
    writeFileSync(tmp, `${Mnemonic.fromEntropy(randomBytes(32)).phrase}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(tmp, file); // atomic: either this file becomes the seed or another process's did
      source = 'created';
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      unlinkSync(tmp);
    }
  }
  try {
    chmodSync(file, 0o600);
  } catch {
    /* read-only mounts keep their mode */
  }
  const phrase = normalizePhrase(readFileSync(file, 'utf8'));
  if (!Mnemonic.isValidMnemonic(phrase)) throw new Error(`${file} does not hold a valid BIP-39 mnemonic`);
  return { phrase, source };
}

// ---------------------------------------------------------------------------------------------------
// SLIP-0010 (ed25519): hardened derivation only

export interface Slip10Node {
  key: Buffer;
  chainCode: Buffer;
}

export function slip10Master(seed: Uint8Array): Slip10Node {
  const I = createHmac('sha512', 'ed25519 seed').update(seed).digest();
  return { key: I.subarray(0, 32), chainCode: I.subarray(32) };
}

/** Child `index` (< 2^31) at hardened position index + 2^31. */
export function slip10Child(parent: Slip10Node, index: number): Slip10Node {
  if (!Number.isInteger(index) || index < 0 || index >= HARDENED) throw new Error('SLIP-0010 index must be an integer in [0, 2^31)');
  const data = Buffer.alloc(37);
  parent.key.copy(data, 1); // 0x00 || key || ser32(index + 2^31)
  data.writeUInt32BE(index + HARDENED, 33);
  const I = createHmac('sha512', createSecretKey(parent.chainCode)).update(data).digest();
  return { key: I.subarray(0, 32), chainCode: I.subarray(32) };
}

/** Derives a path of hardened indexes such as m/44'/501'/0'/0' (the ' is required on every level). */
export function slip10DerivePath(seed: Uint8Array, path: string): Slip10Node {
  const parts = path.split('/');
  if (parts[0] !== 'm') throw new Error(`path must start with m: ${path}`);
  let node = slip10Master(seed);
  for (const p of parts.slice(1)) {
    const m = /^(\d+)'$/.exec(p);
    if (!m) throw new Error(`SLIP-0010 ed25519 supports hardened indexes only: ${path}`);
    node = slip10Child(node, Number(m[1]));
  }
  return node;
}

/**
 * The 32-byte ed25519 public key of a 32-byte private key (seed), through node:crypto: the private key's
 * JWK carries it (`x`), which costs nothing more than the import (~68 µs), where a public KeyObject
 * exported as SPKI cost another 40.
 */
export function ed25519PublicKey(privateKey: Uint8Array): Buffer {
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, Buffer.from(privateKey)]), format: 'der', type: 'pkcs8' });
  return Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url');
}

// ---------------------------------------------------------------------------------------------------
// Derivation

/**
 * EIP-55: the 40 lowercase hex digits of an address with each letter upper-cased where the matching
 * nibble of keccak256(those 40 characters) is 8 or more.
 */
export function checksummed(lowerHex: string): string {
  const h = keccak_256(Buffer.from(lowerHex, 'latin1'));
  let out = '0x';
  for (let j = 0; j < 40; j++) {
    const c = lowerHex.charCodeAt(j);
    const nibble = (h[j >> 1] >> (j & 1 ? 0 : 4)) & 15;
    out += c >= 97 && nibble >= 8 ? String.fromCharCode(c - 32) : lowerHex[j];
  }
  return out;
}

/** The checksummed Ethereum address of an uncompressed secp256k1 public key (65 bytes, 0x04 first). */
export const ethereumAddressOf = (publicKey: Uint8Array): string =>
  checksummed(Buffer.from(keccak_256(publicKey.subarray(1)).subarray(12)).toString('hex'));

export const ETHEREUM_ACCOUNT_PATH = "m/44'/60'/0'/0";
export const solanaPath = (i: number) => `m/44'/501'/${i}'/0'`;
export const ethereumPath = (i: number) => `${ETHEREUM_ACCOUNT_PATH}/${i}`;

/** Derives deposit addresses from one mnemonic. Holds private key material: never log or serialise it. */
export class AddressDeriver {
  /** the BIP-32 fingerprint of the root key: tells which key material an address came from (public) */
  readonly fingerprint: string;
  private ethKey: bigint;
  /** the HMAC key of every child: the account's chain code */
  private ethChainCode: KeyObject;
  private ethPublicKey: Buffer;
  private solAccountRoot: Slip10Node;

  constructor(phrase: string) {
    const seed = getBytes(Mnemonic.fromPhrase(normalizePhrase(phrase)).computeSeed());
    const root = HDNodeWallet.fromSeed(seed);
    this.fingerprint = root.fingerprint.slice(2);
    const account = root.derivePath(ETHEREUM_ACCOUNT_PATH);
    this.ethKey = BigInt(account.privateKey);
    this.ethChainCode = createSecretKey(Buffer.from(getBytes(account.chainCode)));
    this.ethPublicKey = Buffer.from(getBytes(account.publicKey));
    this.solAccountRoot = slip10Child(slip10Child(slip10Master(seed), 44), 501);
  }

  /**
   * BIP-32 private child derivation (non-hardened) below m/44'/60'/0'/0, with the parent key cached:
   * I = HMAC-SHA512(chain code, serP(K_par) || ser32(i)); k_i = parse256(I_L) + k_par (mod n).
   */
  ethereum(i: number): string {
    if (!Number.isInteger(i) || i < 0 || i >= HARDENED) throw new Error('address index must be an integer in [0, 2^31)');
    const data = Buffer.alloc(37);
    this.ethPublicKey.copy(data, 0);
    data.writeUInt32BE(i, 33);
    const I = createHmac('sha512', this.ethChainCode).update(data).digest();
    const il = BigInt(`0x${I.subarray(0, 32).toString('hex')}`);
    const k = (il + this.ethKey) % SECP256K1_N;
    // BIP-32: such an index is skipped; the chance is below 2^-127
    if (il >= SECP256K1_N || k === 0n) throw new Error(`BIP-32 index ${i} is invalid for this key; use the next index`);
    const pub = secp256k1.publicKeyCreate(Buffer.from(k.toString(16).padStart(64, '0'), 'hex'), false);
    return ethereumAddressOf(pub);
  }

  solana(i: number): string {
    const node = slip10Child(slip10Child(this.solAccountRoot, i), 0);
    return encodeBase58(ed25519PublicKey(node.key));
  }

  address(chain: AddressChain, i: number): string {
    return chain === 'ethereum' ? this.ethereum(i) : this.solana(i);
  }
}

// ---------------------------------------------------------------------------------------------------
// The index sequence

interface IndexDoc extends Doc {
  /** the first index not yet reserved by any node */
  next: number;
  updated_at: string;
}

export const ADDRESS_INDEX_COLLECTION = 'address_indexes';

/**
 * Hands out address indexes from a per-chain sequence in the store. A node reserves `blockSize`
 * indexes at a time with a compare-and-set on the chain's document and hands them out locally, so
 * creating a session costs no shared write for the index most of the time.
 */
export class AddressIndexAllocator {
  private blocks = new Map<string, { next: number; end: number }>();
  private locks = new Map<string, Promise<unknown>>();
  private store: Store;
  private blockSize: number;

  constructor(store: Store, blockSize = 20) {
    this.store = store;
    this.blockSize = blockSize;
  }

  /** the next index of a sequence: a chain's deposit addresses, or another named sequence (`wallet:<chain>`) */
  next(chain: AddressChain | `wallet:${AddressChain}`): Promise<number> {
    const prev = this.locks.get(chain) ?? Promise.resolve();
    const run = prev.then(() => this.take(chain));
    this.locks.set(
      chain,
      run.catch(() => undefined),
    );
    return run;
  }

  private async take(chain: string): Promise<number> {
    let block = this.blocks.get(chain);
    if (!block || block.next >= block.end) {
      block = await this.reserve(chain);
      this.blocks.set(chain, block);
    }
    return block.next++;
  }

  /** Reserves the next `size` indexes of the chain's sequence for this caller alone: [next, end). */
  async reserve(chain: string, size = this.blockSize): Promise<{ next: number; end: number }> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const doc = await this.store.get<IndexDoc>(ADDRESS_INDEX_COLLECTION, chain);
      const start = doc?.next ?? 0;
      const end = Math.min(start + size, HARDENED);
      if (start >= HARDENED) throw new Error(`the ${chain} address index space is exhausted`);
      const next: IndexDoc = { id: chain, next: end, updated_at: new Date().toISOString() };
      try {
        await this.store.write([
          doc
            ? { op: 'cas', coll: ADDRESS_INDEX_COLLECTION, doc: next, expected: doc.version! }
            : { op: 'insert', coll: ADDRESS_INDEX_COLLECTION, doc: next },
        ]);
        return { next: start, end };
      } catch (e) {
        if (!isConflict(e) && !isDuplicate(e)) throw e;
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 ** attempt)));
      }
    }
    throw new Error(`could not reserve ${chain} address indexes: too much contention`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Payment links

export interface LinkTarget {
  chain: string;
  network: string;
  token: string;
  decimals: number;
  address: string;
  /** smallest units */
  amount_subunits: string;
  /** USDC contract (Ethereum) or mint (Solana) when configured, '' otherwise */
  token_contract: string;
  /** the RPC URL of the chain and network (tells which test network is meant) */
  rpc_url?: string;
}

/** A loopback RPC URL: a chain running on this machine (a development chain: no public explorer knows it). */
export function isLocalRpc(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function ethereumChainId(network: string, rpcUrl = ''): number {
  if (network === 'mainnet') return 1;
  if (/holesky/i.test(rpcUrl)) return 17000;
  if (/hoodi/i.test(rpcUrl)) return 560048;
  return 11155111; // Sepolia
}

function solanaCluster(network: string, rpcUrl = ''): string | null {
  if (network === 'mainnet') return null;
  return /testnet/i.test(rpcUrl) ? 'testnet' : 'devnet';
}

/**
 * What a wallet scans: an EIP-681 URI on Ethereum (the ERC-20 `transfer` form for USDC when its contract
 * is configured, the plain `value` form for ETH), a Solana Pay transfer URI on Solana (`spl-token=<mint>`
 * for USDC). Without a configured USDC contract or mint, the URI names the address only, so that no
 * wallet can mistake the amount for one of the native coin.
 */
export function paymentUri(t: LinkTarget): string {
  if (t.chain === 'ethereum') {
    const chainId = ethereumChainId(t.network, t.rpc_url);
    if (t.token === 'ETH') return `ethereum:${t.address}@${chainId}?value=${BigInt(t.amount_subunits).toString()}`;
    if (t.token_contract)
      return `ethereum:${t.token_contract}@${chainId}/transfer?address=${t.address}&uint256=${BigInt(t.amount_subunits).toString()}`;
    return `ethereum:${t.address}@${chainId}`;
  }
  if (t.chain === 'solana') {
    const amount = fromSubunits(t.amount_subunits, t.decimals);
    if (t.token === 'SOL') return `solana:${t.address}?amount=${amount}`;
    if (t.token_contract) return `solana:${t.address}?amount=${amount}&spl-token=${t.token_contract}`;
    return `solana:${t.address}`;
  }
  return t.address;
}

/**
 * A public block-explorer page of the address, or of a transaction when tx is given; null for a local
 * development chain (a loopback RPC URL), which no public explorer knows.
 */
export function explorerUrl(t: Pick<LinkTarget, 'chain' | 'network' | 'address' | 'rpc_url'>, tx?: string | null): string | null {
  if (t.rpc_url && isLocalRpc(t.rpc_url)) return null;
  if (t.chain === 'ethereum') {
    const chainId = ethereumChainId(t.network, t.rpc_url);
    const host =
      chainId === 1
        ? 'etherscan.io'
        : chainId === 17000
          ? 'holesky.etherscan.io'
          : chainId === 560048
            ? 'hoodi.etherscan.io'
            : 'sepolia.etherscan.io';
    return tx ? `https://${host}/tx/${tx}` : `https://${host}/address/${t.address}`;
  }
  const cluster = solanaCluster(t.network, t.rpc_url);
  const q = cluster ? `?cluster=${cluster}` : '';
  return tx ? `https://explorer.solana.com/tx/${tx}${q}` : `https://explorer.solana.com/address/${t.address}${q}`;
}
