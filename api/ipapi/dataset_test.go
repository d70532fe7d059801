package ipapi

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
)

func TestDataset_TierFormats(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{PublicURL: "https://api.example.test/"})
	cases := []struct {
		tier, query string
		status      int
		formats     []string
		unavailable []string
		needTier    string
	}{
		{"free", "", 403, nil, nil, "pro"},
		{"starter", "", 403, nil, nil, "pro"},
		{"pro", "", 200, []string{"csv", "ndjson"}, []string{"parquet", "mmdb"}, ""},
		{"scale", "format=parquet", 403, nil, nil, "business"},
		{"business", "", 200, []string{"csv", "ndjson", "parquet", "mmdb"}, []string{}, ""},
		{"enterprise", "format=mmdb", 200, []string{"mmdb"}, []string{}, ""},
	}
	for _, tt := range cases {
		t.Run(tt.tier+" "+tt.query, func(t *testing.T) {
			r := call(t, f.srv.URL, "GET", PathDataset+"?"+tt.query, "", key(tt.tier)...)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.status == 403 {
				var e ErrorBody
				_ = json.Unmarshal(r.body, &e)
				if e.Error.Code != CodeTierRequired || e.Error.RequiredTier != tt.needTier || !strings.Contains(e.Error.Message, tt.needTier) {
					t.Errorf("403 body %s, want tier %s named", r.body, tt.needTier)
				}
				return
			}
			var d DatasetResponse
			if err := json.Unmarshal(r.body, &d); err != nil {
				t.Fatal(err)
			}
			var got, un []string
			for _, fl := range d.Files {
				got = append(got, fl.Format)
				want := f.svc.Current().Manifest
				mf, _ := want.File(fl.Name)
				if fl.SHA256 != mf.SHA256 || fl.Size != mf.Size {
					t.Errorf("%s: sha/size %s/%d, want %s/%d", fl.Name, fl.SHA256, fl.Size, mf.SHA256, mf.Size)
				}
				if fl.URL != "https://api.example.test/api/v1/vpn/export/dataset/files/2026-11-23/"+fl.Name || fl.ExpiresAt != nil {
					t.Errorf("%s: link %s", fl.Name, fl.URL)
				}
			}
			un = []string{}
			for _, u := range d.Unavailable {
				un = append(un, u.Format)
			}
			if !reflect.DeepEqual(got, tt.formats) || !reflect.DeepEqual(un, tt.unavailable) {
				t.Errorf("files %v unavailable %v, want %v %v", got, un, tt.formats, tt.unavailable)
			}
			if d.Checksums == nil || !strings.HasSuffix(d.Checksums.URL, "/SHA256SUMS") {
				t.Errorf("checksums %+v", d.Checksums)
			}
		})
	}
}

