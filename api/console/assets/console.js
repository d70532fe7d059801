// netintel console: the pages call /console/api/* on their own origin and
// draw every chart as inline SVG. No library, nothing from another host.
"use strict";

const $ = (id) => document.getElementById(id);
const NS = "http://www.w3.org/2000/svg";

// el builds an element: el("td", {class: "num"}, "text", child, ...).
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids) {
    if (k === null || k === undefined) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

function svg(tag, attrs, ...kids) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}

function fill(tbody, rows, cols, emptyText) {
  tbody.replaceChildren();
  if (!rows.length) {
    tbody.append(el("tr", {}, el("td", {class: "empty", colspan: String(cols)}, emptyText)));
    return;
  }
  for (const r of rows) tbody.append(r);
}

const nf = new Intl.NumberFormat();
const num = (n) => (n === null || n === undefined ? "–" : nf.format(n));
function bytes(n) {
  if (n === null || n === undefined) return "–";
  const u = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(n < 10 ? 1 : 0) : n) + " " + u[i];
}
function rate(n) {
  if (n >= 1000) return nf.format(Math.round(n));
  return n >= 10 ? n.toFixed(0) : n.toFixed(1);
}
function when(t) {
  if (!t) return null;
  const d = typeof t === "number" ? new Date(t * 1000) : new Date(t);
  return isNaN(d) || d.getTime() <= 0 ? null : d;
}
function ago(t) {
  const d = when(t);
  if (!d) return "never";
  let s = (Date.now() - d.getTime()) / 1000;
  const future = s < 0;
  s = Math.abs(s);
  let v;
  if (s < 60) v = Math.round(s) + " s";
  else if (s < 3600) v = Math.round(s / 60) + " min";
  else if (s < 86400 * 2) v = Math.round(s / 3600) + " h";
  else v = Math.round(s / 86400) + " days";
  return future ? "in " + v : v + " ago";
}
function stamp(t) {
  const d = when(t);
  return d ? d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC") : "–";
}
// timeCell shows a relative time with the exact one on hover.
function timeCell(t, cls) {
  return el("td", {class: cls, title: stamp(t)}, when(t) ? ago(t) : "never");
}
function badge(text, kind, title) {
  return el("span", {class: "badge " + (kind || ""), title: title}, text);
}
function showError(box, msg) {
  if (!msg) { box.classList.add("hidden"); box.textContent = ""; return; }
  box.textContent = msg;
  box.classList.remove("hidden");
}

// api fetches a console JSON route; it throws an Error carrying the
// server's message for any answer but 200.
async function api(path) {
  const res = await fetch("/console/api/" + path, {headers: {Accept: "application/json"}, credentials: "same-origin"});
  if (res.headers.get("X-Console-Access") === "key") $("signout").classList.remove("hidden");
  let body = null;
  try { body = await res.json(); } catch (e) { body = null; }
  if (!res.ok) {
    const msg = body && body.error ? body.error.message : "HTTP " + res.status;
    const err = new Error(msg);
    err.status = res.status;
    throw err;
  }
  return body;
}

// ---------- charts ----------

