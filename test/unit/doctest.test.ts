/** The doc-test runner's reading of markdown: which blocks are quick starts, and their annotations. */
import { quickStartBlocks } from '../helpers/doctest.ts';

const fence = '```';

describe('quickStartBlocks', () => {
  it('takes the sh and ts blocks under a quick-start heading, with their annotations, and nothing else', () => {
    const md = [
      '# Title',
      `${fence}sh`,
      'npm test',
      fence,
      '## Quick start',
      '<!-- doctest: background, ready="Ready: x", expect=\'"status":"ok"\', expect=two, stdin=email-code -->',
      `${fence}sh`,
      'echo one',
      fence,
      '### Details',
      `${fence}ts`,
      'console.log(1);',
      fence,
      '## Reference',
      `${fence}sh`,
      'curl …',
      fence,
    ].join('\n');
    const blocks = quickStartBlocks(md);
    expect(blocks.map((b) => [b.line, b.lang, b.code, b.heading])).toEqual([
      [7, 'sh', 'echo one', 'Quick start'],
      [11, 'ts', 'console.log(1);', 'Details'],
    ]);
    expect(Object.fromEntries(blocks[0].annotations)).toEqual({
      background: [''],
      ready: ['Ready: x'],
      expect: ['"status":"ok"', 'two'],
      stdin: ['email-code'],
    });
  });

  it('refuses what it could not run as written: other languages, unknown annotations, installing packages', () => {
    expect(() => quickStartBlocks(`## Quick start\n${fence}json\n{}\n${fence}`, 'X.md')).toThrow(/X.md:2: .*sh, bash or ts/);
    expect(() => quickStartBlocks(`## Quick start\n<!-- doctest: sudo -->\n${fence}sh\nls\n${fence}`)).toThrow(
      /unknown doctest annotation "sudo"/,
    );
    expect(() => quickStartBlocks(`## Quick start\n${fence}sh\nnpm ci\nnpm start\n${fence}`)).toThrow(/must not install packages/);
  });
});