func TestDownload_RangeAndETag(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	data := f.files["ipintel.csv.gz"]
	m := f.svc.Current().Manifest
	csvFile, _ := m.File("ipintel.csv.gz")
	etag := `"` + csvFile.SHA256 + `"`
	base := "/api/v1/export/dataset/files/2026-11-23/"
	cases := []struct {
		name, file string
		hdr        []string
		status     int
		body       string
		cr         string
	}{
		{"whole", "ipintel.csv.gz", nil, 200, string(data), ""},
		{"range", "ipintel.csv.gz", []string{"Range: bytes=10-19"}, 206, string(data[10:20]), "bytes 10-19/1000"},
		{"open range", "ipintel.csv.gz", []string{"Range: bytes=995-"}, 206, string(data[995:]), "bytes 995-999/1000"},
		{"suffix range", "ipintel.csv.gz", []string{"Range: bytes=-3"}, 206, string(data[997:]), "bytes 997-999/1000"},
		{"end past size", "ipintel.csv.gz", []string{"Range: bytes=990-5000"}, 206, string(data[990:]), "bytes 990-999/1000"},
		{"multi range served whole", "ipintel.csv.gz", []string{"Range: bytes=0-1,5-6"}, 200, string(data), ""},
		{"unsatisfiable", "ipintel.csv.gz", []string{"Range: bytes=1000-"}, 416, "", "bytes */1000"},
		{"if-none-match", "ipintel.csv.gz", []string{"If-None-Match: W/\"x\", " + etag}, 304, "", ""},
		{"if-none-match other", "ipintel.csv.gz", []string{`If-None-Match: "other"`}, 200, string(data), ""},
		{"if-range stale", "ipintel.csv.gz", []string{"Range: bytes=0-0", `If-Range: "old"`}, 200, string(data), ""},
		{"if-range current", "ipintel.csv.gz", []string{"Range: bytes=0-0", "If-Range: " + etag}, 206, string(data[:1]), "bytes 0-0/1000"},
		{"checksums", "SHA256SUMS", nil, 200, string(f.files["SHA256SUMS"]), ""},
		{"mmdb business", "ipintel.mmdb", nil, 200, string(f.files["ipintel.mmdb"]), ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, f.srv.URL, "GET", base+tt.file, "", append(key("business"), tt.hdr...)...)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %.200s", r.status, tt.status, r.body)
			}
			if tt.status != 416 && string(r.body) != tt.body {
				t.Errorf("body %d bytes, want %d", len(r.body), len(tt.body))
			}
			if r.header.Get("Content-Range") != tt.cr {
				t.Errorf("Content-Range %q, want %q", r.header.Get("Content-Range"), tt.cr)
			}
			if tt.file == "ipintel.csv.gz" && tt.status != 416 && r.header.Get("ETag") != etag {
				t.Errorf("ETag %q, want %q", r.header.Get("ETag"), etag)
			}
		})
	}
	t.Run("old snapshot date", func(t *testing.T) {
		r := call(t, f.srv.URL, "GET", "/api/v1/export/dataset/files/2026-11-22/ipintel.csv.gz", "", key("pro")...)
		if r.status != 404 || !strings.Contains(string(r.body), "not the current one") {
			t.Errorf("status %d: %s", r.status, r.body)
		}
	})
	t.Run("object gone", func(t *testing.T) {
		if err := f.store.Delete(t.Context(), csvFile.Key); err != nil {
			t.Fatal(err)
		}
		r := call(t, f.srv.URL, "GET", base+"ipintel.csv.gz", "", key("pro")...)
		if r.status != 404 {
			t.Errorf("status %d: %s", r.status, r.body)
		}
	})
}

// TestDataset_PresignedS3 checks that on an S3 store the links are
// presigned and fetch the file straight from the store.
func TestDataset_PresignedS3(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts versitygw")
	}
	s3 := testutil.StartS3(t)
	st, err := objstore.NewS3(t.Context(), s3.Config().S3)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Options{Store: st})
	// newFixture wrote its files to a folder; put the same into S3.
	putFiles(t, st, "2026-11-23", map[string][]byte{"ipintel.csv.gz": f.files["ipintel.csv.gz"]})
	r := call(t, f.srv.URL, "GET", PathDataset+"?format=csv", "", key("pro")...)
	var d DatasetResponse
	if err := json.Unmarshal(r.body, &d); err != nil || len(d.Files) != 1 {
		t.Fatalf("status %d body %s: %v", r.status, r.body, err)
	}
	fl := d.Files[0]
	if fl.ExpiresAt == nil || !strings.HasPrefix(fl.URL, "http://"+s3.Endpoint+"/") {
		t.Fatalf("link %s expires %v: not presigned", fl.URL, fl.ExpiresAt)
	}
	res, err := http.Get(fl.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || string(b) != string(f.files["ipintel.csv.gz"]) {
		t.Errorf("presigned GET: %d, %d bytes", res.StatusCode, len(b))
	}
}

func TestGuard(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	noKey := New(Options{})
	mux := http.NewServeMux()
	noKey.Mount(mux)
	cases := []struct {
		name string
		hdr  []string
		want int
	}{
		{"right key", key("pro"), 200},
		{"no key", []string{"X-Tier: enterprise"}, 401},
		{"wrong key", []string{"X-Internal-Key: " + testKey + "x", "X-Tier: pro"}, 401},
		{"prefix of key", []string{"X-Internal-Key: " + testKey[:5], "X-Tier: pro"}, 401},
		{"bearer only", []string{"Authorization: Bearer " + testKey, "X-Tier: pro"}, 401},
		{"apiKey query ignored", []string{"X-Tier: pro"}, 401},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			path := "/api/v1/shadow_vpn/lookup/198.51.100.7"
			if strings.Contains(tt.name, "apiKey") {
				path += "?apiKey=" + testKey
			}
			r := call(t, f.srv.URL, "GET", path, "", tt.hdr...)
			if r.status != tt.want {
				t.Fatalf("status %d, want %d", r.status, tt.want)
			}
			if tt.want == 401 && (!strings.Contains(string(r.body), CodeUnauthorized) || strings.Contains(string(r.body), testKey)) {
				t.Errorf("401 body %s", r.body)
			}
		})
	}
	t.Run("empty configured key refuses all", func(t *testing.T) {
		rec := newRecorder()
		req, _ := http.NewRequest("GET", "/api/v1/shadow_vpn/lookup/198.51.100.7", nil)
		req.Header.Set("X-Internal-Key", "")
		mux.ServeHTTP(rec, req)
		if rec.code != 401 {
			t.Errorf("status %d", rec.code)
		}
	})
}