// lineChart draws series [{name, points: [{x: Date, y: Number}]}] into
// box as an SVG with gridlines, axis labels, a legend and hover titles.
function lineChart(box, series, opts) {
  opts = opts || {};
  box.replaceChildren();
  const all = series.flatMap((s) => s.points);
  if (!all.length) {
    box.append(el("div", {class: "chart-empty"}, opts.empty || "No data yet."));
    return;
  }
  const W = 640, H = 220, L = 52, R = 14, T = 12, B = 28;
  let x0 = Math.min(...all.map((p) => p.x.getTime()));
  let x1 = Math.max(...all.map((p) => p.x.getTime()));
  if (x0 === x1) { x0 -= 3600e3; x1 += 3600e3; }
  // Four gridline steps of a round size.
  const y1 = 4 * niceCeil(Math.max(...all.map((p) => p.y), opts.minMax || 4) / 4);
  const sx = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
  const sy = (y) => T + (1 - y / y1) * (H - T - B);
  const g = svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": opts.label || "chart"});
  for (let i = 0; i <= 4; i++) {
    const y = (y1 * i) / 4;
    g.append(svg("line", {class: "grid-line", x1: L, x2: W - R, y1: sy(y), y2: sy(y)}));
    g.append(svg("text", {class: "axis-label", x: L - 8, y: sy(y) + 4, "text-anchor": "end"}, (opts.yFormat || shortNum)(y)));
  }
  const ticks = 4;
  for (let i = 0; i <= ticks; i++) {
    const x = x0 + ((x1 - x0) * i) / ticks;
    g.append(svg("text", {class: "axis-label", x: sx(x), y: H - 8, "text-anchor": i === 0 ? "start" : i === ticks ? "end" : "middle"},
      timeLabel(new Date(x), x1 - x0)));
  }
  series.forEach((s, i) => {
    const cls = "s" + (i + 1);
    const pts = s.points.slice().sort((a, b) => a.x - b.x);
    if (pts.length > 1) {
      const d = pts.map((p, j) => (j ? "L" : "M") + sx(p.x.getTime()).toFixed(1) + " " + sy(p.y).toFixed(1)).join(" ");
      g.append(svg("path", {class: "series " + cls, d}));
    }
    if (pts.length <= 60) {
      for (const p of pts) {
        const c = svg("circle", {class: "dot " + cls, cx: sx(p.x.getTime()), cy: sy(p.y), r: pts.length > 1 ? 3 : 5});
        c.append(svg("title", {}, `${s.name}: ${(opts.yFormat || shortNum)(p.y)} at ${stamp(p.x)}`));
        g.append(c);
      }
    }
  });
  box.append(g);
  const legend = el("div", {class: "legend"});
  series.forEach((s, i) => {
    const last = s.points.length ? s.points[s.points.length - 1].y : null;
    legend.append(el("span", {}, el("span", {class: "swatch k" + (i + 1)}), s.name + (last === null ? "" : " · " + (opts.yFormat || shortNum)(last))));
  });
  box.append(legend);
}

