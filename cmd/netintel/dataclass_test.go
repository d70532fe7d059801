package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oschwald/maxminddb-golang/v2"

	"github.com/netintel/netintel/api/ipapi"
	"github.com/netintel/netintel/enrich"
	"github.com/netintel/netintel/ingest"
	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
)

// dataClassFeeds are the feeds of TestDataClasses_EveryRouteTierAndFile:
// configured sources whose names say nothing of their class (a
// residential feed named sightings, a flow feed named edge, a partner
// feed and a telemetry feed declared restricted with class:).
var dataClassFeeds = []struct {
	src   config.IngestSource
	lines []string
}{
	{config.IngestSource{Name: "tor-exits"}, []string{
		`{"type":"signal","ip":"198.51.100.10","source":"tor-exits","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"tor_exit","provider":"Tor","confidence":0.99}}`,
		`{"type":"signal","ip":"198.51.100.40","source":"tor-exits","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"hosting","provider":"StdHost","confidence":0.5}}`,
	}},
	// Residential by its content, whatever the source is called.
	{config.IngestSource{Name: "sightings"}, []string{
		`{"type":"signal","ip":"198.51.100.20","source":"sightings","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"residential_proxy","provider":"ResiNet","confidence":0.9},"claims":[{"org_name":"ResiOrg","signal_confidence":0.9}]}`,
		`{"type":"signal","ip":"198.51.100.40","source":"sightings","observed_at":"2026-11-21T10:00:00Z","signal":{"kind":"residential_proxy","provider":"ResiNet","confidence":0.9}}`,
	}},
	// Netflow by its type, whatever the source is called.
	{config.IngestSource{Name: "edge"}, []string{
		`{"type":"flow","ip":"198.51.100.30","source":"edge","observed_at":"2026-11-20T10:00:00Z","flow":{"port":51820,"transport":"udp","protocol":"wireguard","confidence":0.85},"claims":[{"org_name":"FlowOrg","signal_confidence":0.6}]}`,
		`{"type":"flow","ip":"198.51.100.40","source":"edge","observed_at":"2026-11-22T10:00:00Z","flow":{"port":1194,"transport":"udp","protocol":"openvpn","confidence":0.5},"claims":[{"org_name":"FlowOrg","signal_confidence":0.6}]}`,
	}},
	// Declared wholly restricted in pipeline.yaml.
	{config.IngestSource{Name: "partner", Class: ipmodel.DataResidential}, []string{
		`{"type":"signal","ip":"198.51.100.50","source":"partner","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"vpn_exit","provider":"PartnerVPN","confidence":0.8}}`,
	}},
	{config.IngestSource{Name: "telemetry", Class: ipmodel.DataNetflow}, []string{
		`{"type":"signal","ip":"198.51.100.60","source":"telemetry","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"vpn_exit","provider":"TeleVPN","confidence":0.8}}`,
	}},
}

// What names each class's knowledge in a body or file: none may appear
// where the class is not visible, each must where it is.
var (
	residentialMarks = []string{"ResiNet", "ResiOrg", `"sightings"`, `"partner"`, "PartnerVPN"}
	netflowMarks     = []string{"FlowOrg", `"edge"`, `"telemetry"`, "TeleVPN"}
)

// dcWant is what one audience sees of each address: its classifications
// (nil: nothing known) and provider.
type dcWant struct {
	classes  []string
	provider string
	assets   []int
}

var dcAddrs = []string{"198.51.100.10", "198.51.100.20", "198.51.100.30", "198.51.100.40", "198.51.100.50", "198.51.100.60"}

