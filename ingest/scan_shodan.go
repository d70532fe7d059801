package ingest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

type shodanBanner struct {
	IPStr     string          `json:"ip_str"`
	IP        json.Number     `json:"ip"`
	IPv6      string          `json:"ipv6"`
	Port      int             `json:"port"`
	Transport string          `json:"transport"`
	Timestamp string          `json:"timestamp"`
	Data      string          `json:"data"`
	Product   string          `json:"product"`
	Version   string          `json:"version"`
	Info      string          `json:"info"`
	OS        *string         `json:"os"`
	DeviceTyp string          `json:"devicetype"`
	CPE23     []string        `json:"cpe23"`
	CPE       json.RawMessage `json:"cpe"`
	Org       string          `json:"org"`
	ASN       string          `json:"asn"`
	Hostnames []string        `json:"hostnames"`
	Domains   []string        `json:"domains"`
	Shodan    *struct {
		Module string `json:"module"`
	} `json:"_shodan"`
	HTTP *struct {
		Status   int     `json:"status"`
		Title    *string `json:"title"`
		HTML     *string `json:"html"`
		Host     string  `json:"host"`
		Location string  `json:"location"`
		// Components are the web technologies Shodan recognised in the
		// page: {"Bootstrap": {"categories": [...], "versions": [...]}}.
		Components map[string]struct {
			Versions []string `json:"versions"`
		} `json:"components"`
		Favicon *struct {
			Hash     *int64 `json:"hash"`
			Data     string `json:"data"`
			Location string `json:"location"`
		} `json:"favicon"`
		Redirects []struct {
			Host     string  `json:"host"`
			Data     string  `json:"data"`
			Location string  `json:"location"`
			HTML     *string `json:"html"`
		} `json:"redirects"`
	} `json:"http"`
	SSL *struct {
		Cert *struct {
			Subject     map[string]string `json:"subject"`
			Issuer      map[string]string `json:"issuer"`
			Serial      json.Number       `json:"serial"`
			Expires     string            `json:"expires"`
			Issued      string            `json:"issued"`
			Fingerprint *struct {
				SHA256 string `json:"sha256"`
			} `json:"fingerprint"`
		} `json:"cert"`
		Cipher *struct {
			Version string `json:"version"`
			Name    string `json:"name"`
		} `json:"cipher"`
		JARM  string   `json:"jarm"`
		JA3S  string   `json:"ja3s"`
		JA4S  string   `json:"ja4s"`
		Chain []string `json:"chain"`
	} `json:"ssl"`
	ISAKMP *struct {
		VendorIDs []string `json:"vendor_ids"`
	} `json:"isakmp"`
	SNMP *struct {
		Description string `json:"description"`
	} `json:"snmp"`
}

// Shodan reads Shodan banners, one JSON object per line, as `shodan
// download` (gunzip the .json.gz first) and the streaming API write them.
// Each banner is one service observation on ip_str:port/transport at its
// timestamp:
//
//   - data, the raw banner, is a banner probe; for an HTTP service it is
//     the response's status line and headers, so it becomes the response
//     (headers in order, every Set-Cookie kept) with http.html as its body
//     and http.title as its title, the request being a GET of
//     http.location on http.host; each of http.redirects is a probe of its
//     own before it;
//   - http.favicon is a GET of the favicon's path with the icon as body
//     and its hash as the body's mmh3;
//   - ssl is a TLS probe (attached to the HTTP probe on HTTPS): the
//     certificate's subject, issuer, serial (as hex), validity and SHA-256,
//     SANs and the rest read from the first certificate of ssl.chain,
//     the negotiated version and cipher, jarm, ja3s, ja4s;
//   - isakmp.vendor_ids (the IKE responder's vendor IDs in hex) and
//     snmp.description (the agent's sysDescr) that data does not already
//     quote are a banner probe named "shodan:isakmp" ("vendor_ids: <hex>
//     <hex>") or "shodan:snmp" (the sysDescr), so the rules read them
//     whichever form the export kept;
//   - product, version, info (with os and devicetype), cpe23 (or cpe) and
//     _shodan.module are Detected{By: "shodan"};
//   - org is a claim (signal_source "shodan", confidence 0.5 or
//     --confidence) with the asn ("AS15169") as its ASN; hostnames and
//     domains are the observation's hostnames. isp (most often the org
//     again) and location (the IP's geolocation, which netintel takes from
//     the operators' own geofeeds) are not kept.
func Shodan(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("shodan")
	// JSON lines (shodan download, the stream) are read a line at a
	// time; anything else (a pretty-printed host answer, an array of
	// banners) whole, up to maxJSONFeed: a banner, an array of them, a
	// host answer (/shodan/host/{ip}: its "data" array) or a search answer
	// (/shodan/host/search: its "matches" array), one after the other.
	return opt.jsonRecords(r, "shodan", bad, []string{"data", "matches"}, func(n int, rec []byte) error {
		return shodanRecord(rec, n, src, opt, emit, bad)
	})
}

