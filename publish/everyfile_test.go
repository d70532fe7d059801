package publish

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oschwald/maxminddb-golang"

	"github.com/netintel/netintel/internal/ipmodel"
)

// claimsOf is what every file must say alike of an address: its ASN,
// its own attributions, its assets' attributions and its place.
type claimsOf struct {
	ASN          uint32                  `json:"asn"`
	Attributions []ipmodel.Attribution   `json:"attributions"`
	Assets       [][]ipmodel.Attribution `json:"assets"`
	Country      string                  `json:"country"`
	Region       string                  `json:"region"`
	City         string                  `json:"city"`
}

func claimsOfRecord(r *ipmodel.Record) claimsOf {
	c := claimsOf{ASN: r.ASN, Attributions: nonNil(r.Attributions), Assets: [][]ipmodel.Attribution{},
		Country: deref(r.Country), Region: deref(r.Region), City: deref(r.City)}
	for _, a := range r.Assets {
		c.Assets = append(c.Assets, nonNil(a.Attributions))
	}
	return c
}

func (c claimsOf) String() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// everyFileState: an AWS range with a Private Relay range inside it (a
// place, a claim of its own), a residential range only pro and above
// see, a scanned host inside all three, a host outside any range.
func everyFileState() (fixedState, map[string]map[ipmodel.Audience]claimsOf) {
	at := func(org, src string, conf float64) ipmodel.Attribution {
		return ipmodel.Attribution{OrgName: org, SignalSource: src, SignalConfidence: conf, ObservedAt: "2026-11-26T00:00:00Z"}
	}
	asnAmazon := at("AMAZON-02 - Amazon.com, Inc.", "ip2asn", 0.7)
	aws := at("Amazon.com, Inc.", "aws-ranges", 0.95)
	relay := at("iCloud Private Relay", "private-relay", 0.95)
	resi := at("ResiNet Ltd", "sightings", 0.6)
	scan := at("Example Logistics Ltd", "scan-a", 0.6)
	hostAS := asnAmazon
	hostAS.OrgName += " (host)"
	base := func(ip, network string, classes ...string) ipmodel.Record {
		return ipmodel.Record{IP: ip, Network: network, Classifications: classes, Confidence: 0.9,
			FirstSeen: "2026-11-20T00:00:00Z", LastSeen: "2026-11-26T00:00:00Z", Sources: []string{"x"}, Assets: []ipmodel.Asset{}}
	}
	wide := base("3.0.0.0", "3.0.0.0/9", "hosting")
	wide.ASN, wide.Attributions = 16509, []ipmodel.Attribution{asnAmazon, aws}
	pr := base("3.5.140.0", "3.5.140.0/22", "relay")
	pr.Attributions = []ipmodel.Attribution{relay}
	pr.Country, pr.Region, pr.City = strPtr("GB"), strPtr("GB-EN"), strPtr("London")
	rs := base("3.5.140.0", "3.5.140.0/24", "residential_proxy")
	rs.Attributions = []ipmodel.Attribution{resi}
	rs.Views = &ipmodel.Views{} // free sees nothing of it; pro all of it
	proView := rs
	proView.Views = nil
	rs.Views[ipmodel.AudiencePro] = &proView

	host := base("3.5.140.10", "", "vpn")
	host.ASN, host.Attributions = 16509, []ipmodel.Attribution{hostAS}
	host.Assets = []ipmodel.Asset{{Port: 443, ProtocolFamily: "ssl-vpn", ConfidenceBand: "low", EvidenceSources: []string{"scan-a"},
		FirstSeen: "2026-11-25T00:00:00Z", LastSeen: "2026-11-25T00:00:00Z", Attributions: []ipmodel.Attribution{hostAS, scan}}}
	outside := base("198.51.100.7", "", "proxy")

	st := fixedState{ranges: []ipmodel.Record{wide, pr, rs}, hosts: []ipmodel.Record{host, outside}}
	geo := func(c claimsOf) claimsOf { c.Country, c.Region, c.City = "GB", "GB-EN", "London"; return c }
	inside := claimsOf{ASN: 16509, Attributions: []ipmodel.Attribution{aws, hostAS, relay},
		Assets: [][]ipmodel.Attribution{{aws, hostAS, relay, scan}}}
	insidePro := inside
	insidePro.Attributions = []ipmodel.Attribution{aws, hostAS, relay, resi}
	insidePro.Assets = [][]ipmodel.Attribution{{aws, hostAS, relay, scan, resi}}
	none := claimsOf{Attributions: []ipmodel.Attribution{}, Assets: [][]ipmodel.Attribution{}}
	want := map[string]map[ipmodel.Audience]claimsOf{
		"3.5.140.10":   {ipmodel.AudienceFree: geo(inside), ipmodel.AudiencePro: geo(insidePro), ipmodel.AudienceEnterprise: geo(insidePro)},
		"198.51.100.7": {ipmodel.AudienceFree: none, ipmodel.AudiencePro: none, ipmodel.AudienceEnterprise: none},
	}
	return st, want
}