// TestUnknownPath: another path under /api/v1/ or /public/ (the gateway
// forwards any /api/v1/vpn/export/dataset/{rest...}) answers the JSON
// error body, 401 before 404 for the protected ones.
func TestUnknownPath(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	cases := []struct {
		name, path string
		hdr        []string
		want       int
		code       string
	}{
		{"dataset short path", "/api/v1/export/dataset/files/x", key("pro"), 404, CodeNotFound},
		{"dataset deep path", "/api/v1/export/dataset/files/2026-11-23/a/b", key("pro"), 404, CodeNotFound},
		{"dataset trailing slash", "/api/v1/export/dataset/", key("pro"), 404, CodeNotFound},
		{"unknown api path", "/api/v1/nothing", key("enterprise"), 404, CodeNotFound},
		{"unknown api path without key", "/api/v1/export/dataset/files/x", nil, 401, CodeUnauthorized},
		{"lookup without address", "/api/v1/shadow_vpn/lookup/", key("pro"), 404, CodeNotFound},
		{"public lookup without address", "/public/v1/lookup/", nil, 404, CodeNotFound},
		{"unknown public path", "/public/v2/lookup/192.0.2.80", nil, 404, CodeNotFound},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, f.srv.URL, "GET", tt.path, "", tt.hdr...)
			if r.status != tt.want || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Fatalf("status %d Content-Type %q, want %d JSON: %s", r.status, r.header.Get("Content-Type"), tt.want, r.body)
			}
			var body ErrorBody
			if err := json.Unmarshal(r.body, &body); err != nil || body.Error.Code != tt.code || body.Error.Message == "" {
				t.Fatalf("body %s, want error code %s", r.body, tt.code)
			}
		})
	}
}

func TestPublic_LimitAndShape(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{PublicPerMinute: 0.01, PublicBurst: 3})
	for i := range 3 {
		r := call(t, f.srv.URL, "GET", "/public/v1/lookup/192.0.2.44", "")
		if r.status != 200 {
			t.Fatalf("request %d: status %d", i, r.status)
		}
		var p map[string]any
		_ = json.Unmarshal(r.body, &p)
		// Residential proxy is a pro feature: not in the public shape.
		if p["found"] != false || len(p["classifications"].([]any)) != 0 || p["assets"] != nil || p["provider"] != nil {
			t.Errorf("public body %s", r.body)
		}
	}
	r := call(t, f.srv.URL, "GET", "/public/v1/lookup/198.51.100.7", "")
	if r.status != 429 || r.header.Get("Retry-After") == "" || r.header.Get("Retry-After") == "0" {
		t.Fatalf("4th request: status %d Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	// The protected API is not affected.
	if r := call(t, f.srv.URL, "GET", "/api/v1/shadow_vpn/lookup/198.51.100.7", "", key("pro")...); r.status != 200 {
		t.Errorf("protected lookup after public limit: %d", r.status)
	}
}

// TestPublic_PerClientAddress checks that each client address has its own
// allowance (addresses from X-Forwarded-For, as behind the gateway), and the
// classification-only shape of a classified address.
func TestPublic_PerClientAddress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{PublicPerMinute: 0.01, PublicBurst: 2, TrustProxy: true})
	from := func(client string) resp {
		return call(t, f.srv.URL, "GET", "/public/v1/lookup/198.51.100.7", "", "X-Forwarded-For: "+client)
	}
	for i := range 2 {
		r := from("192.0.2.1")
		if r.status != 200 {
			t.Fatalf("client A request %d: status %d", i, r.status)
		}
		var p map[string]any
		_ = json.Unmarshal(r.body, &p)
		want := map[string]any{"ip": "198.51.100.7", "found": true, "classifications": []any{"vpn", "hosting"}, "snapshot_date": "2026-11-23"}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("public body %s, want exactly %v", r.body, want)
		}
	}
	if r := from("192.0.2.1"); r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("client A over its limit: status %d Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	if r := from("2001:db8::1"); r.status != 200 {
		t.Errorf("client B limited by client A's requests: status %d", r.status)
	}
	if r := call(t, f.srv.URL, "GET", PathPublicSn, "", "X-Forwarded-For: 192.0.2.1"); r.status != 429 {
		t.Errorf("/public/v1/snapshot for client A: status %d, want 429 (one allowance for both routes)", r.status)
	}
}

