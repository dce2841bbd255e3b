// A GitHub classic token the secret scan reports: "ghp_", 30 random base62
// characters and GitHub's checksum (github.blog, 2021-04-05: the CRC-32 of
// the 30 characters in 6 base62 digits; the scan ignores a token without it).

import { randomInt } from 'node:crypto';

const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function crc32(text) {
  let c = 0xffffffff;
  for (const b of Buffer.from(text)) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return (c ^ 0xffffffff) >>> 0;
}

function base62(n, width) {
  let out = '';
  for (let i = 0; i < width; i++, n = Math.floor(n / 62)) out = B62[n % 62] + out;
  return out;
}

/** A fresh random token with a valid checksum. */
export function newGithubToken() {
  const body = Array.from({ length: 30 }, () => B62[randomInt(B62.length)]).join('');
  return `ghp_${body}${base62(crc32(body), 6)}`;
}