// shodanRecord reads one banner.
func shodanRecord(raw []byte, n int, src string, opt Options, emit Emit, bad func(LineError)) error {
	var sb shodanBanner
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&sb); err != nil {
		bad(LineError{n, fmt.Errorf("json: %w", err)})
		return nil
	}
	ip := sb.IPStr
	if ip == "" {
		ip = sb.IPv6
	}
	if ip == "" && sb.IP != "" {
		if v, err := strconv.ParseUint(string(sb.IP), 10, 32); err == nil {
			ip = netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
		}
	}
	if ip == "" || sb.Port == 0 {
		bad(LineError{n, errors.New(`not a Shodan banner: want "ip_str" and "port"`)})
		return nil
	}
	transport := sb.Transport
	if transport == "" {
		transport = "tcp"
	}
	o := Observation{Type: TypeService, IP: ip, Source: src, ObservedAt: opt.when(scanTime(sb.Timestamp)),
		Service: &Service{Port: sb.Port, Transport: transport, Probes: sb.probes(), Detected: sb.detected()}}
	o.Claims = opt.scanClaim("shodan", sb.Org, sb.ASN)
	o.Hostnames = append(append(o.Hostnames, sb.Hostnames...), sb.Domains...)
	return emitChecked(n, o, emit, bad)
}

func (sb *shodanBanner) detected() *Detected {
	d := &Detected{By: "shodan", Product: sb.Product, Version: sb.Version, CPE: sb.CPE23}
	if sb.Shodan != nil {
		d.Service = sb.Shodan.Module
	}
	var info []string
	if sb.Info != "" {
		info = append(info, sb.Info)
	}
	if sb.OS != nil && *sb.OS != "" {
		info = append(info, "os: "+*sb.OS)
	}
	if sb.DeviceTyp != "" {
		info = append(info, "devicetype: "+sb.DeviceTyp)
	}
	if sb.HTTP != nil && len(sb.HTTP.Components) > 0 {
		names := make([]string, 0, len(sb.HTTP.Components))
		for name, c := range sb.HTTP.Components {
			if len(c.Versions) > 0 {
				name += " " + strings.Join(c.Versions, "/")
			}
			names = append(names, name)
		}
		sort.Strings(names)
		info = append(info, "components: "+strings.Join(names, ", "))
	}
	d.Info = strings.Join(info, "; ")
	if len(d.CPE) == 0 && len(sb.CPE) > 0 {
		var list []string
		if scanUnmarshal(sb.CPE, &list) != nil {
			var one string
			if scanUnmarshal(sb.CPE, &one) == nil && one != "" {
				list = []string{one}
			}
		}
		d.CPE = list
	}
	return d
}

func (sb *shodanBanner) tls() *TLS {
	s := sb.SSL
	if s == nil {
		return nil
	}
	t := &TLS{}
	if len(s.Chain) > 0 {
		if blk, _ := pem.Decode([]byte(s.Chain[0])); blk != nil {
			if c, err := certTLS(blk.Bytes); err == nil {
				t = c
			}
		}
	}
	if c := s.Cert; c != nil {
		if d := shodanDN(c.Subject); d != nil {
			t.Subject = d
		}
		if d := shodanDN(c.Issuer); d != nil {
			t.Issuer = d
		}
		// The serial is a JSON number: an integer, or in some exports a
		// float that kept only its first 17 digits ("4.9971450877216253e+36"),
		// which is no serial; the chain's certificate has it exactly.
		if c.Serial != "" && !strings.ContainsAny(string(c.Serial), ".eE") {
			t.Serial = decimalSerial(string(c.Serial))
		}
		if c.Fingerprint != nil && c.Fingerprint.SHA256 != "" {
			t.SHA256 = c.Fingerprint.SHA256
		}
		if at, err := time.Parse("20060102150405Z", c.Issued); err == nil {
			t.NotBefore = at.UTC().Format(time.RFC3339)
		}
		if at, err := time.Parse("20060102150405Z", c.Expires); err == nil {
			t.NotAfter = at.UTC().Format(time.RFC3339)
		}
	}
	if c := s.Cipher; c != nil {
		t.Version, t.Cipher = c.Version, c.Name
	}
	t.JARM, t.JA3S, t.JA4S = s.JARM, s.JA3S, s.JA4S
	if t.empty() {
		return nil
	}
	return t
}

