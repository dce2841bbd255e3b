// Looking at the host from outside a cell: processes, cgroup dirs, mounts and
// /tmp entries, to prove nothing is left behind after a run.

import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Pids of processes whose argv contains `marker` (NUL-separated cmdline), except ourselves. */
export function pidsWithArg(marker) {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let cmdline;
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
    } catch {
      continue; // exited while we looked, or not ours to read
    }
    if (cmdline.split('\0').some((a) => a.includes(marker))) found.push(Number(name));
  }
  return found;
}

/**
 * Directories under /sys/fs/cgroup (every v1 hierarchy and the v2 one) whose
 * name starts with `prefix`, searched `maxDepth` levels deep. mcpcell names
 * its cgroups mcpcell-<pid>-*, usually below a "mcpcell" parent.
 */
export function cgroupDirsNamed(prefix, maxDepth = 5) {
  const found = [];
  const walk = (dir, depth) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const p = path.join(dir, e.name);
      if (e.name.startsWith(prefix)) found.push(p);
      if (depth < maxDepth) walk(p, depth + 1);
    }
  };
  walk('/sys/fs/cgroup', 0);
  return found;
}

/** The lines of our own /proc/self/mountinfo (the host mount namespace we run in). */
export function mountinfo() {
  return readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter(Boolean);
}

/** Names in the temp dir that start with "mcpcell". */
export function tmpEntriesNamedMcpcell() {
  return readdirSync(os.tmpdir()).filter((n) => n.startsWith('mcpcell'));
}

/**
 * Polls `check` (returns a falsy value when satisfied, else a description of
 * what is still wrong) every 100 ms for at most `limitMs`; returns the last
 * complaint, or null once satisfied. A bounded wait for cleanup, not a timing
 * assertion.
 */
export async function pollUntilClean(check, limitMs = 10_000) {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const complaint = check();
    if (!complaint) return null;
    if (Date.now() >= deadline) return complaint;
    await sleep(100);
  }
}

/** Items of `after` not present in `before`. */
export function added(before, after) {
  const seen = new Set(before);
  return after.filter((x) => !seen.has(x));
}

/** The block a cell's own host uid/gid is claimed from (src/cell/cell_ids.h). */
export const CELL_ID_FIRST = 0x70000000;
export const CELL_ID_COUNT = 1 << 24;

/** True when `id` is a per-run cell id: in the block, no host user's. */
export function isCellHostId(id) {
  return Number.isInteger(id) && id >= CELL_ID_FIRST && id < CELL_ID_FIRST + CELL_ID_COUNT;
}
