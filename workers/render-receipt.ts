/**
 * Piscina task: renders a receipt PDF off the event loop (pdfkit layout and deflate cost ~10–30 ms a
 * document, far more than a worker hop; measured in scripts/bench-receipts.ts). Returns the bytes as a
 * transferable ArrayBuffer-backed Uint8Array.
 */
import { renderReceipt } from '../lib/receipts/render.ts';
import type { ReceiptData } from '../lib/receipts/model.ts';

export default async function renderReceiptTask(data: ReceiptData): Promise<Uint8Array> {
  return new Uint8Array(await renderReceipt(data));
}
