/**
 * Stops a server a test started when the test process goes, however it goes. Jest gives a test file a
 * `process` of its own whose 'exit' never fires, and kills a worker that does not exit in time, so an
 * exit hook stops nothing there; a detached shell watching both pids does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

// $0 the test process, $1 the server, $2 a directory to remove with it; done when the server exits first
const WATCH =
  'while kill -0 "$0" 2>/dev/null; do kill -0 "$1" 2>/dev/null || exit 0; sleep 1; done; kill -9 "$1" 2>/dev/null; [ -z "$2" ] || rm -rf "$2"';

/** Kills `child` (and removes `dir`) once this process is gone; the child no longer holds this process open. */
export function reapWith(child: ChildProcess, dir = ''): void {
  spawn('sh', ['-c', WATCH, String(process.pid), String(child.pid), dir], { detached: true, stdio: 'ignore' }).unref();
  child.unref();
  // a piped stdio stream is a Socket (its pipe), which has unref
  for (const s of [child.stdout, child.stderr]) (s as Socket | null)?.unref();
}