// Every file of a build says the same of an address: its ASN, its
// attributions and its assets' with the claims of the ranges around it
// (the most specific range's first), and the place of the range it is
// in, as each audience sees them (a residential range's claim only from
// pro up). Read by encoding/csv, DuckDB (CSV and Parquet), encoding/json
// (NDJSON), maxminddb-golang and mmdblookup (MMDB).
func TestBuild_EveryFileSaysTheSame(t *testing.T) {
	t.Parallel()
	st, want := everyFileState()
	dir := t.TempDir()
	m := &Manifest{SnapshotDate: "2026-11-26"}
	files, err := Build(t.Context(), st, dir, BuildOptions{BuildTime: time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC), RowGroupRows: 16}, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		aud, _ := ipmodel.ParseAudience(f.Audience)
		path := filepath.Join(dir, f.Name)
		for ip, byAud := range want {
			w := byAud[aud].String()
			var got []claimsOf
			switch f.Format {
			case FormatCSV:
				got = append(got, csvClaims(t, path, ip), duckdbClaims(t, "read_csv('"+path+"', header=true, quote='\"', escape='\"', all_varchar=true, sample_size=-1)", ip, true))
			case FormatNDJSON:
				got = append(got, ndjsonClaims(t, path, ip))
			case FormatParquet:
				// Its times are timestamps: as RFC 3339 text, like the other files.
				got = append(got, duckdbClaims(t, "(SELECT * REPLACE ("+timesAsText+") FROM read_parquet('"+path+"'))", ip, false))
			case FormatMMDB:
				got = append(got, mmdbClaims(t, path, ip))
				if n := mmdbLookupCity(t, path, ip); n != byAud[aud].City {
					t.Errorf("%s: mmdblookup %s city = %q, want %q", f.Name, ip, n, byAud[aud].City)
				}
			}
			for i, g := range got {
				if g.String() != w {
					t.Errorf("%s (reader %d) %s:\n got %s\nwant %s", f.Name, i, ip, g, w)
				}
			}
		}
	}
	// The range rows carry their own place (only the Private Relay one has one).
	res := duckdb(t, `SELECT network, country, region, city FROM read_parquet('`+filepath.Join(dir, FileParquet)+`') WHERE network IS NOT NULL AND country IS NOT NULL`)
	if len(res[0]) != 1 || res[0][0]["network"] != "3.5.140.0/22" || res[0][0]["city"] != "London" || res[0][0]["region"] != "GB-EN" {
		t.Errorf("parquet rows with a place: %v", res[0])
	}
}

func csvClaims(t *testing.T, path, ip string) claimsOf {
	t.Helper()
	r := csv.NewReader(gunzip(t, path))
	header, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s: no row for %s", path, ip)
		}
		if err != nil {
			t.Fatal(err)
		}
		if row[0] == ip {
			return claimsFromColumns(t, func(name string) string { return row[col[name]] })
		}
	}
}

// claimsFromColumns reads the claims of a CSV row (every column a string).
func claimsFromColumns(t *testing.T, get func(string) string) claimsOf {
	t.Helper()
	var c claimsOf
	if s := get("asn"); s != "" {
		if _, err := fmt.Sscan(s, &c.ASN); err != nil {
			t.Fatalf("asn %q: %v", s, err)
		}
	}
	if err := json.Unmarshal([]byte(get("attributions")), &c.Attributions); err != nil {
		t.Fatalf("attributions %q: %v", get("attributions"), err)
	}
	var assets []ipmodel.Asset
	if err := json.Unmarshal([]byte(get("assets")), &assets); err != nil {
		t.Fatalf("assets: %v", err)
	}
	c.Assets = [][]ipmodel.Attribution{}
	for _, a := range assets {
		c.Assets = append(c.Assets, a.Attributions)
	}
	c.Country, c.Region, c.City = get("country"), get("region"), get("city")
	return c
}

func ndjsonClaims(t *testing.T, path, ip string) claimsOf {
	t.Helper()
	sc := bufio.NewScanner(gunzip(t, path))
	for sc.Scan() {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		if len(raw) != len(Columns) {
			t.Fatalf("ndjson line has %d keys, want %d", len(raw), len(Columns))
		}
		var r ipmodel.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.IP == ip {
			return claimsOfRecord(&r)
		}
	}
	t.Fatalf("%s: no line for %s", path, ip)
	return claimsOf{}
}

func duckdbClaims(t *testing.T, from, ip string, csvText bool) claimsOf {
	t.Helper()
	res := duckdb(t, `SELECT to_json(t)::VARCHAR AS j FROM `+from+` t WHERE ip = '`+ip+`'`)
	if len(res[0]) != 1 {
		t.Fatalf("duckdb %s: %d rows for %s", from, len(res[0]), ip)
	}
	j := res[0][0]["j"].(string)
	if csvText {
		var row map[string]*string
		if err := json.Unmarshal([]byte(j), &row); err != nil {
			t.Fatal(err)
		}
		return claimsFromColumns(t, func(name string) string {
			if row[name] == nil {
				return ""
			}
			return *row[name]
		})
	}
	var r ipmodel.Record
	if err := json.Unmarshal([]byte(j), &r); err != nil {
		t.Fatalf("%v: %s", err, j)
	}
	return claimsOfRecord(&r)
}

func mmdbClaims(t *testing.T, path, ip string) claimsOf {
	t.Helper()
	db, err := maxminddb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var r ipmodel.Record
	if err := db.Lookup(net.ParseIP(ip), &r); err != nil {
		t.Fatal(err)
	}
	return claimsOfRecord(&r)
}

// mmdbLookupCity is the city Debian's mmdblookup reads for ip ("" when
// the key is absent).
func mmdbLookupCity(t *testing.T, path, ip string) string {
	t.Helper()
	out, err := exec.Command("mmdblookup", "--file", path, "--ip", ip, "city").CombinedOutput()
	s := string(out)
	if err != nil {
		if strings.Contains(s, "No data was found") || strings.Contains(s, "does not match the data") {
			return ""
		}
		t.Fatalf("mmdblookup: %v\n%s", err, s)
	}
	i, j := strings.IndexByte(s, '"'), strings.LastIndexByte(s, '"')
	if i < 0 || j <= i {
		return ""
	}
	return s[i+1 : j]
}
