/** Reads a merchant's event stream (`GET /v1/events/stream`, the SDK's reader) in the background, collecting what arrives. */
import { streamEvents, type StreamedEvent } from '../../sdk/src/sse.ts';

export function collectStream(opts: Parameters<typeof streamEvents>[0]) {
  const controller = new AbortController();
  const got: StreamedEvent[] = [];
  let connected = 0;
  const done = (async () => {
    for await (const e of streamEvents({
      ...opts,
      signal: controller.signal,
      retryMs: 100,
      onConnect: () => {
        connected++;
      },
    }))
      got.push(e);
  })().catch((e) => {
    if (!controller.signal.aborted) throw e;
  });
  return {
    got,
    connected: () => connected,
    async stop() {
      controller.abort();
      await done;
    },
  };
}