var dcWants = [ipmodel.NumAudiences]map[string]dcWant{
	ipmodel.AudienceFree: {
		"198.51.100.10": {[]string{"tor"}, "Tor", nil},
		"198.51.100.40": {[]string{"hosting"}, "StdHost", nil},
	},
	ipmodel.AudiencePro: {
		"198.51.100.10": {[]string{"tor"}, "Tor", nil},
		"198.51.100.20": {[]string{"residential_proxy"}, "ResiNet", nil},
		"198.51.100.40": {[]string{"hosting", "residential_proxy"}, "ResiNet", nil},
		"198.51.100.50": {[]string{"vpn"}, "PartnerVPN", nil},
	},
	ipmodel.AudienceEnterprise: {
		"198.51.100.10": {[]string{"tor"}, "Tor", nil},
		"198.51.100.20": {[]string{"residential_proxy"}, "ResiNet", nil},
		"198.51.100.30": {[]string{"vpn"}, "", []int{51820}},
		"198.51.100.40": {[]string{"vpn", "hosting", "residential_proxy"}, "ResiNet", []int{1194}},
		"198.51.100.50": {[]string{"vpn"}, "PartnerVPN", nil},
		"198.51.100.60": {[]string{"vpn"}, "TeleVPN", nil},
	},
}

// checkMarks fails when body shows a class audience a may not see, or
// (when complete, the body covering every address) misses the providers
// and organisations of one it may.
func checkMarks(t *testing.T, what string, a ipmodel.Audience, body string, complete bool) {
	t.Helper()
	for _, c := range []struct {
		class string
		marks []string
	}{{ipmodel.DataResidential, residentialMarks}, {ipmodel.DataNetflow, netflowMarks}} {
		for _, m := range c.marks {
			has := strings.Contains(body, m)
			if has && !a.Sees(c.class) {
				t.Errorf("%s (audience %s) shows %s data %s:\n%s", what, a, c.class, m, body)
			}
			if complete && !has && a.Sees(c.class) && slices.Contains(presentMarks, m) {
				t.Errorf("%s (audience %s) lacks %s data %s", what, a, c.class, m)
			}
		}
	}
}

// presentMarks are the marks every file and batch carries when visible
// (providers; the flow's organisation, on its asset).
var presentMarks = []string{"ResiNet", "PartnerVPN", "TeleVPN"}

