// A fetch MCP server with a proxy-aware HTTP client, the way curl, requests
// and most SDKs behave: it honours HTTP_PROXY/HTTPS_PROXY (and the lower-case
// forms) and NO_PROXY. http:// URLs go to the proxy as absolute-form requests
// (plain HTTP forwarding), https:// URLs through a CONNECT tunnel; mode
// "connect" tunnels http:// too (as undici's ProxyAgent does), mode "forward"
// forces forwarding, mode "direct" ignores the proxy.

import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';

import { serveFetchTool } from './fetch_common.mjs';

/** A safety net so a silently dropped connection ends the call; not a measurement. */
const GUARD_MS = 20_000;

function env(name) {
  return process.env[name] ?? process.env[name.toLowerCase()] ?? '';
}

/** NO_PROXY as curl reads it: "*", exact names, and domain suffixes (".x" or "x" covers its subdomains). */
function bypassesProxy(hostname) {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  for (let entry of env('NO_PROXY').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean)) {
    if (entry === '*') return true;
    entry = entry.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
    if (entry.startsWith('.')) entry = entry.slice(1);
    if (host === entry || host.endsWith(`.${entry}`)) return true;
  }
  return false;
}

function defaultPort(url) {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** Resolves with {status, body} of one request made with `options` (plus a guard). */
function request(options) {
  return new Promise((resolve, reject) => {
    const req = http.request({ ...options, timeout: GUARD_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${GUARD_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Opens a CONNECT tunnel to host:port through the proxy. Resolves to
 * {socket} on 200, or {status, body} with the proxy's refusal.
 */
function connectTunnel(proxy, host, port) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(proxy.port || 80), proxy.hostname);
    const target = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    let head = Buffer.alloc(0);
    let refused = null;
    const guard = setTimeout(() => sock.destroy(new Error(`proxy silent for ${GUARD_MS} ms`)), GUARD_MS);
    const onData = (d) => {
      head = Buffer.concat([head, d]);
      if (refused) return;
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = head.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(lines[0].split(' ')[1]);
      if (status === 200) {
        clearTimeout(guard);
        // Hand the socket over paused, with any bytes after the answer put
        // back: they belong to whoever talks through the tunnel.
        sock.off('data', onSocketData);
        sock.off('end', onEnd);
        sock.pause();
        const rest = head.subarray(end + 4);
        if (rest.length) sock.unshift(rest);
        resolve({ socket: sock });
        return;
      }
      // A refusal: read its body to the end (Content-Length or close).
      const lengthLine = lines.find((l) => /^content-length:/i.test(l));
      refused = { status, end, length: lengthLine ? Number(lengthLine.split(':')[1]) : null };
      finishRefusal();
    };
    const finishRefusal = (closed = false) => {
      if (!refused) return;
      const body = head.subarray(refused.end + 4);
      if (closed || (refused.length !== null && body.length >= refused.length)) {
        clearTimeout(guard);
        sock.destroy();
        resolve({ status: refused.status, body: body.toString('utf8') });
      }
    };
    const onSocketData = (d) => {
      onData(d);
      finishRefusal();
    };
    const onEnd = () => {
      if (refused) return finishRefusal(true);
      clearTimeout(guard);
      reject(new Error(`proxy closed the connection before answering CONNECT ${target}`));
    };
    sock.on('data', onSocketData);
    sock.on('end', onEnd);
    sock.on('error', (e) => {
      clearTimeout(guard);
      reject(e);
    });
    sock.on('connect', () => sock.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
  });
}

async function fetchUrl(args) {
  const url = new URL(args.url);
  const headers = { ...(args.headers ?? {}), Connection: 'close' };
  const port = defaultPort(url);
  const proxyText = url.protocol === 'https:' ? env('HTTPS_PROXY') : env('HTTP_PROXY');
  let mode = args.mode ?? 'auto';
  if (mode === 'auto') {
    if (!proxyText || bypassesProxy(url.hostname)) mode = 'direct';
    else mode = url.protocol === 'https:' ? 'connect' : 'forward';
  }
  if (mode !== 'direct' && !proxyText) throw new Error(`mode ${mode} needs HTTP_PROXY/HTTPS_PROXY, which is not set`);
  const path = url.pathname + url.search;

  if (mode === 'direct') {
    if (url.protocol === 'https:') throw new Error('direct https is not implemented by this test server');
    const r = await request({ host: url.hostname.replace(/^\[|\]$/g, ''), port, path, headers });
    return { ...r, via: 'direct' };
  }
  const proxy = new URL(proxyText);
  if (mode === 'forward') {
    const r = await request({ host: proxy.hostname, port: Number(proxy.port || 80), path: url.href,
      headers: { ...headers, Host: url.host } });
    return { ...r, via: 'forward' };
  }
  const tunnel = await connectTunnel(proxy, url.hostname.replace(/^\[|\]$/g, ''), port);
  if (!tunnel.socket) return { status: tunnel.status, body: tunnel.body, via: 'connect-refused' };
  let socket = tunnel.socket;
  if (url.protocol === 'https:') socket = tls.connect({ socket, servername: url.hostname });
  const r = await request({ createConnection: () => {
    setImmediate(() => socket.resume());
    return socket;
  }, host: url.hostname, port, path,
    headers: { ...headers, Host: url.host } });
  return { ...r, via: 'connect' };
}

await serveFetchTool('fetch-proxy-aware', 'GET a URL through HTTP_PROXY/HTTPS_PROXY (NO_PROXY honoured)', fetchUrl);
