/** `npm ci` (what CI runs first) needs every platform build of native packages in the lockfile. */
import { execFileSync } from 'node:child_process';

it('package-lock.json lists the other-platform optional packages npm ci checks for', () => {
  expect(() => execFileSync(process.execPath, ['scripts/fix-lockfile.mjs', '--check'], { encoding: 'utf8', stdio: 'pipe' })).not.toThrow();
});