// TestDataClasses_EveryRouteTierAndFile feeds the real pipeline
// (configured sources, ingest, enrich, publish) with one address per data
// class and mixes of them, from feeds whose names mislead, then asks
// every route as every tier and reads every bulk file back: each tier
// sees exactly its classes, whatever the feeds are called.
func TestDataClasses_EveryRouteTierAndFile(t *testing.T) {
	t.Parallel()
	n, cfg := startEnrich(t)
	in := ingest.New(n.JS, testutil.Logger(t), nil, 64, time.Minute)
	for _, f := range dataClassFeeds {
		if _, err := in.Ingest(t.Context(), "observations", strings.NewReader(strings.Join(f.lines, "\n")), ingest.SourceOptions(f.src, cfg.Ingest)); err != nil {
			t.Fatalf("ingest %s: %v", f.src.Name, err)
		}
	}
	wctx, stop := context.WithTimeout(t.Context(), 30*time.Second)
	defer stop()
	if err := enrich.WaitIdle(wctx, n.JS); err != nil {
		t.Fatal(err)
	}
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pc := cfg.Publish
	pc.WorkDir = t.TempDir()
	res, err := publish.New(pc, st, nil, testutil.Logger(t)).Run(t.Context(), enrich.NewState(n.JS, "ipstate"), "2026-11-23")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("files", func(t *testing.T) {
		for _, f := range res.Manifest.Files {
			a, ok := ipmodel.ParseAudience(f.Audience)
			if !ok || !slices.Equal(f.Tiers, a.Tiers()) {
				t.Fatalf("%s: audience %q tiers %v", f.Name, f.Audience, f.Tiers)
			}
			var b bytes.Buffer
			if err := publish.Download(t.Context(), st, f, &b); err != nil {
				t.Fatal(err)
			}
			body := b.String()
			switch f.Format {
			case publish.FormatCSV, publish.FormatNDJSON:
				zr, err := gzip.NewReader(&b)
				if err != nil {
					t.Fatal(err)
				}
				plain, _ := io.ReadAll(zr)
				body = string(plain)
				if f.Format == publish.FormatNDJSON {
					checkNDJSON(t, f.Name, a, body)
				}
			case publish.FormatMMDB:
				checkMMDB(t, f.Name, a, b.Bytes())
			}
			if f.Format != publish.FormatParquet { // compressed columns: read through the MMDB and NDJSON
				checkMarks(t, "file "+f.Name, a, body, true)
			}
		}
		sums, _, err := st.Get(t.Context(), res.Manifest.SumsKey, nil)
		if err != nil {
			t.Fatal(err)
		}
		sb, _ := io.ReadAll(sums)
		sums.Close()
		for _, f := range res.Manifest.Files {
			if !strings.Contains(string(sb), f.SHA256+"  "+f.Name+"\n") {
				t.Errorf("SHA256SUMS lacks %s", f.Name)
			}
		}
	})

	svc := ipapi.New(ipapi.Options{InternalKey: "k", Store: st, Log: testutil.Logger(t), PublicPerMinute: 6000, PublicBurst: 100})
	snap, err := ipapi.Load(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	svc.Swap(snap)
	mux := http.NewServeMux()
	svc.Mount(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	get := func(t *testing.T, method, path, tier, body string) (int, string) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequestWithContext(t.Context(), method, srv.URL+path, rd)
		if tier != "" {
			req.Header.Set("X-Internal-Key", "k")
			req.Header.Set("X-Tier", tier)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	for _, tier := range []string{"free", "starter", "pro", "scale", "business", "enterprise"} {
		a := ipmodel.AudienceOfTier(tier)
		want := dcWants[a]
		t.Run(tier, func(t *testing.T) {
			for _, ip := range dcAddrs {
				w, known := want[ip]
				// The single-address classification.
				code, body := get(t, "GET", "/api/v1/ip/"+ip, tier, "")
				if !known {
					if code != 404 {
						t.Errorf("ip %s: %d, want 404: %s", ip, code, body)
					}
				} else {
					var r struct {
						Classifications []string `json:"classifications"`
						Provider        *string  `json:"provider"`
						Assets          []struct {
							Port int `json:"port"`
						} `json:"assets"`
					}
					if code != 200 || json.Unmarshal([]byte(body), &r) != nil {
						t.Fatalf("ip %s: %d %s", ip, code, body)
					}
					var ports []int
					for _, as := range r.Assets {
						ports = append(ports, as.Port)
					}
					prov := ""
					if r.Provider != nil {
						prov = *r.Provider
					}
					if !slices.Equal(r.Classifications, w.classes) || prov != w.provider || !slices.Equal(ports, w.assets) {
						t.Errorf("ip %s: classes %v provider %q assets %v, want %v %q %v", ip, r.Classifications, prov, ports, w.classes, w.provider, w.assets)
					}
				}
				checkMarks(t, "ip "+ip, a, body, false)
				// The asset lookup: 404 without assets the tier may see.
				code, body = get(t, "GET", "/api/v1/shadow_vpn/lookup/"+ip, tier, "")
				if wantCode := map[bool]int{true: 200, false: 404}[len(w.assets) > 0]; code != wantCode {
					t.Errorf("lookup %s: %d, want %d: %s", ip, code, wantCode, body)
				}
				checkMarks(t, "lookup "+ip, a, body, false)
			}
			// Batch.
			code, body := get(t, "POST", "/api/v1/ip/batch", tier, `{"ips":["`+strings.Join(dcAddrs, `","`)+`"]}`)
			var br struct {
				Results []struct {
					IP              string   `json:"ip"`
					Found           bool     `json:"found"`
					Classifications []string `json:"classifications"`
				} `json:"results"`
			}
			if code != 200 || json.Unmarshal([]byte(body), &br) != nil {
				t.Fatalf("batch: %d %s", code, body)
			}
			for _, it := range br.Results {
				w, known := want[it.IP]
				if it.Found != known || !slices.Equal(it.Classifications, append([]string{}, w.classes...)) && known {
					t.Errorf("batch %s: found %v %v, want %v %v", it.IP, it.Found, it.Classifications, known, w.classes)
				}
			}
			checkMarks(t, "batch", a, body, true)
			// CSV export (pro and above).
			code, body = get(t, "GET", "/api/v1/export/csv", tier, "")
			if a == ipmodel.AudienceFree {
				if code != 403 {
					t.Errorf("csv: %d, want 403", code)
				}
			} else {
				for _, ip := range dcAddrs {
					if _, known := want[ip]; strings.Contains(body, "\n"+ip+",") != known {
						t.Errorf("csv: row of %s present %v, want %v:\n%s", ip, !known, known, body)
					}
				}
				checkMarks(t, "csv", a, body, false)
			}
			// The dataset feed lists the tier's build alone.
			code, body = get(t, "GET", "/api/v1/export/dataset", tier, "")
			if a == ipmodel.AudienceFree {
				if code != 403 {
					t.Errorf("dataset: %d, want 403", code)
				}
				return
			}
			var ds ipapi.DatasetResponse
			if code != 200 || json.Unmarshal([]byte(body), &ds) != nil || len(ds.Files) == 0 {
				t.Fatalf("dataset: %d %s", code, body)
			}
			for _, f := range ds.Files {
				if want := publish.AudienceFileName(f.Format, a); f.Name != want {
					t.Errorf("dataset offers %s, want %s", f.Name, want)
				}
			}
			// Another audience's file: refused above the tier.
			if a < ipmodel.AudienceEnterprise {
				if code, _ := get(t, "GET", "/api/v1/export/dataset/files/2026-11-23/ipintel.ndjson.gz", tier, ""); code != 403 {
					t.Errorf("enterprise file for %s: %d, want 403", tier, code)
				}
			}
		})
	}
	// The keyless public lookup shows what free sees.
	for _, ip := range dcAddrs {
		code, body := get(t, "GET", "/public/v1/lookup/"+ip, "", "")
		w, known := dcWants[ipmodel.AudienceFree][ip]
		if code != 200 || strings.Contains(body, `"found":true`) != known || known && !strings.Contains(body, `"classifications":["`+strings.Join(w.classes, `","`)+`"]`) {
			t.Errorf("public %s: %d %s", ip, code, body)
		}
		checkMarks(t, "public "+ip, ipmodel.AudienceFree, body, false)
		if strings.Contains(body, "vpn") && ip != "198.51.100.40" {
			t.Errorf("public %s shows a vpn label: %s", ip, body)
		}
	}
}

// checkNDJSON compares each row of an NDJSON file with what its audience
// sees.
func checkNDJSON(t *testing.T, name string, a ipmodel.Audience, body string) {
	t.Helper()
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		var r ipmodel.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		seen[r.IP] = true
		w, known := dcWants[a][r.IP]
		if !known || !slices.Equal(r.Classifications, w.classes) {
			t.Errorf("%s: %s classes %v, want %v (known %v)", name, r.IP, r.Classifications, w.classes, known)
		}
	}
	for ip := range dcWants[a] {
		if !seen[ip] {
			t.Errorf("%s: no row for %s", name, ip)
		}
	}
}

// checkMMDB reads an MMDB file back with maxminddb-golang.
func checkMMDB(t *testing.T, name string, a ipmodel.Audience, b []byte) {
	t.Helper()
	r, err := maxminddb.OpenBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range dcAddrs {
		var rec ipmodel.Record
		res := r.Lookup(netip.MustParseAddr(ip))
		w, known := dcWants[a][ip]
		if res.Found() != known {
			t.Errorf("%s: %s found %v, want %v", name, ip, res.Found(), known)
			continue
		}
		if !known {
			continue
		}
		if err := res.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rec.Classifications, w.classes) || len(rec.Assets) != len(w.assets) {
			t.Errorf("%s: %s classes %v assets %d, want %v %v", name, ip, rec.Classifications, len(rec.Assets), w.classes, w.assets)
		}
	}
}
