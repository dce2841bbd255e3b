// usage: node adv15_symlink_flipper.mjs LINK TARGET_A TARGET_B
// Keeps replacing LINK (atomically, by rename) with a symlink to A, then B.
import fs from 'node:fs';
const [link, a, b] = process.argv.slice(2);
const tmp = `${link}.flip`;
for (let i = 0; ; i++) {
  try { fs.rmSync(tmp, { force: true }); fs.symlinkSync(i % 2 ? b : a, tmp); fs.renameSync(tmp, link); } catch {}
}
