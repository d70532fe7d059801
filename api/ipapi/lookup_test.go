package ipapi

import (
	"encoding/json"
	"reflect"
	"testing"
)

func lookupBody(t *testing.T, r resp) LookupResult {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var out struct {
		IP     string            `json:"ip"`
		Assets []json.RawMessage `json:"assets"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatal(err)
	}
	var res LookupResult
	if err := json.Unmarshal(r.body, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestLookup_TierAndFilters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	type want struct {
		ports []int    // asset ports
		orgs  []string // attribution orgs of the first asset
		cves  []string // cve ids of the first asset; nil = no cves key
		lca   bool     // last_computed_at present in the first asset's summary
	}
	cases := []struct {
		name, path, tier string
		want             want
	}{
		{"free hides residential, netflow and freshness", "/198.51.100.7", "free",
			want{ports: []int{443}, orgs: []string{"Example Corp", "Globex, Inc."}}},
		{"pro adds residential and freshness", "/198.51.100.7", "pro",
			want{ports: []int{443}, orgs: []string{"Example Corp", "Globex, Inc.", "Bright Data Ltd."}, lca: true}},
		{"enterprise adds netflow assets", "/198.51.100.7", "enterprise",
			want{ports: []int{443, 2055}, orgs: []string{"Example Corp", "Globex, Inc.", "Bright Data Ltd."}, lca: true}},
		{"min_confidence filters attributions", "/198.51.100.7?min_confidence=0.7", "pro",
			want{ports: []int{443}, orgs: []string{"Example Corp", "Bright Data Ltd."}, lca: true}},
		{"min_confidence 1 keeps none", "/198.51.100.7?min_confidence=1", "pro",
			want{ports: []int{443}, orgs: []string{}, lca: true}},
		{"include cves", "/198.51.100.7?include=cves", "pro",
			want{ports: []int{443}, orgs: []string{"Example Corp", "Globex, Inc.", "Bright Data Ltd."}, cves: []string{"CVE-2024-21762", "CVE-2023-27997", "CVE-2022-0001"}, lca: true}},
		{"min_severity critical", "/198.51.100.7?include=cves&min_severity=critical", "free",
			want{ports: []int{443}, orgs: []string{"Example Corp", "Globex, Inc."}, cves: []string{"CVE-2024-21762", "CVE-2023-27997"}}},
		{"kev_only", "/198.51.100.7?include=cves&kev_only=true", "free",
			want{ports: []int{443}, orgs: []string{"Example Corp", "Globex, Inc."}, cves: []string{"CVE-2024-21762"}}},
		{"cve_min_confidence medium", "/198.51.100.7?include=cves&cve_min_confidence=medium", "free",
			want{ports: []int{443}, orgs: []string{"Example Corp", "Globex, Inc."}, cves: []string{"CVE-2024-21762", "CVE-2023-27997"}}},
		{"cve filters combine", "/198.51.100.7?include=cves&kev_only=1&cve_min_confidence=high&min_severity=low", "free",
			want{ports: []int{443}, orgs: []string{"Example Corp", "Globex, Inc."}, cves: []string{"CVE-2024-21762"}}},
		{"cve filters without include", "/198.51.100.7?kev_only=true&min_severity=high", "free",
			want{ports: []int{443}, orgs: []string{"Example Corp", "Globex, Inc."}}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, f.srv.URL, "GET", "/api/v1/shadow_vpn/lookup"+tt.path, "", key(tt.tier)...)
			res := lookupBody(t, r)
			var ports []int
			for _, a := range res.Assets {
				ports = append(ports, a.Port)
			}
			if !reflect.DeepEqual(ports, tt.want.ports) {
				t.Fatalf("ports %v, want %v", ports, tt.want.ports)
			}
			var raw struct {
				Assets []map[string]json.RawMessage `json:"assets"`
			}
			_ = json.Unmarshal(r.body, &raw)
			a0 := res.Assets[0]
			orgs := []string{}
			for _, at := range a0.Attributions {
				orgs = append(orgs, at.OrgName)
			}
			if !reflect.DeepEqual(orgs, tt.want.orgs) {
				t.Errorf("orgs %v, want %v", orgs, tt.want.orgs)
			}
			_, hasCves := raw.Assets[0]["cves"]
			if hasCves != (tt.want.cves != nil) {
				t.Fatalf("cves key present = %v, want %v", hasCves, tt.want.cves != nil)
			}
			if tt.want.cves != nil {
				var ids []string
				for _, c := range *a0.Cves {
					ids = append(ids, c.CveID)
				}
				if !reflect.DeepEqual(ids, tt.want.cves) {
					t.Errorf("cves %v, want %v", ids, tt.want.cves)
				}
			}
			var sum map[string]json.RawMessage
			_ = json.Unmarshal(raw.Assets[0]["cve_summary"], &sum)
			if _, ok := sum["last_computed_at"]; ok != tt.want.lca {
				t.Errorf("last_computed_at present = %v, want %v", ok, tt.want.lca)
			}
			for _, k := range []string{"port", "protocol_family", "vendor", "product", "version_band", "version_precision", "exact_version", "confidence_band", "evidence_sources", "first_seen", "last_seen", "attributions"} {
				if _, ok := raw.Assets[0][k]; !ok {
					t.Errorf("required key %s missing", k)
				}
			}
		})
	}
}

// TestLookup_EmptyCves checks that include=cves gives an asset without
// findings "cves": [] (present, not null) and nothing else changes shape.
func TestLookup_EmptyCves(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	for _, q := range []string{"?include=cves", "?include=cves&kev_only=true&min_severity=low"} {
		r := call(t, f.srv.URL, "GET", "/api/v1/shadow_vpn/lookup/2001:db8::5"+q, "", key("pro")...)
		if r.status != 200 {
			t.Fatalf("%s: status %d: %s", q, r.status, r.body)
		}
		var raw struct {
			Assets []map[string]json.RawMessage `json:"assets"`
		}
		if err := json.Unmarshal(r.body, &raw); err != nil || len(raw.Assets) != 1 {
			t.Fatalf("%s: body %s: %v", q, r.body, err)
		}
		if got := string(raw.Assets[0]["cves"]); got != "[]" {
			t.Errorf("%s: cves %s, want []", q, got)
		}
	}
}

func TestLookup_Addresses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	cases := []struct {
		name, ip string
		status   int
		wantIP   string
	}{
		{"ipv4", "203.0.113.9", 200, "203.0.113.9"},
		{"ipv6 expanded", "2001:0db8:0000:0000:0000:0000:0000:0005", 200, "2001:db8::5"},
		{"ipv6 upper case", "2001:DB8::5", 200, "2001:db8::5"},
		{"ipv4-mapped ipv6", "::ffff:203.0.113.9", 200, "203.0.113.9"},
		{"only a range, no assets", "203.0.113.10", 404, ""},
		{"classified, no assets", "192.0.2.44", 404, ""},
		{"netflow-only below enterprise", "192.0.2.80", 404, ""},
		{"leading zero", "203.0.113.09", 400, ""},
		{"zone", "fe80::1%25eth0", 400, ""},
		{"cidr", "203.0.113.0%2F24", 400, ""},
		{"name", "example.com", 400, ""},
		{"too long", "1111111111111111111111111111111111111111111111111111111111111111111111111", 400, ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, f.srv.URL, "GET", "/api/v1/shadow_vpn/lookup/"+tt.ip, "", key("pro")...)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			body := r.json(t)
			switch tt.status {
			case 200:
				if body["ip"] != tt.wantIP {
					t.Errorf("ip %v, want %v", body["ip"], tt.wantIP)
				}
			case 400:
				if e, _ := body["error"].(map[string]any); e["code"] != CodeInvalidIP {
					t.Errorf("body %s, want error.code invalid_ip", r.body)
				}
			case 404:
				if e, _ := body["error"].(map[string]any); e["code"] != CodeNotFound {
					t.Errorf("body %s, want error.code not_found", r.body)
				}
			}
		})
	}
}

func TestLookup_ValidationBody(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	cases := []struct {
		name, query string
		want        []ValidationItem
	}{
		{"min_confidence above 1", "min_confidence=1.5", []ValidationItem{{Loc: []any{"query", "min_confidence"}, Msg: "Input should be less than or equal to 1", Type: "less_than_equal", Input: "1.5", Ctx: map[string]any{"le": 1.0}}}},
		{"min_confidence below 0", "min_confidence=-0.1", []ValidationItem{{Loc: []any{"query", "min_confidence"}, Msg: "Input should be greater than or equal to 0", Type: "greater_than_equal", Input: "-0.1", Ctx: map[string]any{"ge": 0.0}}}},
		{"min_confidence text", "min_confidence=high", []ValidationItem{{Loc: []any{"query", "min_confidence"}, Msg: "Input should be a valid number, unable to parse string as a number", Type: "float_parsing", Input: "high"}}},
		{"min_confidence NaN", "min_confidence=NaN", []ValidationItem{{Loc: []any{"query", "min_confidence"}, Msg: "Input should be a finite number", Type: "finite_number", Input: "NaN"}}},
		{"min_severity", "min_severity=urgent", []ValidationItem{{Loc: []any{"query", "min_severity"}, Msg: "Input should be 'low', 'medium', 'high' or 'critical'", Type: "enum", Input: "urgent", Ctx: map[string]any{"expected": "'low', 'medium', 'high' or 'critical'"}}}},
		{"kev_only", "kev_only=maybe", []ValidationItem{{Loc: []any{"query", "kev_only"}, Msg: "Input should be a valid boolean, unable to interpret input", Type: "bool_parsing", Input: "maybe"}}},
		{"cve_min_confidence", "cve_min_confidence=certain", []ValidationItem{{Loc: []any{"query", "cve_min_confidence"}, Msg: "Input should be 'low', 'medium' or 'high'", Type: "enum", Input: "certain", Ctx: map[string]any{"expected": "'low', 'medium' or 'high'"}}}},
		{"include", "include=cves,geo", []ValidationItem{{Loc: []any{"query", "include"}, Msg: "Input should be 'cves'", Type: "enum", Input: "cves,geo", Ctx: map[string]any{"expected": "'cves'"}}}},
		{"every problem at once", "min_confidence=2&kev_only=x", []ValidationItem{
			{Loc: []any{"query", "min_confidence"}, Msg: "Input should be less than or equal to 1", Type: "less_than_equal", Input: "2", Ctx: map[string]any{"le": 1.0}},
			{Loc: []any{"query", "kev_only"}, Msg: "Input should be a valid boolean, unable to interpret input", Type: "bool_parsing", Input: "x"}}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, f.srv.URL, "GET", "/api/v1/shadow_vpn/lookup/198.51.100.7?"+tt.query, "", key("pro")...)
			if r.status != 422 {
				t.Fatalf("status %d, want 422: %s", r.status, r.body)
			}
			var got ValidationError
			if err := json.Unmarshal(r.body, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Detail, tt.want) {
				t.Errorf("detail\n got %#v\nwant %#v", got.Detail, tt.want)
			}
		})
	}
}
