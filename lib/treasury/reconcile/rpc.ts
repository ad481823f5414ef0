/**
 * The JSON-RPC client of reconciliation: raw requests to one node, counted, so a run can say what it
 * cost (`rpc_calls`). Concurrent calls are sent as one JSON-RPC batch (each still counts as a call); a
 * node that refuses batches is asked one call at a time from then on. Errors never carry the URL (a
 * provider's URL often holds its API key).
 */
import { rpcErrorText } from '../../chains/clients.ts';

export class RpcError extends Error {
  readonly code: number | null;
  constructor(message: string, code: number | null = null) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
  }
}

interface Pending {
  body: { jsonrpc: '2.0'; id: number; method: string; params: unknown[] };
  resolve(v: unknown): void;
  reject(e: Error): void;
}

export class JsonRpc {
  /** logical calls made (a batch of n counts n) */
  calls = 0;
  /** HTTP requests made */
  requests = 0;
  private id = 0;
  private queue: Pending[] = [];
  private batching = true;
  private readonly url: string;
  private readonly timeoutMs: number;
  private readonly maxBatch: number;

  constructor(url: string, opts: { timeoutMs?: number; maxBatch?: number } = {}) {
    this.url = url;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxBatch = opts.maxBatch ?? 50;
  }

  call<T>(method: string, params: unknown[]): Promise<T> {
    this.calls++;
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ body: { jsonrpc: '2.0', id: ++this.id, method, params }, resolve: resolve as (v: unknown) => void, reject });
      // calls made in the same tick leave together
      if (this.queue.length === 1) queueMicrotask(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.batching ? this.maxBatch : 1);
      await this.send(batch);
    }
  }

  private async post(body: unknown): Promise<unknown> {
    this.requests++;
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      throw new RpcError(`RPC request failed: ${rpcErrorText(e, 160)}`);
    }
    const json = await res.json().catch(() => null);
    if (json === null) throw new RpcError(`RPC node answered HTTP ${res.status} without JSON`);
    return json;
  }

  private async send(batch: Pending[]): Promise<void> {
    const settle = (p: Pending, r: { result?: unknown; error?: { message?: string; code?: number } } | undefined) => {
      if (!r) p.reject(new RpcError(`no answer to ${p.body.method}`));
      else if (r.error) p.reject(new RpcError(`${p.body.method}: ${rpcErrorText(r.error.message ?? 'error', 200)}`, r.error.code ?? null));
      else p.resolve(r.result);
    };
    try {
      if (batch.length === 1) {
        settle(batch[0]!, (await this.post(batch[0]!.body)) as Parameters<typeof settle>[1]);
        return;
      }
      const json = await this.post(batch.map((p) => p.body));
      if (!Array.isArray(json)) {
        // no batches here: the same calls one by one, and never a batch again
        this.batching = false;
        for (const p of batch) await this.send([p]);
        return;
      }
      const byId = new Map((json as Array<{ id: number }>).map((r) => [r.id, r]));
      for (const p of batch) settle(p, byId.get(p.body.id) as Parameters<typeof settle>[1]);
    } catch (e) {
      for (const p of batch) p.reject(e as Error);
    }
  }
}
