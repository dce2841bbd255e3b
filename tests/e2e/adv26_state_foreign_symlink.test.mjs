// Adversary pass adv26 on 03191d7 (adv24's fix fd2970e: root reads every
// passwd account's known-state-dirs, "only entries that account owns").
// FAILED on main at 03191d7; marked todo so the suite stays green.
//
// MEDIUM (any local account, no privilege: hides or refuses any directory
// of root's choosing in every root launch; aimed at a system directory
// (/usr/lib) it makes every root launch on the host fail, exit 2, until the
// link is removed: "system /usr: would show mcpcell's state directory ...
// /usr/lib at /usr/lib unmasked" — tried on 03191d7 in a private mount
// namespace with a copy of the list, so no other run saw it): "owns" is checked with lstat(2) on the listed
// path (src/util/state_dir.cc:106, `::lstat(l.c_str(), &st) != 0 ||
// st.st_uid != *owner`), so a *symlink* named mcpcell that the account owns
// passes, and every user of the entry then resolves it:
// McpcellOwnDirs/HiddenDirs/MaskHiddenDirsBeneath (ResolvedAsFarAsExists,
// hidden_dirs.cc:50,63) and CheckDirNotWritableByCell (realpath,
// spec_builder.cc:573). So
//   ln -s /srv/data ~/x/mcpcell; echo ~/x/mcpcell >> ~/.local/state/mcpcell/known-state-dirs
// makes /srv/data "mcpcell's state directory" for root: a root cell granted
// --read /srv/data is refused ("is mcpcell's state directory ...; no cell
// may see it"), one granted /srv has it masked, a --write above it is
// refused, and a grant or system bind inside it is refused
// (CheckHiddenDirsOutOfReach). The list is the user's own file: nothing
// stops the hand-written line (IsStateDirPath only checks the spelling).
//   Reproduce: as mcpcell-test, the two lines above with a root-owned
//   /var/tmp/victim; as root, mcpcell run --read /var/tmp/victim -- cat
//   /var/tmp/victim/f: refused.
// Suggested fix: in ReadList (owner set), keep an entry only if it is a real
// directory (S_ISDIR from lstat, not a link) owned by that account, whose
// resolved path equals the entry (no link on its way) and lies at or below
// that account's passwd home; and use the checked path, not a re-resolved
// one, afterwards (open it O_NOFOLLOW|O_DIRECTORY and compare st_dev/st_ino).
//
// Bounded: one short root run; the entry is taken out of the list (under
// its lock) and the link and directories are removed after.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { after, test } from 'node:test';

import { runMcpcell, skipWithoutCell } from './lib/mcpcell.mjs';
import { asTestUser, canActAsTestUser, removeTestUserHomes, testUserHome } from './lib/test_user.mjs';

const LIST_DIR = '/home/mcpcell-test/.local/state/mcpcell';
const cleanup = [];
after(() => {
  for (const f of cleanup.splice(0).reverse()) f();
  removeTestUserHomes();
});

/** `script` as mcpcell-test holding the list's lock (RememberStateDir's writers take it too). */
function underListLock(script) {
  return spawnSync('flock', [`${LIST_DIR}/known-state-dirs.lock`, 'sh', '-c', `umask 077; ${script}`], { ...asTestUser, encoding: 'utf8' });
}

test('adv26: another account lists a symlink named mcpcell and root treats its target as a state directory', {
  timeout: 120_000,
}, async (t) => {
  if (await skipWithoutCell(t)) return;
  if (!canActAsTestUser()) { t.skip('needs root and the account mcpcell-test'); return; }
  const victim = mkdtempSync('/var/tmp/e2e-adv26-victim-');  // root's, not named mcpcell, nothing of the user's
  cleanup.push(() => spawnSync('rm', ['-rf', '--', victim]));
  chmodSync(victim, 0o755);
  writeFileSync(`${victim}/f`, 'ADV26-ROOT-DATA\n');
  const home = testUserHome('adv26-link', ['x']);
  const entry = `${home}/x/mcpcell`;
  spawnSync('ln', ['-s', victim, entry], asTestUser);
  spawnSync('mkdir', ['-p', LIST_DIR], asTestUser);
  const add = underListLock(`l=${LIST_DIR}/known-state-dirs; { cat "$l" 2>/dev/null; echo '${entry}'; } > "$l.adv26" && mv "$l.adv26" "$l"`);
  assert.equal(add.status, 0, `listing the link (test setup): ${add.stderr}`);
  cleanup.push(() => underListLock(`l=${LIST_DIR}/known-state-dirs; grep -vxF '${entry}' "$l" > "$l.adv26"; mv "$l.adv26" "$l"`));
  const r = await runMcpcell(['run', '--isolate', '--relay=off', '--read', victim, '--', '/bin/cat', `${victim}/f`]);
  assert.equal(r.code, 0, `root's --read ${victim} was refused by another account's symlink:\n${r.stderr.slice(-800)}`);
  assert.match(r.stdout, /ADV26-ROOT-DATA/);
});
