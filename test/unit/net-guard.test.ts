import { checkWebhookUrl, isPublicAddress } from '../../lib/webhooks/net-guard.ts';

describe('webhook address guard', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    'fec0::1',
    'feff:ffff::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '224.0.0.1',
    '2002:7f00:1::1',
    '2002:a9fe:a9fe::',
    '::ffff:0:7f00:1',
    '::7f00:1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  ])('refuses %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });

  it('checks scheme, credentials and the resolved host', async () => {
    expect(await checkWebhookUrl('https://8.8.8.8/hook', { allowPrivate: false })).toEqual({ ok: true });
    expect((await checkWebhookUrl('http://8.8.8.8/hook', { allowPrivate: false })).ok).toBe(false);
    expect((await checkWebhookUrl('https://user:pw@8.8.8.8/hook', { allowPrivate: false })).ok).toBe(false);
    expect((await checkWebhookUrl('https://localhost/hook', { allowPrivate: false })).ok).toBe(false);
    expect((await checkWebhookUrl('https://[::ffff:127.0.0.1]/hook', { allowPrivate: false })).ok).toBe(false);
    expect((await checkWebhookUrl('ftp://8.8.8.8/', { allowPrivate: false })).ok).toBe(false);
    expect(await checkWebhookUrl('http://127.0.0.1:9/hook', { allowPrivate: true })).toEqual({ ok: true });
  });
});
