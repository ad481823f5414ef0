/** Disposable-mail providers, from the maintained `disposable-email-domains` list (exact and wildcard). */
import domains from 'disposable-email-domains/index.json' with { type: 'json' };
import wildcards from 'disposable-email-domains/wildcard.json' with { type: 'json' };

const exact = new Set<string>(domains as string[]);
const wildcard = wildcards as string[];

export function isDisposableEmail(email: string): boolean {
  const domain = email.trim().toLowerCase().split('@').pop() ?? '';
  if (exact.has(domain)) return true;
  return wildcard.some((w) => domain === w || domain.endsWith(`.${w}`));
}
