/** Reads a PDF back for assertions: its text, info dictionary and the QR code on page 1 (pdf-parse on Mozilla's PDF.js, in a child process). */
import { execFile } from 'node:child_process';
import { join } from 'node:path';

export function pdfText(bytes: Uint8Array): Promise<{ text: string; info: Record<string, unknown>; pages: number; qr: string | null }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [join(process.cwd(), 'test/helpers/pdf-text-child.ts')],
      { maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`PDF text extraction failed: ${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    );
    child.stdin!.end(Buffer.from(bytes));
  });
}

/** fetch() that keeps the body as bytes (PDFs). */
export async function fetchBytes(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}