function niceCeil(v) {
  if (v <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
function shortNum(v) {
  if (v >= 1e6) return (v / 1e6).toFixed(v >= 1e7 ? 0 : 1) + "M";
  if (v >= 1e3) return (v / 1e3).toFixed(v >= 1e4 ? 0 : 1) + "k";
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}
function timeLabel(d, span) {
  const iso = d.toISOString();
  return span > 2 * 86400e3 ? iso.slice(5, 10) : iso.slice(11, span > 3600e3 ? 16 : 19);
}

// ---------- IP lookup ----------

const classTitles = {vpn: "VPN", proxy: "Proxy", tor: "Tor exit", relay: "Relay", hosting: "Hosting", cdn: "CDN", residential_proxy: "Residential proxy"};
const sevKind = {critical: "bad", high: "bad", medium: "warn", low: "info", none: ""};

async function lookup(ip) {
  ip = ip.trim();
  if (!ip) return;
  $("ip-input").value = ip;
  if (location.hash !== "#lookup/" + ip) history.replaceState(null, "", "#lookup/" + ip);
  $("ip-submit").disabled = true;
  showError($("ip-error"), "");
  try {
    const res = await api("ip/" + encodeURIComponent(ip));
    renderLookup(res);
  } catch (e) {
    $("ip-result").classList.add("hidden");
    showError($("ip-error"), e.status === 404 ? "Nothing is known about " + ip + " in the latest snapshot." : e.message);
  } finally {
    $("ip-submit").disabled = false;
  }
}

function renderLookup(res) {
  const r = res.lookup, x = res.record;
  $("ip-result").classList.remove("hidden");
  $("ip-addr").textContent = r.ip;
  $("ip-found").replaceChildren(badge(r.found ? "known" : "unknown", r.found ? "good" : ""));
  const chips = $("ip-classes");
  chips.replaceChildren();
  for (const c of r.classifications || []) chips.append(el("span", {class: "chip " + c, "data-class": c}, classTitles[c] || c));
  if (!(r.classifications || []).length) chips.append(el("span", {class: "muted"}, "No classification"));
  const facts = $("ip-facts");
  facts.replaceChildren();
  const fact = (k, v) => { if (v !== null && v !== undefined && v !== "") facts.append(el("dt", {}, k), el("dd", {}, v)); };
  fact("Provider", r.provider || "unknown");
  if (r.confidence !== undefined) fact("Confidence", Math.round(r.confidence * 100) + "%");
  fact("First seen", r.first_seen ? stamp(r.first_seen) : null);
  fact("Last seen", r.last_seen ? ago(r.last_seen) + " (" + stamp(r.last_seen) + ")" : null);
  if (x) fact("Snapshot", x.snapshot_date);
  if (x && x.sources.length) fact("Sources", x.sources.join(", "));

  const af = $("ip-attr-facts");
  af.replaceChildren();
  const afact = (k, v) => { if (v) af.append(el("dt", {}, k), el("dd", {}, v)); };
  afact("ASN", x && x.asn ? "AS" + x.asn : "unknown");
  afact("Network", x && x.network ? x.network : null);
  const place = [r.city, r.region, r.country].filter(Boolean).join(", ");
  afact("Place", place || "unknown");
  const claims = new Map();
  const addClaim = (a) => { const k = a.org_name + "|" + a.signal_source; if (!claims.has(k)) claims.set(k, a); };
  if (x) x.attributions.forEach(addClaim);
  for (const a of r.assets || []) (a.attributions || []).forEach(addClaim);
  fill($("ip-claims"), [...claims.values()].map((a) => el("tr", {},
    el("td", {}, a.org_name), el("td", {}, a.signal_source), el("td", {class: "num"}, Math.round(a.signal_confidence * 100) + "%"),
    timeCell(a.observed_at))), 4, "No claims about this address.");

  const assets = r.assets || [];
  $("ip-asset-count").textContent = assets.length ? "(" + assets.length + ")" : "";
  fill($("ip-assets"), assets.map((a) => {
    const s = a.cve_summary;
    const cv = el("td", {});
    if (s && s.total_count) {
      cv.append(badge(s.total_count + " CVE" + (s.total_count > 1 ? "s" : ""), sevKind[s.max_severity_rating] || ""));
      if (s.kev_count) cv.append(badge(s.kev_count + " KEV", "bad", "in CISA's Known Exploited Vulnerabilities"));
    } else cv.append(el("span", {class: "muted"}, "none"));
    return el("tr", {},
      el("td", {class: "num"}, a.port), el("td", {}, a.protocol_family), el("td", {}, a.vendor || "–"), el("td", {}, a.product || "–"),
      el("td", {}, a.exact_version || a.version_band || "–"), el("td", {}, badge(a.confidence_band, a.confidence_band === "high" ? "good" : "")),
      cv, timeCell(a.first_seen), timeCell(a.last_seen));
  }), 9, "No services seen on this address.");

  const cves = [];
  for (const a of assets) for (const c of a.cves || []) cves.push({a, c});
  cves.sort((p, q) => (q.c.kev_added_at ? 1 : 0) - (p.c.kev_added_at ? 1 : 0) || (q.c.severity_score || 0) - (p.c.severity_score || 0));
  $("ip-cve-count").textContent = cves.length ? "(" + cves.length + ")" : "";
  fill($("cve-table"), cves.map(({a, c}) => el("tr", {"data-cve": c.cve_id},
    el("td", {class: "mono"}, el("a", {href: "https://nvd.nist.gov/vuln/detail/" + encodeURIComponent(c.cve_id), rel: "noreferrer noopener", target: "_blank"}, c.cve_id)),
    el("td", {class: "num"}, a.port),
    el("td", {}, c.severity_rating ? badge(c.severity_rating, sevKind[c.severity_rating]) : "–"),
    el("td", {class: "num", title: c.cvss_version ? "CVSS " + c.cvss_version : null}, c.severity_score === null ? "–" : c.severity_score.toFixed(1)),
    el("td", {class: "num", title: c.epss_percentile === null ? null : "percentile " + (c.epss_percentile * 100).toFixed(1)},
      c.epss_score === null ? "–" : (c.epss_score * 100).toFixed(2) + "%"),
    el("td", {}, c.kev_added_at ? badge("KEV", "bad", "added " + c.kev_added_at) : el("span", {class: "muted"}, "no")),
    el("td", {}, c.detection_confidence), el("td", {}, c.source))), 8, "No CVEs matched.");
}

// loadExamples offers a few addresses the snapshot knows.
async function loadExamples() {
  try {
    const res = await api("examples");
    const box = $("ip-examples");
    box.replaceChildren();
    if (!res.addresses.length) return;
    box.append("Try: ");
    for (const ip of res.addresses) box.append(el("a", {href: "#lookup/" + ip}, ip));
  } catch (e) {
    // No examples: the form works without them.
  }
}

// ---------- snapshots ----------

async function loadSnapshots() {
  try {
    const res = await api("snapshots");
    showError($("snap-error"), "");
    const snaps = res.snapshots;
    const latest = snaps.find((s) => s.latest);
    $("snap-stats").replaceChildren(
      stat("Latest", latest ? latest.snapshot_date : "none", latest ? "built " + ago(latest.build_time) : "no snapshot published yet"),
      stat("Records", latest ? num(latest.hosts + latest.ranges) : "–", latest ? num(latest.hosts) + " hosts, " + num(latest.ranges) + " ranges" : ""),
      stat("Builds kept", num(snaps.length), new Set(snaps.map((s) => s.snapshot_date)).size + " dates"),
      stat("Stored", bytes(snaps.reduce((n, s) => n + s.size, 0)), "all builds' files"));
    const rows = [];
    for (const s of snaps) {
      const open = el("button", {class: "ghost", type: "button", "aria-expanded": "false"}, s.files.length + " files");
      const tr = el("tr", {"data-date": s.snapshot_date},
        el("td", {}, s.snapshot_date, " ", s.latest ? badge("latest", "good") : null),
        el("td", {class: "mono"}, s.build_id || "(old layout)"),
        timeCell(s.build_time), el("td", {class: "num"}, num(s.hosts)), el("td", {class: "num"}, num(s.ranges)),
        el("td", {class: "num"}, open), el("td", {class: "num"}, bytes(s.size)),
        el("td", {}, el("a", {href: s.sums_url}, "SHA256SUMS")));
      const sub = el("tr", {class: "sub hidden"}, el("td", {colspan: "8"}, filesTable(s.files)));
      open.addEventListener("click", () => {
        const hid = sub.classList.toggle("hidden");
        open.setAttribute("aria-expanded", String(!hid));
      });
      rows.push(tr, sub);
    }
    fill($("snap-table"), rows, 8, "No snapshot has been published yet.");
  } catch (e) {
    showError($("snap-error"), e.message);
  }
}

function filesTable(files) {
  return el("table", {},
    el("thead", {}, el("tr", {}, ...["File", "Audience", "Format", "Rows", "Size", "SHA-256"].map((h) => el("th", {class: h === "Rows" || h === "Size" ? "num" : null}, h)))),
    el("tbody", {}, ...files.map((f) => el("tr", {},
      el("td", {}, el("a", {href: f.url, download: f.name}, f.name)), el("td", {}, badge(f.audience, f.audience === "enterprise" ? "info" : "")),
      el("td", {}, f.format), el("td", {class: "num"}, num(f.rows)), el("td", {class: "num"}, bytes(f.size)),
      el("td", {class: "mono", title: f.sha256}, f.sha256.slice(0, 16) + "…")))));
}

function stat(label, value, sub) {
  return el("div", {class: "stat"}, el("div", {class: "label"}, label), el("div", {class: "value"}, value), el("div", {class: "sub"}, sub || ""));
}

// ---------- TLD status ----------

let tldResults = [];
const tldType = (t) => (t.startsWith("xn--") ? "IDN" : t.length === 2 ? "country code" : "generic");

// loadTLD refreshes the progress; the results (the whole root zone) are
// fetched on the first load and again only when a new check was published.
let tldPublished = null;
async function loadTLD(withTable) {
  try {
    let res = await api(withTable ? "tld" : "tld?results=false");
    const pubAt = res.published ? res.published.last_update : 0;
    if (!withTable && pubAt !== tldPublished) {
      res = await api("tld");
      withTable = true;
    }
    tldPublished = pubAt;
    showError($("tld-error"), "");
    const p = res.progress;
    const kind = {running: "info", completed: "good", failed: "bad", idle: ""}[p.status] || "";
    $("tld-status").replaceChildren(badge(p.status, kind));
    $("tld-step").textContent = p.current_step || "";
    const pct = p.total_tlds ? Math.round((100 * p.processed_tlds) / p.total_tlds) : p.status === "completed" ? 100 : 0;
    $("tld-bar").style.width = pct + "%";
    $("tld-progress").textContent = p.total_tlds ? num(p.processed_tlds) + " / " + num(p.total_tlds) + " TLDs (" + pct + "%)" : "";
    const f = $("tld-facts");
    f.replaceChildren();
    const pub = res.published;
    f.append(el("dt", {}, "Published"), el("dd", {title: pub ? stamp(pub.last_update) : null}, pub ? ago(pub.last_update) : "never"));
    f.append(el("dt", {}, "TLDs in results"), el("dd", {}, pub ? num(pub.results_available) : "–"));
    f.append(el("dt", {}, "Stealth RDAP"), el("dd", {}, pub ? num(pub.stealth_count) + (pub.stealth_count === 1 ? " TLD" : " TLDs") : "–"));
    if (withTable) {
      tldResults = res.results;
      renderTLDTable();
    }
  } catch (e) {
    showError($("tld-error"), e.message);
  }
}

async function loadTLDHistory() {
  try {
    const res = await api("tld/history");
    const pts = (k) => res.runs.map((r) => ({x: new Date(r.date), y: r[k]}));
    lineChart($("tld-chart"), [
      {name: "RDAP working", points: pts("rdap")},
      {name: "WHOIS answers", points: pts("whois")},
      {name: "Stealth RDAP", points: pts("stealth")},
      {name: "TLDs checked", points: pts("total")},
    ], {label: "TLD coverage over runs", empty: "No published run yet."});
  } catch (e) {
    $("tld-chart").replaceChildren(el("div", {class: "chart-empty"}, e.message));
  }
}

// The changes between the kept runs (the history's /api/changes), newest first.
async function loadTLDChanges() {
  try {
    const res = await api("tld/changes");
    const val = (v) => (v === null || v === undefined ? "–" : v);
    fill($("tld-changes"), res.changes.map((c) => el("tr", {"data-tld": c.tld, "data-change": c.change},
      el("td", {class: "mono", title: c.run_id}, stamp(c.time)), el("td", {class: "mono"}, "." + c.tld),
      el("td", {}, c.change.replaceAll("_", " ")), el("td", {class: "mono wrap"}, val(c.from)), el("td", {class: "mono wrap"}, val(c.to)))),
    5, res.runs < 2 ? "Changes show once two runs are kept." : "No change between the kept runs.");
  } catch (e) {
    fill($("tld-changes"), [], 5, e.message);
  }
}

const tldFilters = {
  "all": () => true,
  "rdap-working": (r) => r.rdap_working === true,
  "rdap-broken": (r) => r.rdap_supported && r.rdap_working !== true,
  "no-rdap": (r) => !r.rdap_supported,
  "whois": (r) => r.whois_available === true,
  "no-whois": (r) => r.whois_available !== true,
  "stealth": (r) => r.stealth_rdap,
};

function renderTLDTable() {
  const q = $("tld-filter").value.trim().toLowerCase().replace(/^\./, "");
  const pick = tldFilters[$("tld-kind").value] || tldFilters.all;
  const rows = tldResults.filter((r) => pick(r) && (!q || r.tld.includes(q) ||
    (r.whois_server || "").toLowerCase().includes(q) || (r.working_url || "").toLowerCase().includes(q) ||
    r.stealth_urls.some((u) => u.toLowerCase().includes(q))));
  $("tld-count").textContent = num(rows.length) + " of " + num(tldResults.length) + " TLDs";
  const yes = (v, good, bad) => v === true ? badge(good, "good") : v === false ? badge(bad, "bad") : badge("not tested", "");
  fill($("tld-table"), rows.slice(0, 2000).map((r) => el("tr", {"data-tld": r.tld},
    el("td", {class: "mono"}, "." + r.tld), el("td", {class: "muted"}, tldType(r.tld)),
    el("td", {}, r.rdap_supported ? yes(r.rdap_working, "working", "failing") : badge("not listed", "")),
    el("td", {class: "mono"}, r.working_url || "–"), el("td", {class: "mono"}, r.whois_server || "–"),
    el("td", {}, r.whois_server ? yes(r.whois_available, "answers", "silent") : badge("no server", "")),
    el("td", {class: "mono wrap"}, r.stealth_rdap ? r.stealth_urls.join(" ") : "–"))),
  7, tldResults.length ? "No TLD matches the filter." : "No TLD check has been published yet.");
}

// ---------- pipeline ----------

async function loadPipeline() {
  try {
    const res = await api("pipeline");
    showError($("pipe-error"), "");
    const last = res.rates.length ? res.rates[res.rates.length - 1] : null;
    const lag = res.consumers.reduce((n, c) => n + c.num_pending + c.num_ack_pending, 0);
    const failing = res.jobs.filter((j) => j.last_failure && (!j.last_success || new Date(j.last_failure) > new Date(j.last_success)));
    $("pipe-stats").replaceChildren(
      stat("Ingest", last ? rate(last.ingest_per_second) + "/s" : "–", "observations stored"),
      stat("Enrich", last ? rate(last.enrich_per_second) + "/s" : "–", "observations settled"),
      stat("Consumer lag", num(lag), "pending + awaiting ack"),
      stat("Dead letters", res.dead_letters ? num(res.dead_letters.count) : "–", res.dead_letters ? num(res.dead_letters.total) + " ever" : "no dead-letter stream"),
      stat("Jobs failing", num(failing.length), res.jobs.length + " scheduled"));
    const pts = (k) => res.rates.map((p) => ({x: new Date(p.t), y: p[k]}));
    const span = res.interval_seconds ? "Sampling every " + res.interval_seconds + " s; the first point comes after two samples." : "Not sampled in this process.";
    lineChart($("rate-chart"), [{name: "Ingest/s", points: pts("ingest_per_second")}, {name: "Enrich/s", points: pts("enrich_per_second")}],
      {label: "ingest and enrich rates", yFormat: (v) => rate(v), empty: span});
    lineChart($("backlog-chart"), [{name: "Backlog", points: pts("backlog")}], {label: "enrich backlog", empty: span, minMax: 4, yFormat: (v) => shortNum(Math.round(v))});
    fill($("jobs-table"), res.jobs.map((j) => {
      const bad = failing.includes(j);
      return el("tr", {"data-job": j.name},
        el("td", {class: "mono"}, j.name), el("td", {class: "mono"}, j.spec || "(other process)"),
        timeCell(j.last_success),
        el("td", {title: j.last_error || null}, j.last_failure ? ago(j.last_failure) : "never", bad && j.last_error ? el("div", {class: "muted wrap"}, j.last_error) : null),
        el("td", {}, j.last_start && !j.running ? j.last_duration_seconds.toFixed(1) + " s" : "–"),
        j.next ? timeCell(j.next) : el("td", {class: "muted"}, "–"),
        el("td", {}, j.running ? badge("running", "info") : bad ? badge("failing", "bad") : j.last_success ? badge("ok", "good") : badge("not run yet", "")));
    }), 7, "No job is scheduled (schedules in pipeline.yaml).");
    fill($("consumers-table"), res.consumers.map((c) => el("tr", {},
      el("td", {}, c.stream), el("td", {class: "mono"}, c.name),
      el("td", {class: "num"}, c.num_pending ? badge(num(c.num_pending), c.num_pending > 10000 ? "warn" : "info") : "0"),
      el("td", {class: "num"}, num(c.num_ack_pending)), el("td", {class: "num"}, num(c.num_redelivered)),
      el("td", {class: "num"}, num(c.delivered_stream_seq)), timeCell(c.last_active))), 7, "No consumer.");
    fill($("streams-table"), res.streams.map((s) => el("tr", {},
      el("td", {}, s.name), el("td", {class: "mono"}, s.subjects.join(" ")), el("td", {class: "num"}, num(s.messages)), el("td", {class: "num"}, bytes(s.bytes)))),
    4, "No stream.");
    const dl = res.dead_letters;
    $("dead-count").textContent = dl ? "(" + num(dl.count) + ")" : "";
    fill($("dead-table"), dl ? dl.recent.map((d) => el("tr", {},
      timeCell(d.time), el("td", {class: "mono"}, d.original_subject || d.subject), el("td", {class: "wrap"}, d.error || "–"))) : [],
    3, "No dead letters.");
  } catch (e) {
    showError($("pipe-error"), e.message);
  }
}

// ---------- navigation ----------

let timer = null;
function show() {
  const [view, arg] = (location.hash.slice(1) || "lookup").split("/");
  const name = ["lookup", "snapshots", "tld", "pipeline"].includes(view) ? view : "lookup";
  for (const s of document.querySelectorAll("section.view")) s.classList.toggle("active", s.id === "view-" + name);
  for (const a of document.querySelectorAll("#tabs a")) a.classList.toggle("active", a.dataset.view === name);
  clearInterval(timer);
  timer = null;
  if (name === "lookup" && arg) lookup(decodeURIComponent(arg));
  if (name === "snapshots") loadSnapshots();
  if (name === "tld") {
    loadTLD(true);
    loadTLDHistory();
    loadTLDChanges();
    timer = setInterval(() => loadTLD(false), 3000);
  }
  if (name === "pipeline") {
    loadPipeline();
    timer = setInterval(loadPipeline, 5000);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("ip-form").addEventListener("submit", (e) => { e.preventDefault(); lookup($("ip-input").value); });
  loadExamples();
  $("tld-filter").addEventListener("input", renderTLDTable);
  $("tld-kind").addEventListener("change", renderTLDTable);
  window.addEventListener("hashchange", show);
  show();
});
