// ots.js: the one-time secret client in the page (spec/one-time-secrets.md).
// All crypto happens here with WebCrypto; the key comes from the URL
// fragment and is never sent. Exposed as window.OTS for the page scripts.
"use strict";
window.OTS = (() => {
  const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const RANDOM_KEY_LEN = 20, ID_LEN = 22, IV_LEN = 12;
  const CHUNK = 4194304, MAX_CHUNKS = 25;
  const MAX_ENCRYPTED_FILE = 100 * 1024 * 1024 - 64 * 1024;
  const SRC = "netintel-web";
  const enc = new TextEncoder(), dec = new TextDecoder("utf-8", { fatal: true });

  class OTSError extends Error {
    // kind: broken-link, wrong-key, no-message, rate-limited, server, decrypt, invalid, unsupported
    constructor(kind, message) { super(message); this.kind = kind; }
  }

  function randomString(n) {
    const b = crypto.getRandomValues(new Uint8Array(n));
    let s = "";
    for (const x of b) s += ALPHABET[x % 64];
    return s;
  }
  const isAlphabet = (s) => /^[A-Za-z0-9_-]*$/.test(s);

  function b64url(bytes) {
    let bin = "";
    for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function unb64url(s) {
    if (!isAlphabet(s)) throw new OTSError("decrypt", "bad base64url");
    const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");

  // deriveKeys: HKDF-SHA256 over fullSecretKey (passphrase + randomKey),
  // salt "onetimelink:v2"; info "encrypt" gives the AES key, "auth" the readToken.
  async function deriveKeys(fullSecretKey) {
    const ikm = await crypto.subtle.importKey("raw", enc.encode(fullSecretKey), "HKDF", false, ["deriveBits"]);
    const bits = (info) => crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt: enc.encode("onetimelink:v2"), info: enc.encode(info) }, ikm, 256);
    const [encBits, authBits] = await Promise.all([bits("encrypt"), bits("auth")]);
    const key = await crypto.subtle.importKey("raw", encBits, "AES-GCM", false, ["encrypt", "decrypt"]);
    const readToken = hex(authBits);
    return { key, readToken, encHex: hex(encBits) };
  }
  async function readTokenHash(readToken) {
    return hex(await crypto.subtle.digest("SHA-256", enc.encode(readToken)));
  }

  async function seal(keys, plain) {
    const iv = crypto.getRandomValues(new Uint8Array(IV_LEN));
    const ct = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, keys.key, plain));
    return { iv, ct };
  }
  async function open(keys, iv, ct) {
    try {
      return new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv }, keys.key, ct));
    } catch (e) {
      throw new OTSError("decrypt", "cannot decrypt");
    }
  }

  async function encryptText(keys, text) {
    const { iv, ct } = await seal(keys, enc.encode(text));
    return b64url(iv) + "." + b64url(ct);
  }
  async function decryptText(keys, wire) {
    const dot = wire.indexOf(".");
    if (dot < 0) throw new OTSError("decrypt", "no dot in message");
    const iv = unb64url(wire.slice(0, dot)), ct = unb64url(wire.slice(dot + 1));
    if (iv.length !== IV_LEN || ct.length < 16) throw new OTSError("decrypt", "bad message");
    try {
      return dec.decode(await open(keys, iv, ct));
    } catch (e) {
      if (e instanceof OTSError) throw e;
      throw new OTSError("decrypt", "not UTF-8");
    }
  }

  // File plaintext: uint32_be(len(meta)) || meta JSON || bytes; wire: iv || ct || tag.
  function fileMeta(name, type, size) {
    return { name: String(name), type: type || "application/octet-stream", size };
  }
  async function encryptFile(keys, meta, bytes) {
    const mj = enc.encode(JSON.stringify(fileMeta(meta.name, meta.type, bytes.length)));
    const plain = new Uint8Array(4 + mj.length + bytes.length);
    new DataView(plain.buffer).setUint32(0, mj.length, false);
    plain.set(mj, 4);
    plain.set(bytes, 4 + mj.length);
    const { iv, ct } = await seal(keys, plain);
    const out = new Uint8Array(IV_LEN + ct.length);
    out.set(iv, 0);
    out.set(ct, IV_LEN);
    return out;
  }
  async function decryptFile(keys, blob) {
    if (blob.length < IV_LEN + 16) throw new OTSError("decrypt", "file too short");
    const plain = await open(keys, blob.subarray(0, IV_LEN), blob.subarray(IV_LEN));
    if (plain.length < 4) throw new OTSError("decrypt", "no meta length");
    const n = new DataView(plain.buffer, plain.byteOffset).getUint32(0, false);
    if (n > plain.length - 4) throw new OTSError("decrypt", "meta length out of range");
    let meta;
    try {
      meta = JSON.parse(dec.decode(plain.subarray(4, 4 + n)));
    } catch (e) {
      throw new OTSError("decrypt", "bad meta");
    }
    return { meta, data: plain.subarray(4 + n) };
  }

  // parseFragment: exactly 42 alphabet characters, randomKey then id.
  function parseFragment(hash) {
    const f = String(hash || "").replace(/^#/, "");
    if (f.length !== RANDOM_KEY_LEN + ID_LEN || !isAlphabet(f)) {
      throw new OTSError("broken-link", "This link is broken: the part after # must be exactly 42 letters, digits, - or _. Ask the sender for the full link.");
    }
    return { randomKey: f.slice(0, RANDOM_KEY_LEN), id: f.slice(RANDOM_KEY_LEN) };
  }
  function isLoopback(h) { return h === "127.0.0.1" || h === "localhost" || h === "[::1]"; }
  function parseLink(s) {
    let u;
    try { u = new URL(String(s).trim()); } catch (e) { throw new OTSError("broken-link", "not a URL"); }
    const frag = parseFragment(u.hash);
    const path = u.pathname.replace(/\/$/, "");
    const kind = path === "/v" ? "v" : path === "/f" ? "f" : "";
    if (!kind || u.search || u.username || u.password) throw new OTSError("broken-link", "path must be /v/ or /f/");
    if (u.protocol !== "https:" && !(u.protocol === "http:" && isLoopback(u.hostname))) {
      throw new OTSError("broken-link", "https only (plain http only on loopback)");
    }
    return { origin: u.origin, kind, ...frag };
  }
  const buildLink = (origin, kind, randomKey, id) => `${origin}/${kind}/#${randomKey}${id}`;

  // API calls go to the page's own origin, with ?src= on every request.
  function apiURL(origin, path, query) {
    const q = new URLSearchParams({ src: SRC, ...(query || {}) });
    return `${origin}/api/${path}?${q}`;
  }
  async function jsonOf(resp) {
    try { return await resp.json(); } catch (e) { throw new OTSError("server", `The server answered HTTP ${resp.status}.`); }
  }
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const backoff = (attempt) => { const d = Math.min(500 * 2 ** attempt, 15000); return d / 2 + Math.random() * d / 2; };
  const RETRIES = 6;

  const capsCache = new Map();
  async function checkHost(origin) {
    let caps = capsCache.get(origin);
    if (!caps) {
      const r = await fetch(apiURL(origin, "ss"), { method: "POST" });
      if (r.status === 429) throw new OTSError("rate-limited", "Too many requests: wait a minute and try again.");
      if (!r.ok) throw new OTSError("server", `The server answered HTTP ${r.status}.`);
      caps = await jsonOf(r);
      capsCache.set(origin, caps);
    }
    if (!Array.isArray(caps.saveSchemes) || !caps.saveSchemes.includes(3)) {
      throw new OTSError("unsupported", "This server is too old: it does not support save scheme 3.");
    }
  }

  function checkOptions(o) {
    const views = o.views === undefined ? 1 : Number(o.views);
    const duration = o.duration === undefined ? 86400 : Number(o.duration);
    if (!Number.isInteger(views) || views < 1 || views > 10) throw new OTSError("invalid", "Views must be 1 to 10.");
    if (!Number.isInteger(duration) || duration < 1 || duration > 2592000) throw new OTSError("invalid", "Expiry must be 1 second to 30 days.");
    return { views, duration, passphrase: o.passphrase || "" };
  }

  // postSave sends a whole save, retrying on 429 only, and returns newId.
  async function postSave(url, init) {
    for (let attempt = 0; ; attempt++) {
      const r = await fetch(url, { method: "POST", ...init() });
      if (r.status === 429 && attempt < RETRIES) { await sleep(backoff(attempt)); continue; }
      if (r.status === 429) throw new OTSError("rate-limited", "Too many requests: wait a minute and try again.");
      const j = await jsonOf(r);
      if (!r.ok || j.status !== "ok" || !isID(j.newId)) throw new OTSError("server", "The server refused the secret.");
      return j.newId;
    }
  }
  const isID = (s) => typeof s === "string" && s.length === ID_LEN && isAlphabet(s);

  async function createText(origin, text, opts) {
    if (!text) throw new OTSError("invalid", "Type a secret first.");
    const o = checkOptions(opts || {});
    await checkHost(origin);
    const randomKey = randomString(RANDOM_KEY_LEN);
    const keys = await deriveKeys(o.passphrase + randomKey);
    const body = JSON.stringify({ secretMessage: await encryptText(keys, text), readTokenHash: await readTokenHash(keys.readToken), v: 3, duration: o.duration, views: o.views });
    const id = await postSave(apiURL(origin, "saveSecret"), () => ({ headers: { "Content-Type": "application/json" }, body }));
    return buildLink(origin, "v", randomKey, id);
  }

  function fileForm(fields, bytes) {
    const fd = new FormData();
    for (const [k, v] of Object.entries(fields)) fd.append(k, String(v));
    fd.append("file", new Blob([bytes], { type: "application/octet-stream" }), "secret.bin");
    return fd;
  }

  // createFile: slices of 4 MiB above 4 MiB, each retried with backoff after
  // a network error, 408, 429, 5xx or 503 retry; a newId before the last
  // slice means an old host: send the whole file in one request.
  async function createFile(origin, file, opts, onProgress) {
    const o = checkOptions(opts || {});
    const bytes = new Uint8Array(await file.arrayBuffer());
    await checkHost(origin);
    const randomKey = randomString(RANDOM_KEY_LEN);
    const keys = await deriveKeys(o.passphrase + randomKey);
    const blob = await encryptFile(keys, { name: file.name, type: file.type }, bytes);
    if (blob.length > MAX_ENCRYPTED_FILE) throw new OTSError("invalid", "The file is too large (100 MiB at most).");
    const fields = { readTokenHash: await readTokenHash(keys.readToken), v: 3, duration: o.duration, views: o.views };
    const progress = onProgress || (() => {});
    const whole = async () => {
      progress(0, blob.length);
      const id = await postSave(apiURL(origin, "saveFile"), () => ({ body: fileForm(fields, blob) }));
      progress(blob.length, blob.length);
      return id;
    };
    let id;
    if (blob.length <= CHUNK) {
      id = await whole();
    } else {
      const n = Math.ceil(blob.length / CHUNK);
      if (n > MAX_CHUNKS) throw new OTSError("invalid", "The file is too large.");
      const u = randomString(22);
      for (let i = 0; i < n && !id; i++) {
        progress(i * CHUNK, blob.length);
        const got = await sendSlice(apiURL(origin, "saveFile", { u, i, n }), fields, blob.subarray(i * CHUNK, Math.min((i + 1) * CHUNK, blob.length)));
        if (got && i < n - 1) { id = await whole(); break; }
        if (got) id = got;
        else if (i === n - 1) throw new OTSError("server", "The server did not finish the upload.");
      }
      progress(blob.length, blob.length);
    }
    return buildLink(origin, "f", randomKey, id);
  }
  async function sendSlice(url, fields, bytes) {
    for (let attempt = 0; ; attempt++) {
      let r;
      try {
        r = await fetch(url, { method: "POST", body: fileForm(fields, bytes) });
      } catch (e) {
        if (attempt >= RETRIES) throw new OTSError("server", "Network error during the upload.");
        await sleep(backoff(attempt));
        continue;
      }
      if (r.status === 408 || r.status === 429 || r.status >= 500) {
        if (attempt >= RETRIES) throw new OTSError(r.status === 429 ? "rate-limited" : "server", `Upload failed (HTTP ${r.status}).`);
        await sleep(backoff(attempt));
        continue;
      }
      const j = await jsonOf(r);
      if (!r.ok || j.status !== "ok") throw new OTSError("server", "The server refused the file.");
      if (j.newId !== undefined && j.newId !== null && j.newId !== "0" && !isID(j.newId)) throw new OTSError("server", "Bad answer from the server.");
      return isID(j.newId) ? j.newId : "";
    }
  }

  function readFailure(status, j) {
    if (status === 429) return new OTSError("rate-limited", "Too many requests: wait a minute and try again.");
    if (j && j.status === "wrong key") return new OTSError("wrong-key", "This secret is protected by a passphrase. Enter it to open the secret.");
    if (j && j.status === "no message") return new OTSError("no-message", "This secret was already read, has expired, or never existed.");
    return new OTSError("server", `The server could not answer (HTTP ${status}).`);
  }

  // read posts get/getFile; retried only on 503 with status retry.
  async function read(origin, path, id, keys) {
    const body = JSON.stringify({ id, hashedKey: keys.readToken });
    for (let attempt = 0; ; attempt++) {
      const r = await fetch(apiURL(origin, path), { method: "POST", headers: { "Content-Type": "application/json" }, body });
      if (r.status === 503 && (r.headers.get("Content-Type") || "").startsWith("application/json")) {
        const j = await r.json().catch(() => ({}));
        if (j.status === "retry" && attempt < RETRIES) { await sleep(backoff(attempt)); continue; }
        throw readFailure(503, j);
      }
      return r;
    }
  }

  async function readText(link, passphrase) {
    const l = typeof link === "string" ? parseLink(link) : link;
    const keys = await deriveKeys((passphrase || "") + l.randomKey);
    const r = await read(l.origin, "get", l.id, keys);
    const j = r.status === 429 ? null : await jsonOf(r);
    if (r.status !== 200 || j.status !== "ok") throw readFailure(r.status, j);
    const text = await decryptText(keys, j.cryptedMessage);
    return { text, viewsLeft: j.viewsLeft, expiresIn: j.expiresIn };
  }

  async function readFile(link, passphrase) {
    const l = typeof link === "string" ? parseLink(link) : link;
    const keys = await deriveKeys((passphrase || "") + l.randomKey);
    const r = await read(l.origin, "getFile", l.id, keys);
    const ct = r.headers.get("Content-Type") || "";
    if (r.status !== 200 || !ct.startsWith("application/octet-stream")) {
      throw readFailure(r.status, r.status === 429 ? null : await r.json().catch(() => null));
    }
    const blob = new Uint8Array(await r.arrayBuffer());
    const { meta, data } = await decryptFile(keys, blob);
    const left = r.headers.get("X-Svc-Views-Left");
    return { meta, data, viewsLeft: left === null ? undefined : Number(left) };
  }

  return {
    ALPHABET, OTSError, randomString, b64url, unb64url, deriveKeys, readTokenHash,
    encryptText, decryptText, encryptFile, decryptFile, parseFragment, parseLink, buildLink,
    checkHost, createText, createFile, readText, readFile,
  };
})();
