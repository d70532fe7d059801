package ingest

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Censys reads Censys host records: the Search API v2 host view
// (`censys view IP`, GET /v2/hosts/IP: services[] with service_name,
// http.response, tls.certificates.leaf_data, banner_hex, software) and the
// Censys Platform's host asset (result.resource: services[] with
// protocol, cert.parsed, tls, endpoints[].http). The input is one JSON
// document or many (JSON lines, pretty-printed documents one after the
// other, or an array of hosts), each a host, an API response wrapping one
// ("result", "resource", "host_v1"), or a search page ("hits"); and the
// IPv4 dataset's documents of Search API v1 and the BigQuery export
// (scan_censys_legacy.go). Each
// service of a host is one service observation (docs/ingest-enrich.md).
func Censys(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("censys")
	// JSON lines (a bulk export) are read a line at a time; anything else
	// (a pretty-printed response, an array) whole, up to maxJSONFeed.
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := readFirstLine(br, opt.maxLine())
	if err != nil {
		return fmt.Errorf("read censys: %w", err)
	}
	r = io.MultiReader(bytes.NewReader(first), br)
	if t := bytes.TrimSpace(first); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return opt.lines(r, "censys", bad, func(n int, b []byte) error {
			if len(bytes.TrimSpace(b)) == 0 {
				return nil
			}
			return censysDocs(b, n, src, opt, emit, bad)
		})
	}
	data, err := readJSONFeed(r, "censys")
	if err != nil {
		return err
	}
	return censysDocs(data, 1, src, opt, emit, bad)
}

// readFirstLine returns the first line of br with its line end (at most
// max bytes of it: a longer line is not JSON lines anyway).
func readFirstLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if errors.Is(err, bufio.ErrBufferFull) && len(line) <= max {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		return line, nil
	}
}

// censysDocs reads the JSON documents of data, whose first line is line
// firstLine of the input (jsonWalk: a top-level array's hosts one by one;
// a document that does not parse is reported and reading resumes at the
// next line that starts one). Numbers stay json.Number.
func censysDocs(data []byte, firstLine int, src string, opt Options, emit Emit, bad func(LineError)) error {
	return jsonWalk{what: "censys", resync: true, values: true}.walk(data, firstLine, bad, func(line int, raw json.RawMessage, _ bool) error {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			bad(LineError{line, fmt.Errorf("json: %w", err)})
			return nil
		}
		hosts := censysHosts(doc)
		if len(hosts) == 0 {
			bad(LineError{line, errors.New(`not a Censys host: want "ip" and "services"`)})
			return nil
		}
		for _, h := range hosts {
			if err := censysHost(line, h, src, opt, emit, bad); err != nil {
				return err
			}
		}
		return nil
	})
}

// cmap is a decoded JSON object; cobj, carr, cstr and cstrs read its
// members as an object, an array, a string (or number) and strings.
type cmap = map[string]any

func cobj(v any) cmap {
	m, _ := v.(cmap)
	return m
}

func carr(v any) []any {
	a, _ := v.([]any)
	return a
}

func cstr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	}
	return ""
}

