// Temporary directories that a cell can use. The names never start with
// "mcpcell" so the leak check (no new /tmp/mcpcell* after a run) sees only
// what mcpcell itself creates.

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const created = [];

/**
 * A fresh directory readable (not writable) by any uid. mkdtemp makes 0700;
 * the cell's uid is not ours (as root it maps to an unprivileged host uid), so
 * a --read dir must be world-readable and traversable.
 */
export function makeTempDir(label = 'dir') {
  const dir = mkdtempSync(path.join(os.tmpdir(), `e2e-cell-${label}-`));
  chmodSync(dir, 0o755);
  created.push(dir);
  return dir;
}

/**
 * A fresh directory the cell may write to: the ONE place that knows the rule.
 * When mcpcell runs as root, the cell's uid maps to an unprivileged host uid
 * (not ours), so the host directory must be writable by that uid; 0777 (no
 * sticky bit, so the cell may also replace files we put there) is the simplest
 * rule that holds for any mapping. Unprivileged, the cell's uid maps to our own
 * uid and 0777 is harmless.
 */
export function makeWritableDir(label = 'rw') {
  const dir = makeTempDir(label);
  chmodSync(dir, 0o777);
  return dir;
}

/** Writes a file any uid may read. */
export function writeReadableFile(file, text) {
  writeFileSync(file, text);
  chmodSync(file, 0o644);
}

/** Removes every directory made here (call from an after() hook). */
export function removeTempDirs() {
  while (created.length) rmSync(created.pop(), { recursive: true, force: true });
}
