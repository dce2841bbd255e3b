// usage: node feeder.mjs FIFO EVIL_AT(comma list) EVIL_TEXT BENIGN_TEXT LOG
import fs from 'node:fs';
const [fifo, at, evil, benign, log] = process.argv.slice(2);
const evilAt = new Set(at.split(',').filter(Boolean).map(Number));
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const tryOpen = () => { try { return fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK); } catch { return -1; } };
let n = 0;
for (;;) {
  let fd;
  while ((fd = tryOpen()) < 0) sleep(5);
  n++;
  const isEvil = evilAt.has(n);
  fs.appendFileSync(log, `${n} ${isEvil ? 'evil' : 'benign'}\n`);
  try { fs.writeSync(fd, isEvil ? evil : benign); } catch {}
  fs.closeSync(fd);
  // wait for this reader to go: no reader = ENXIO
  for (;;) { const g = tryOpen(); if (g < 0) break; fs.closeSync(g); sleep(5); }
}
