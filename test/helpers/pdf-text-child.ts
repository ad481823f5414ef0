// Child process of test/helpers/pdf.ts: PDF bytes on stdin, {text, info, pages, qr} as JSON on stdout.
// pdf.js loads its worker with a dynamic import, which jest's module sandbox refuses: plain Node runs it.
// `qr` is the QR code found on the first page, rendered by pdf.js and decoded by jsQR (null when none).
import { PDFParse } from 'pdf-parse';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import jsQRModule from 'jsqr';

// a CommonJS module: its default import is the function itself at run time
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;

const chunks: Buffer[] = [];
for await (const c of process.stdin) chunks.push(c as Buffer);
const parser = new PDFParse({ data: new Uint8Array(Buffer.concat(chunks)) });
const text = await parser.getText();
const info = await parser.getInfo();
const shot = await parser.getScreenshot({ partial: [1], scale: 2, imageBuffer: true, imageDataUrl: false });
await parser.destroy();
let qr: string | null = null;
const png = shot.pages[0]?.data;
if (png) {
  const img = await loadImage(Buffer.from(png));
  const canvas = createCanvas(img.width, img.height);
  const g = canvas.getContext('2d');
  g.drawImage(img, 0, 0);
  const pixels = g.getImageData(0, 0, img.width, img.height);
  qr = jsQR(new Uint8ClampedArray(pixels.data.buffer), img.width, img.height)?.data ?? null;
}
process.stdout.write(JSON.stringify({ text: text.text, info: info.info ?? {}, pages: info.total, qr }));