func cstrs(v any) []string {
	var out []string
	for _, e := range carr(v) {
		if s := cstr(e); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// path walks nested objects: cpath(m, "a", "b") is m["a"]["b"].
func cpath(m cmap, keys ...string) any {
	var v any = m
	for _, k := range keys {
		o := cobj(v)
		if o == nil {
			return nil
		}
		v = o[k]
	}
	return v
}

// censysHosts finds the host records of a document.
func censysHosts(doc any) []cmap {
	if a := carr(doc); a != nil {
		var out []cmap
		for _, e := range a {
			out = append(out, censysHosts(e)...)
		}
		return out
	}
	m := cobj(doc)
	if m == nil {
		return nil
	}
	if m["ip"] != nil && m["services"] != nil {
		return []cmap{m}
	}
	// the IPv4 dataset's document (scan_censys_legacy.go): its ports are
	// its members, "ip" beside them
	censysUnflatten(m)
	if len(censysLegacyPorts(m)) > 0 {
		return []cmap{m}
	}
	for _, k := range []string{"result", "resource", "host_v1", "host"} {
		if v, ok := m[k]; ok {
			if hs := censysHosts(v); len(hs) > 0 {
				return hs
			}
		}
	}
	if hits, ok := m["hits"]; ok {
		return censysHosts(hits)
	}
	return nil
}

func censysHost(line int, h cmap, src string, opt Options, emit Emit, bad func(LineError)) error {
	if h["services"] == nil {
		return censysLegacyHost(line, h, src, opt, emit, bad)
	}
	a, err := netip.ParseAddr(cstr(h["ip"]))
	if err != nil {
		bad(LineError{line, fmt.Errorf("ip: not an IP address: %q", cstr(h["ip"]))})
		return nil
	}
	var claims []Claim
	if as := cobj(h["autonomous_system"]); as != nil {
		claims = opt.scanClaim("censys", cstr(as["name"]), cstr(as["asn"]))
	}
	hostnames := cstrs(cpath(h, "dns", "reverse_dns", "names"))
	for _, sv := range carr(h["services"]) {
		s := cobj(sv)
		if s == nil {
			continue
		}
		port, err := strconv.Atoi(cstr(s["port"]))
		if err != nil || port < 1 || port > 65535 {
			bad(LineError{line, fmt.Errorf("services[].port: must be 1..65535, got %q", cstr(s["port"]))})
			continue
		}
		transport := strings.ToLower(cstr(s["transport_protocol"]))
		if transport == "quic" || transport == "udp" {
			transport = "udp"
		} else {
			transport = "tcp"
		}
		at := scanTime(firstNonEmpty(cstr(s["observed_at"]), cstr(s["scan_time"]), cstr(h["last_updated_at"])))
		svc := &Service{Port: port, Transport: transport, Probes: censysProbes(s), Detected: censysDetected(s)}
		o := Observation{Type: TypeService, IP: a.Unmap().String(), Source: src, ObservedAt: opt.when(at),
			Claims: claims, Hostnames: hostnames, Service: svc}
		if err := emitChecked(line, o, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

// censysBanner is the service's banner bytes: banner_hex (v2; banner
// is its display form), else banner.
func censysBanner(s cmap) []byte {
	if hx := cstr(s["banner_hex"]); hx != "" {
		if b, err := hex.DecodeString(hx); err == nil {
			return b
		}
	}
	return []byte(cstr(s["banner"]))
}

func censysProbes(s cmap) []Probe {
	t := censysTLS(s)
	banner := censysBanner(s)
	var probes []Probe
	// v2: one HTTP exchange under "http", and its response's favicons.
	if h := cobj(s["http"]); h != nil {
		probes = append(probes, censysHTTP(cobj(h["request"]), cobj(h["response"]), banner, t))
		probes = append(probes, censysFavicons(carr(cobj(h["response"])["favicons"]))...)
	}
	// Platform: one HTTP exchange per endpoint, and the favicons it fetched.
	for _, e := range carr(s["endpoints"]) {
		ep := cobj(e)
		h := cobj(ep["http"])
		if h == nil {
			continue
		}
		q := cmap{"uri": firstNonEmpty(cstr(ep["path"]), "/"), "method": "GET"}
		if hn := cstr(ep["hostname"]); hn != "" {
			q["host"] = hn
		}
		p := censysHTTP(q, h, []byte(cstr(ep["banner"])), t)
		probes = append(probes, p)
		probes = append(probes, censysFavicons(carr(h["favicons"]))...)
	}
	if len(probes) > 0 {
		return probes
	}
	if len(banner) > 0 {
		return []Probe{{Banner: &Banner{Received: BytesBody(banner)}, TLS: t}}
	}
	if t != nil {
		return []Probe{{TLS: t}}
	}
	return nil
}

// censysFavicons are the favicons Censys fetched, as probes named
// "favicon" whose body carries the hashes Censys published: v2's
// {name, md5_hash} and the Platform's {name, hash_md5, hash_sha256,
// hash_shodan (the favicon-style MurmurHash3), size}. A favicon given as
// a data: URI keeps the root as its path. Hashes that are not hex of the
// right length are dropped, not refused: the rest of the record stands.
func censysFavicons(fs []any) []Probe {
	var out []Probe
	for _, f := range fs {
		m := cobj(f)
		if m == nil {
			continue
		}
		b := &Body{}
		if v := strings.ToLower(firstNonEmpty(cstr(m["hash_md5"]), cstr(m["md5_hash"]))); isHex(v, 32) {
			b.MD5 = v
		}
		if v := strings.ToLower(cstr(m["hash_sha256"])); isHex(v, 64) {
			b.SHA256 = v
		}
		if n, err := strconv.ParseInt(cstr(m["hash_shodan"]), 10, 32); err == nil {
			h := int32(n)
			b.MMH3 = &h
		}
		if n, err := strconv.ParseInt(cstr(m["size"]), 10, 64); err == nil && n > 0 {
			b.Length = n
		}
		if b.MD5 == "" && b.SHA256 == "" && b.MMH3 == nil {
			continue
		}
		path, host := "/favicon.ico", ""
		if name := cstr(m["name"]); name != "" && !strings.HasPrefix(name, "data:") {
			path = pathOf(name)
			if u, err := url.Parse(name); err == nil && u.Host != "" {
				if _, err := netip.ParseAddr(u.Hostname()); err != nil {
					host = u.Hostname()
				}
			}
		}
		out = append(out, faviconProbe(path, host, b))
	}
	return out
}

// censysHTTP builds an HTTP probe: the request's method and path (v2's
// uri is a URL), the response's status, the headers in the order of the
// raw banner when it is the response's (else the header map's, sorted),
// the title, the body and its SHA-256.
func censysHTTP(q, r cmap, banner []byte, t *TLS) Probe {
	p := Probe{Name: "http", TLS: t, Request: &Request{Method: firstNonEmpty(cstr(q["method"]), "GET")}}
	uri := cstr(q["uri"])
	p.Request.Path = pathOf(uri)
	if u, err := url.Parse(uri); err == nil && u.Host != "" {
		if _, err := netip.ParseAddr(u.Hostname()); err != nil {
			p.Request.Host = u.Hostname()
		}
	}
	if h := cstr(q["host"]); h != "" && p.Request.Host == "" {
		if _, err := netip.ParseAddr(h); err != nil {
			p.Request.Host = h
		}
	}
	p.Request.Headers = censysHeaders(cobj(q["headers"]))
	if r == nil {
		return p
	}
	resp := &Response{Protocol: cstr(r["protocol"]), Reason: cstr(r["status_reason"]), Title: cstr(r["html_title"])}
	resp.Status, _ = strconv.Atoi(cstr(r["status_code"]))
	if parsed, ok := parseHTTPResponse(banner); ok && (resp.Status == 0 || parsed.Status == resp.Status) {
		resp.Headers = parsed.Headers
	} else {
		resp.Headers = censysHeaders(cobj(r["headers"]))
	}
	if body, ok := r["body"].(string); ok && body != "" {
		resp.Body = BytesBody([]byte(body))
		if size, err := strconv.ParseInt(cstr(r["body_size"]), 10, 64); err == nil && size > resp.Body.Length {
			// Censys keeps the first part of a long body: the hash of the
			// whole is Censys's own SHA-256, where it gives one.
			resp.Body.Length, resp.Body.Truncated, resp.Body.SHA256 = size, true, ""
			sum := strings.ToLower(cstr(r["body_hash_sha256"]))
			if h := cstr(r["body_hash"]); strings.HasPrefix(h, "sha256:") {
				sum = strings.TrimPrefix(h, "sha256:")
			}
			if isHex(sum, 64) {
				resp.Body.SHA256 = sum
			}
		}
	}
	p.Response = resp
	return p
}

// censysHeaders reads a header map: v2's {"Content_Type": ["..."],
// "_encoding": {...}}, the Platform's {"Content-Type": {"headers":
// ["..."]}}, or the IPv4 dataset's zgrab form, one value a name
// ({"server": "..."}) and "unknown": [{key, value}] for names outside
// zgrab's list; names back to their usual spelling, sorted.
func censysHeaders(m cmap) []Header {
	var out []Header
	add := func(name string, vals []string) {
		for _, v := range vals {
			out = append(out, Header{Name: name, Value: v})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch {
		case strings.HasPrefix(k, "_"):
		case k == "unknown":
			for _, u := range carr(m[k]) {
				kv := cobj(u)
				add(canonicalHeader(strings.ToLower(cstr(kv["key"]))), censysValues(kv["value"]))
			}
		// folded to lower case with underscores (content_type, server)
		case strings.Contains(k, "_") || !strings.ContainsAny(k, "-ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
			add(canonicalHeader(strings.ToLower(k)), censysValues(m[k]))
		default:
			add(k, censysValues(m[k]))
		}
	}
	return out
}

// censysValues are a header's values: a list, one string, or the
// Platform's {"headers": [...]}.
func censysValues(v any) []string {
	if s := cstr(v); s != "" {
		return []string{s}
	}
	if o := cobj(v); o != nil {
		return cstrs(o["headers"])
	}
	return cstrs(v)
}

// censysTLS reads the certificate (v2 tls.certificates.leaf_data, the
// Platform's cert.parsed) and the handshake (version, cipher, ja3s,
// ja4s, jarm).
func censysTLS(s cmap) *TLS {
	t := &TLS{}
	if leaf := cobj(cpath(s, "tls", "certificates", "leaf_data")); leaf != nil {
		t.Subject = censysDN(cstr(leaf["subject_dn"]), cobj(leaf["subject"]))
		t.Issuer = censysDN(cstr(leaf["issuer_dn"]), cobj(leaf["issuer"]))
		t.SANs = cstrs(leaf["names"])
		t.SHA256 = strings.ToLower(firstNonEmpty(cstr(leaf["fingerprint"]), cstr(cpath(s, "tls", "certificates", "leaf_fp_sha_256"))))
		if ss, ok := cpath(leaf, "signature", "self_signed").(bool); ok {
			t.SelfSigned = ss
		}
	}
	if c := cobj(s["cert"]); c != nil {
		censysParsedCert(t, cobj(c["parsed"]))
		if len(t.SANs) == 0 {
			t.SANs = cstrs(c["names"])
		}
		if v := cstr(c["fingerprint_sha256"]); v != "" {
			t.SHA256 = strings.ToLower(v)
		}
	}
	if tl := cobj(s["tls"]); tl != nil {
		t.Version = tlsVersionText(cstr(tl["version_selected"]))
		t.Cipher = cstr(tl["cipher_selected"])
		t.JA3S, t.JA4S = cstr(tl["ja3s"]), cstr(tl["ja4s"])
	}
	t.JARM = cstr(cpath(s, "jarm", "fingerprint"))
	if t.SHA256 != "" && !isHex(t.SHA256, 64) {
		t.SHA256 = ""
	}
	if t.empty() {
		return nil
	}
	return t
}

// censysParsedCert reads a parsed certificate in zcrypto's JSON form (the
// Platform's cert.parsed, the IPv4 dataset's tls.certificate.parsed):
// names, SANs, serial, validity (validity_period's not_before/not_after,
// or the older validity's start/end), self-signed, and its SHA-256 where
// it carries one.
func censysParsedCert(t *TLS, p cmap) {
	if p == nil {
		return
	}
	t.Subject = censysDN(cstr(p["subject_dn"]), cobj(p["subject"]))
	t.Issuer = censysDN(cstr(p["issuer_dn"]), cobj(p["issuer"]))
	t.SANs = append(cstrs(cpath(p, "extensions", "subject_alt_name", "dns_names")), cstrs(cpath(p, "extensions", "subject_alt_name", "ip_addresses"))...)
	t.SHA256 = strings.ToLower(cstr(p["fingerprint_sha256"]))
	if sn := cstr(p["serial_number"]); sn != "" {
		t.Serial = decimalSerial(sn)
	}
	t.NotBefore = rfc3339(firstNonEmpty(cstr(cpath(p, "validity_period", "not_before")), cstr(cpath(p, "validity", "start"))))
	t.NotAfter = rfc3339(firstNonEmpty(cstr(cpath(p, "validity_period", "not_after")), cstr(cpath(p, "validity", "end"))))
	if ss, ok := cpath(p, "signature", "self_signed").(bool); ok {
		t.SelfSigned = ss
	}
}

// censysDN reads a name: the distinguished name string and the attribute
// object (common_name, organization, ... as lists).
func censysDN(dn string, attrs cmap) *DN {
	if dn == "" && attrs == nil {
		return nil
	}
	d := ParseDN(dn)
	if dn == "" {
		d = &DN{}
	}
	one := func(k string) string {
		if l := cstrs(attrs[k]); len(l) > 0 {
			return l[0]
		}
		return ""
	}
	if v := one("common_name"); v != "" {
		d.CN = v
	}
	if l := cstrs(attrs["organization"]); len(l) > 0 {
		d.O = l
	}
	if l := cstrs(attrs["organizational_unit"]); len(l) > 0 {
		d.OU = l
	}
	for _, f := range []struct {
		k  string
		to *string
	}{{"country", &d.C}, {"province", &d.ST}, {"locality", &d.L}, {"email_address", &d.Email}} {
		if v := one(f.k); v != "" {
			*f.to = v
		}
	}
	return d
}

// censysDetected is Censys's identification: the service name (v2
// service_name, Platform protocol) and the software it recognised.
func censysDetected(s cmap) *Detected {
	d := &Detected{By: "censys", Service: firstNonEmpty(cstr(s["service_name"]), cstr(s["protocol"]))}
	if d.Service == "UNKNOWN" {
		d.Service = ""
	}
	var other []string
	for _, sw := range carr(s["software"]) {
		m := cobj(sw)
		if m == nil {
			continue
		}
		if cpe := firstNonEmpty(cstr(m["cpe"]), cstr(m["uniform_resource_identifier"])); cpe != "" {
			d.CPE = append(d.CPE, cpe)
		}
		name := strings.TrimSpace(cstr(m["vendor"]) + " " + cstr(m["product"]))
		if d.Product == "" && cstr(m["product"]) != "" && cstr(m["part"]) != "o" {
			d.Product, d.Version = cstr(m["product"]), cstr(m["version"])
			continue
		}
		if name != "" {
			other = append(other, strings.TrimSpace(name+" "+cstr(m["version"])))
		}
	}
	d.Info = strings.Join(other, "; ")
	if d.Service == "" && d.Product == "" && len(d.CPE) == 0 && d.Info == "" {
		return nil
	}
	return d
}
