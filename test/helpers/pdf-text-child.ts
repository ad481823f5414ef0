// Child process of test/helpers/pdf.ts: PDF bytes on stdin, {text, info, pages} as JSON on stdout.
// pdf.js loads its worker with a dynamic import, which jest's module sandbox refuses: plain Node runs it.
import { PDFParse } from 'pdf-parse';

const chunks: Buffer[] = [];
for await (const c of process.stdin) chunks.push(c as Buffer);
const parser = new PDFParse({ data: new Uint8Array(Buffer.concat(chunks)) });
const text = await parser.getText();
const info = await parser.getInfo();
await parser.destroy();
process.stdout.write(JSON.stringify({ text: text.text, info: info.info ?? {}, pages: info.total }));
