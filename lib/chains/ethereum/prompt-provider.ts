/**
 * An ethers JSON-RPC provider that sends its calls at the end of the current event-loop turn instead of on
 * a timer. ethers queues every call behind a setTimeout (batchStallTime, 10 ms by default; even 0 is a
 * 1 ms timer in Node), which an EIP-3009 redeem's sequential steps (fees, send, check) paid on each call.
 * Calls made in one turn still go out together as one JSON-RPC batch (at most BATCH_MAX calls each).
 */
import { JsonRpcProvider, makeError, type JsonRpcPayload, type JsonRpcResult, type JsonRpcError } from 'ethers';

const BATCH_MAX = 100;

interface Queued {
  payload: JsonRpcPayload;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

export class PromptJsonRpcProvider extends JsonRpcProvider {
  private queue: Queued[] = [];
  private scheduled = false;
  private nextRpcId = 1;

  override send(method: string, params: unknown[] | Record<string, unknown>): Promise<any> {
    if (this.destroyed) return super.send(method, params as unknown[]); // ethers' own refusal
    const payload: JsonRpcPayload = { method, params: params as unknown[], id: this.nextRpcId++, jsonrpc: '2.0' };
    const done = new Promise((resolve, reject) => this.queue.push({ payload, resolve, reject }));
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
    return done;
  }

  private drain(): void {
    this.scheduled = false;
    while (this.queue.length) void this.sendBatch(this.queue.splice(0, BATCH_MAX));
  }

  private async sendBatch(batch: Queued[]): Promise<void> {
    let results: Array<JsonRpcResult | JsonRpcError>;
    try {
      results = await this._send(batch.length === 1 ? batch[0].payload : batch.map((b) => b.payload));
    } catch (e) {
      for (const b of batch) b.reject(e);
      return;
    }
    for (const b of batch) {
      const r = results.find((x) => x.id === b.payload.id);
      if (!r) b.reject(makeError('missing response for request', 'BAD_DATA', { value: results, info: { payload: b.payload } }));
      else if ('error' in r) b.reject(this.getRpcError(b.payload, r));
      else b.resolve(r.result);
    }
  }
}
