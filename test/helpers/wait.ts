/** Polls until `check` returns a truthy value, with a generous deadline (no timing assertions in tests). */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | false | null | undefined> | T | false | null | undefined,
  timeoutMs = 30_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
