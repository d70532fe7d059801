package ipapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
)

// contract checks responses against openapi.json and records which
// documented (path, method, status) triples the tests produced.
type contract struct {
	doc  map[string]any
	c    *jsonschema.Compiler
	seen map[string]bool
}

func loadContract(t *testing.T) *contract {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(OpenAPI))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://openapi.json", inst); err != nil {
		t.Fatal(err)
	}
	return &contract{doc: doc, c: c, seen: map[string]bool{}}
}

func ptrEscape(s string) string {
	return url.PathEscape(strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1"))
}

func get(m any, keys ...string) (any, bool) {
	for _, k := range keys {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil, false
		}
		if m, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return m, true
}

// check asserts that r's status is documented for method+pattern, that the
// documented headers are present and that a JSON body validates.
func (c *contract) check(t *testing.T, method, pattern string, r resp) {
	t.Helper()
	m := strings.ToLower(method)
	status := strconv.Itoa(r.status)
	c.seen[pattern+" "+m+" "+status] = true
	ptr := "/paths/" + ptrEscape(pattern) + "/" + m + "/responses/" + status
	resp, ok := get(c.doc, "paths", pattern, m, "responses", status)
	if !ok {
		t.Fatalf("%s %s answered %d, which openapi.json does not document (body %s)", method, pattern, r.status, r.body)
	}
	if ref, ok := get(resp, "$ref"); ok {
		name := strings.TrimPrefix(ref.(string), "#/components/responses/")
		resp, _ = get(c.doc, "components", "responses", name)
		ptr = "/components/responses/" + name
	}
	if hs, ok := get(resp, "headers"); ok {
		for h := range hs.(map[string]any) {
			if r.header.Get(h) == "" {
				t.Errorf("%s %s %d: documented header %s missing", method, pattern, r.status, h)
			}
		}
	}
	if _, ok := get(resp, "content", "application/json", "schema"); !ok {
		if _, isJSON := get(resp, "content", "application/json"); isJSON {
			t.Fatalf("%s: application/json without schema", ptr)
		}
		return
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s %s %d: Content-Type %q, want application/json", method, pattern, r.status, ct)
	}
	sch, err := c.c.Compile("mem://openapi.json#" + ptr + "/content/" + ptrEscape("application/json") + "/schema")
	if err != nil {
		t.Fatalf("compile schema at %s: %v", ptr, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("%s %s %d: body is not JSON: %v", method, pattern, r.status, err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("%s %s %d: body does not match the documented schema: %v\nbody: %s", method, pattern, r.status, err, r.body)
	}
}

// documented lists every (path, method, status) in openapi.json.
func (c *contract) documented() []string {
	var out []string
	for p, ops := range c.doc["paths"].(map[string]any) {
		for m, op := range ops.(map[string]any) {
			rs, _ := get(op, "responses")
			for st := range rs.(map[string]any) {
				out = append(out, p+" "+m+" "+st)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestAPI_Contract drives every route through every status it produces,
// checks that each is documented with its headers, and validates every JSON
// body against the document's schema; then checks that nothing documented
// went untested.
func TestAPI_Contract(t *testing.T) {
	t.Parallel()
	c := loadContract(t)
	f := newFixture(t, Options{})
	strict := newFixture(t, Options{PublicPerMinute: 0.0001, PublicBurst: 1})
	empty := New(Options{InternalKey: testKey, Log: testutil.Logger(t)})
	mux := http.NewServeMux()
	empty.Mount(mux)
	none := httptest.NewServer(mux)
	t.Cleanup(none.Close)
	csvSum := f.svc.Current().Manifest.Files[0].SHA256
	// down: the object store fails; corrupt: the MMDB does not decode.
	down := newFixture(t, Options{Store: downStore{}})
	corrupt := newFixture(t, Options{})
	cur := corrupt.svc.Current()
	corrupt.svc.Swap(sameView(cur.Manifest, brokenIndex{}, cur.Complete().Rows))

	type tc struct {
		name, method, pattern, path, body string
		base                              string
		hdr                               []string
		want                              int
	}
	F, S, N, D, C := f.srv.URL, strict.srv.URL, none.URL, down.srv.URL, corrupt.srv.URL
	dl := "/api/v1/export/dataset/files/2026-11-23/"
	cases := []tc{
		{"lookup v4", "GET", PathLookup, "/api/v1/shadow_vpn/lookup/198.51.100.7?include=cves", "", F, key("enterprise"), 200},
		{"lookup v6", "GET", PathLookup, "/api/v1/shadow_vpn/lookup/2001:db8:0:0::5", "", F, key("free"), 200},
		{"lookup malformed", "GET", PathLookup, "/api/v1/shadow_vpn/lookup/1.2.3", "", F, key("pro"), 400},
		{"lookup no key", "GET", PathLookup, "/api/v1/shadow_vpn/lookup/198.51.100.7", "", F, []string{"Authorization: Bearer svc_vpn_x_y", "X-Tier: enterprise"}, 401},
		{"lookup unknown", "GET", PathLookup, "/api/v1/shadow_vpn/lookup/10.1.2.3", "", F, key("pro"), 404},
		{"lookup bad query", "GET", PathLookup, "/api/v1/shadow_vpn/lookup/198.51.100.7?min_confidence=1.5&min_severity=urgent&kev_only=maybe", "", F, key("pro"), 422},
		{"lookup no snapshot", "GET", PathLookup, "/api/v1/shadow_vpn/lookup/198.51.100.7", "", N, key("pro"), 503},
		{"lookup corrupt snapshot", "GET", PathLookup, "/api/v1/shadow_vpn/lookup/198.51.100.7", "", C, key("pro"), 500},
		{"ip tor exit", "GET", PathIP, "/api/v1/ip/192.0.2.80", "", F, key("free"), 200},
		{"ip with assets", "GET", PathIP, "/api/v1/ip/198.51.100.7?include=cves", "", F, key("enterprise"), 200},
		{"ip range", "GET", PathIP, "/api/v1/ip/203.0.113.10", "", F, key("pro"), 200},
		{"ip malformed", "GET", PathIP, "/api/v1/ip/1.2.3", "", F, key("pro"), 400},
		{"ip no key", "GET", PathIP, "/api/v1/ip/192.0.2.80", "", F, nil, 401},
		{"ip unknown", "GET", PathIP, "/api/v1/ip/10.1.2.3", "", F, key("pro"), 404},
		{"ip residential for free", "GET", PathIP, "/api/v1/ip/192.0.2.44", "", F, key("free"), 404},
		{"ip bad query", "GET", PathIP, "/api/v1/ip/192.0.2.80?min_confidence=2", "", F, key("pro"), 422},
		{"ip no snapshot", "GET", PathIP, "/api/v1/ip/192.0.2.80", "", N, key("pro"), 503},
		{"ip corrupt snapshot", "GET", PathIP, "/api/v1/ip/192.0.2.80", "", C, key("pro"), 500},
		{"batch", "POST", PathBatch, PathBatch, `{"ips":["198.51.100.7","nope","10.9.9.9","2001:db8::5"]}`, F, key("pro"), 200},
		{"batch no key", "POST", PathBatch, PathBatch, `{"ips":["198.51.100.7"]}`, F, nil, 401},
		{"batch not json", "POST", PathBatch, PathBatch, `{"ips":`, F, key("pro"), 422},
		{"batch no snapshot", "POST", PathBatch, PathBatch, `{"ips":["198.51.100.7"]}`, N, key("pro"), 503},
		{"batch corrupt snapshot", "POST", PathBatch, PathBatch, `{"ips":["198.51.100.7","nope"]}`, C, key("pro"), 200},
		{"csv", "GET", PathCSV, PathCSV + "?limit=3", "", F, key("pro"), 200},
		{"csv no key", "GET", PathCSV, PathCSV, "", F, []string{"X-Internal-Key: wrong", "X-Tier: pro"}, 401},
		{"csv free", "GET", PathCSV, PathCSV, "", F, key("starter"), 403},
		{"csv bad limit", "GET", PathCSV, PathCSV + "?limit=0", "", F, key("pro"), 422},
		{"csv no snapshot", "GET", PathCSV, PathCSV, "", N, key("pro"), 503},
		{"dataset", "GET", PathDataset, PathDataset, "", F, key("pro"), 200},
		{"dataset no key", "GET", PathDataset, PathDataset, "", F, nil, 401},
		{"dataset mmdb for scale", "GET", PathDataset, PathDataset + "?format=mmdb", "", F, key("scale"), 403},
		{"dataset bad format", "GET", PathDataset, PathDataset + "?format=xlsx", "", F, key("pro"), 422},
		{"dataset no snapshot", "GET", PathDataset, PathDataset, "", N, key("pro"), 503},
		{"dataset store down", "GET", PathDataset, PathDataset, "", D, key("pro"), 503},
		{"download", "GET", PathDownload, dl + "ipintel.csv.gz", "", F, key("pro"), 200},
		{"download range", "GET", PathDownload, dl + "ipintel.csv.gz", "", F, append(key("pro"), "Range: bytes=0-9"), 206},
		{"download not modified", "GET", PathDownload, dl + "ipintel.csv.gz", "", F, append(key("pro"), `If-None-Match: "`+csvSum+`"`), 304},
		{"download no key", "GET", PathDownload, dl + "ipintel.csv.gz", "", F, nil, 401},
		{"download mmdb for pro", "GET", PathDownload, dl + "ipintel.mmdb", "", F, key("pro"), 403},
		{"download missing", "GET", PathDownload, dl + "nope.bin", "", F, key("pro"), 404},
		{"download bad range", "GET", PathDownload, dl + "ipintel.csv.gz", "", F, append(key("pro"), "Range: bytes=5000-"), 416},
		{"download no snapshot", "GET", PathDownload, dl + "ipintel.csv.gz", "", N, key("pro"), 503},
		{"download store down", "GET", PathDownload, dl + "ipintel.csv.gz", "", D, key("pro"), 503},
		{"public", "GET", PathPublic, "/public/v1/lookup/192.0.2.80", "", F, nil, 200},
		{"public malformed", "GET", PathPublic, "/public/v1/lookup/999.1.1.1", "", F, nil, 400},
		{"public first", "GET", PathPublic, "/public/v1/lookup/192.0.2.80", "", S, nil, 200},
		{"public limited", "GET", PathPublic, "/public/v1/lookup/192.0.2.80", "", S, nil, 429},
		{"public no snapshot", "GET", PathPublic, "/public/v1/lookup/192.0.2.80", "", N, nil, 503},
		{"public snapshot", "GET", PathPublicSn, PathPublicSn, "", F, nil, 200},
		{"public snapshot limited", "GET", PathPublicSn, PathPublicSn, "", S, nil, 429},
		{"public snapshot none", "GET", PathPublicSn, PathPublicSn, "", N, nil, 503},
		{"openapi", "GET", PathOpenAPI, PathOpenAPI, "", N, nil, 200},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, tt.base, tt.method, tt.path, tt.body, tt.hdr...)
			if r.status != tt.want {
				t.Fatalf("status %d, want %d: %s", r.status, tt.want, r.body)
			}
			c.check(t, tt.method, tt.pattern, r)
		})
	}
	// 405: another method on a documented path answers in the Error shape
	// with Allow; it is documented on the path's own operation.
	wrong := []struct {
		name, method, op, pattern, path, allow string
	}{
		{"lookup POST", "POST", "GET", PathLookup, "/api/v1/shadow_vpn/lookup/198.51.100.7", "GET, HEAD"},
		{"batch GET", "GET", "POST", PathBatch, PathBatch, "POST"},
		{"batch PUT", "PUT", "POST", PathBatch, PathBatch, "POST"},
		{"ip POST", "POST", "GET", PathIP, "/api/v1/ip/192.0.2.80", "GET, HEAD"},
		{"csv PUT", "PUT", "GET", PathCSV, PathCSV, "GET, HEAD"},
		{"dataset DELETE", "DELETE", "GET", PathDataset, PathDataset, "GET, HEAD"},
		{"download POST", "POST", "GET", PathDownload, dl + "ipintel.csv.gz", "GET, HEAD"},
		{"public PATCH", "PATCH", "GET", PathPublic, "/public/v1/lookup/192.0.2.80", "GET, HEAD"},
		{"public snapshot POST", "POST", "GET", PathPublicSn, PathPublicSn, "GET, HEAD"},
		{"openapi POST", "POST", "GET", PathOpenAPI, PathOpenAPI, "GET, HEAD"},
	}
	for _, tt := range wrong {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, F, tt.method, tt.path, "", key("enterprise")...)
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != tt.allow {
				t.Fatalf("status %d Allow %q, want 405 Allow %q: %s", r.status, r.header.Get("Allow"), tt.allow, r.body)
			}
			if code, _ := get(r.json(t), "error", "code"); code != CodeMethodNotAllowed {
				t.Fatalf("error.code %v, want %s", code, CodeMethodNotAllowed)
			}
			c.check(t, tt.op, tt.pattern, r)
		})
	}
	for _, d := range c.documented() {
		if !c.seen[d] {
			t.Errorf("documented but never produced by a test: %s", d)
		}
	}
	if t.Failed() {
		fmt.Println("seen:", c.seen)
	}
}

// downStore is an object store that cannot be reached.
type downStore struct{ objstore.Store }

var errDown = errors.New("connection refused")

func (downStore) Get(context.Context, string, *objstore.Range) (io.ReadCloser, objstore.Info, error) {
	return nil, objstore.Info{}, errDown
}
func (downStore) Stat(context.Context, string) (objstore.Info, error) {
	return objstore.Info{}, errDown
}
func (downStore) PresignGet(context.Context, string, time.Duration, string) (string, error) {
	return "", errDown
}

// brokenIndex is a snapshot whose MMDB does not decode anywhere.
type brokenIndex struct{}

func (brokenIndex) Lookup(netip.Addr, bool) (*ipmodel.Record, bool, error) {
	return nil, false, errors.New("maxminddb: invalid data section")
}