// shodanDN reads Shodan's name object ({"CN": .., "O": .., "OU": ..}).
func shodanDN(m map[string]string) *DN {
	if len(m) == 0 {
		return nil
	}
	d := &DN{CN: m["CN"], C: m["C"], ST: m["ST"], L: m["L"], Email: m["emailAddress"]}
	if m["O"] != "" {
		d.O = []string{m["O"]}
	}
	if m["OU"] != "" {
		d.OU = []string{m["OU"]}
	}
	d.DN = d.Join(",", false)
	return d
}

// moduleProbes are the isakmp and snmp module fields that data does not
// quote, as banner probes.
func (sb *shodanBanner) moduleProbes() []Probe {
	var probes []Probe
	data := strings.ToLower(sb.Data)
	if k := sb.ISAKMP; k != nil {
		var missing []string
		for _, v := range k.VendorIDs {
			if v = strings.TrimSpace(v); v != "" && !strings.Contains(data, strings.ToLower(v)) {
				missing = append(missing, v)
			}
		}
		if len(missing) > 0 {
			probes = append(probes, Probe{Name: "shodan:isakmp", Banner: &Banner{Received: TextBody("vendor_ids: " + strings.Join(missing, " "))}})
		}
	}
	if n := sb.SNMP; n != nil {
		if d := strings.TrimSpace(n.Description); d != "" && !strings.Contains(data, strings.ToLower(d)) {
			probes = append(probes, Probe{Name: "shodan:snmp", Banner: &Banner{Received: TextBody(d)}})
		}
	}
	return probes
}

func (sb *shodanBanner) probes() []Probe {
	t := sb.tls()
	h := sb.HTTP
	if h == nil {
		var probes []Probe
		if sb.Data != "" {
			probes = append(probes, Probe{Banner: &Banner{Received: TextBody(sb.Data)}, TLS: t})
		} else if t != nil {
			probes = append(probes, Probe{TLS: t})
		}
		return append(probes, sb.moduleProbes()...)
	}
	var probes []Probe
	for _, rd := range h.Redirects {
		p := Probe{Name: "redirect", Request: &Request{Method: "GET", Path: pathOf(rd.Location), Host: rd.Host}}
		if resp, ok := parseHTTPResponse([]byte(rd.Data)); ok {
			p.Response = resp
			if rd.HTML != nil && *rd.HTML != "" {
				resp.Body = TextBody(*rd.HTML)
			}
		} else if rd.Data != "" {
			p.Banner = &Banner{Received: TextBody(rd.Data)}
		} else {
			continue
		}
		probes = append(probes, p)
	}
	p := Probe{Request: &Request{Method: "GET", Path: pathOf(h.Location), Host: h.Host}, TLS: t}
	if resp, ok := parseHTTPResponse([]byte(sb.Data)); ok {
		p.Response = resp
	} else {
		p.Response = &Response{Status: h.Status}
		if sb.Data != "" {
			p.Banner = &Banner{Received: TextBody(sb.Data)}
		}
	}
	if h.Status == 0 && sb.Data == "" && (h.Title == nil || *h.Title == "") && (h.HTML == nil || *h.HTML == "") {
		// http with every member null: the request got no answer (a
		// TLS-only port); the handshake is all there is.
		p.Response = nil
		probes = append(probes, p)
		return probes
	}
	if h.Title != nil {
		p.Response.Title = *h.Title
	}
	if h.HTML != nil && *h.HTML != "" {
		p.Response.Body = TextBody(*h.HTML)
	}
	probes = append(probes, p)
	if f := h.Favicon; f != nil && (f.Hash != nil || f.Data != "") {
		body := &Body{}
		if raw, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\n", "", "\r", "").Replace(f.Data)); err == nil && len(raw) > 0 {
			body = BytesBody(raw)
		}
		if f.Hash != nil {
			m := int32(*f.Hash)
			body.MMH3 = &m
		}
		path := pathOf(f.Location)
		if path == "/" {
			path = "/favicon.ico"
		}
		probes = append(probes, faviconProbe(path, h.Host, body))
	}
	return probes
}

// pathOf returns the path and query of a URL or path ("/" when empty).
func pathOf(s string) string {
	if s == "" {
		return "/"
	}
	if strings.HasPrefix(s, "/") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Path == "" {
		return "/"
	}
	if u.RawQuery != "" {
		return u.Path + "?" + u.RawQuery
	}
	return u.Path
}