type recorder struct {
	h    http.Header
	code int
}

func newRecorder() *recorder                    { return &recorder{h: http.Header{}, code: 200} }
func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) WriteHeader(c int)           { r.code = c }
func (r *recorder) Write(p []byte) (int, error) { return len(p), nil }

// TestDownload_LastModified checks Last-Modified on dataset files and the
// If-Modified-Since answers curl -z and wget -N rely on; If-None-Match,
// when sent, decides alone (RFC 9110 13.2.2).
func TestDownload_LastModified(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	m := f.svc.Current().Manifest
	csvFile, _ := m.File("ipintel.csv.gz")
	etag := `"` + csvFile.SHA256 + `"`
	info, err := f.store.Stat(t.Context(), csvFile.Key)
	if err != nil {
		t.Fatal(err)
	}
	mod := info.ModTime.UTC().Truncate(time.Second)
	base := "/api/v1/export/dataset/files/2026-11-23/"
	first := call(t, f.srv.URL, "GET", base+"ipintel.csv.gz", "", key("pro")...)
	if got := first.header.Get("Last-Modified"); got != mod.Format(http.TimeFormat) {
		t.Fatalf("Last-Modified %q, want %q", got, mod.Format(http.TimeFormat))
	}
	sums := call(t, f.srv.URL, "GET", base+"SHA256SUMS", "", key("pro")...)
	if _, err := http.ParseTime(sums.header.Get("Last-Modified")); err != nil {
		t.Errorf("SHA256SUMS Last-Modified %q: %v", sums.header.Get("Last-Modified"), err)
	}
	cases := []struct {
		name   string
		file   string
		hdr    []string
		status int
	}{
		{"same time", "ipintel.csv.gz", []string{"If-Modified-Since: " + mod.Format(http.TimeFormat)}, 304},
		{"later", "ipintel.csv.gz", []string{"If-Modified-Since: " + mod.Add(time.Hour).Format(http.TimeFormat)}, 304},
		{"earlier", "ipintel.csv.gz", []string{"If-Modified-Since: " + mod.Add(-time.Second).Format(http.TimeFormat)}, 200},
		{"bad date ignored", "ipintel.csv.gz", []string{"If-Modified-Since: yesterday"}, 200},
		{"if-none-match decides", "ipintel.csv.gz", []string{`If-None-Match: "other"`, "If-Modified-Since: " + mod.Format(http.TimeFormat)}, 200},
		{"if-none-match matches", "ipintel.csv.gz", []string{"If-None-Match: " + etag, "If-Modified-Since: " + mod.Add(-time.Hour).Format(http.TimeFormat)}, 304},
		{"checksums not modified", "SHA256SUMS", []string{"If-Modified-Since: " + sums.header.Get("Last-Modified")}, 304},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, f.srv.URL, "GET", base+tt.file, "", append(key("pro"), tt.hdr...)...)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d", r.status, tt.status)
			}
			if tt.status == 304 && len(r.body) != 0 {
				t.Errorf("304 with a %d-byte body", len(r.body))
			}
		})
	}
	// curl -z FILE sends the local file's time: an up-to-date copy is
	// not fetched again, an older one is.
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "ipintel.csv.gz")
	fetch := func() {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), curl, "-sS", "-f", "-z", out, "-o", out, "-R",
			"-H", "X-Internal-Key: "+testKey, "-H", "X-Tier: pro", f.srv.URL+base+"ipintel.csv.gz")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("curl: %v %s", err, b)
		}
	}
	fetch()
	if b, _ := os.ReadFile(out); string(b) != string(f.files["ipintel.csv.gz"]) {
		t.Fatalf("curl fetched %d bytes, want the file", len(b))
	}
	// -R set the file's time to Last-Modified; replace the content and
	// keep that time: curl -z must not fetch (304), so the content stays.
	if err := os.WriteFile(out, []byte("local"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(out, mod, mod); err != nil {
		t.Fatal(err)
	}
	fetch()
	if b, _ := os.ReadFile(out); string(b) != "local" {
		t.Fatalf("curl -z fetched a file that was not modified (%d bytes)", len(b))
	}
	old := mod.Add(-24 * time.Hour)
	if err := os.Chtimes(out, old, old); err != nil {
		t.Fatal(err)
	}
	fetch()
	if b, _ := os.ReadFile(out); string(b) != string(f.files["ipintel.csv.gz"]) {
		t.Fatalf("curl -z did not fetch a newer file")
	}
}
