package ipapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/objstore"
	"github.com/netintel/netintel/internal/testutil"
	"github.com/netintel/netintel/publish"
	"github.com/netintel/netintel/publish/gen"
)

// The delta files are offered and served with the tier rules of their
// full formats: NDJSON delta from pro, Parquet delta from business, each
// tier its audience's build.
func TestDataset_Delta(t *testing.T) {
	st, err := objstore.NewFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default().Publish
	cfg.WorkDir = t.TempDir()
	pub := publish.New(cfg, st, nil, testutil.Logger(t))
	base := gen.New(300, 1)
	for i, s := range []ipmodel.State{base, &gen.Churned{Base: base, Every: 30}} {
		day := time.Date(2026, 11, 22+i, 3, 0, 0, 0, time.UTC)
		pub.Now = func() time.Time { return day }
		if _, err := pub.Run(t.Context(), s, day.Format(publish.DateFormat)); err != nil {
			t.Fatal(err)
		}
	}
	svc := New(Options{InternalKey: testKey, Store: st, Log: testutil.Logger(t)})
	mux := http.NewServeMux()
	svc.Mount(mux)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	svc.refresh(t.Context())

	cases := []struct {
		tier        string
		files       []string
		unavailable []string
	}{
		{"pro", []string{"ipintel-pro.csv.gz", "ipintel-pro.ndjson.gz", "ipintel-delta-pro.ndjson.gz"}, []string{"parquet", "mmdb", "parquet-delta"}},
		{"business", []string{"ipintel-pro.csv.gz", "ipintel-pro.ndjson.gz", "ipintel-pro.parquet", "ipintel-pro.mmdb", "ipintel-delta-pro.ndjson.gz", "ipintel-delta-pro.parquet"}, []string{}},
		{"enterprise", []string{"ipintel.csv.gz", "ipintel.ndjson.gz", "ipintel.parquet", "ipintel.mmdb", "ipintel-delta.ndjson.gz", "ipintel-delta.parquet"}, []string{}},
	}
	for _, tt := range cases {
		t.Run(tt.tier, func(t *testing.T) {
			r := call(t, hs.URL, "GET", PathDataset, "", key(tt.tier)...)
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			var d DatasetResponse
			if err := json.Unmarshal(r.body, &d); err != nil {
				t.Fatal(err)
			}
			if d.DeltaBase == nil || d.DeltaBase.SnapshotDate != "2026-11-22" || d.DeltaBase.GapDays != 0 {
				t.Fatalf("delta_base %+v", d.DeltaBase)
			}
			var names, un []string
			for _, f := range d.Files {
				names = append(names, f.Name)
				if strings.HasSuffix(f.Format, "-delta") && (f.Ops == nil || f.Ops.Add == 0 || f.Ops.Change == 0 || f.Ops.Remove == 0) {
					t.Errorf("%s ops %+v", f.Name, f.Ops)
				}
			}
			un = []string{}
			for _, u := range d.Unavailable {
				un = append(un, u.Format)
			}
			if !slices.Equal(names, tt.files) || !slices.Equal(un, tt.unavailable) {
				t.Fatalf("files %v unavailable %v, want %v %v", names, un, tt.files, tt.unavailable)
			}
		})
	}
	t.Run("downloads", func(t *testing.T) {
		d, got := fetchDataset(t, hs.URL) // business: every file, ETags, sha256sum -c
		for _, f := range d.Files {
			if f.Format == "ndjson-delta" && len(got[f.Name].body) != int(f.Size) {
				t.Fatalf("%s: %d bytes, manifest %d", f.Name, len(got[f.Name].body), f.Size)
			}
		}
		path := "/api/v1/export/dataset/files/2026-11-23/"
		for _, c := range []struct {
			tier, name string
			status     int
			need       string
		}{
			{"pro", "ipintel-delta-pro.ndjson.gz", 200, ""},
			{"pro", "ipintel-delta-pro.parquet", 403, "business"},
			{"pro", "ipintel-delta.ndjson.gz", 403, "enterprise"},
			{"starter", "ipintel-delta-pro.ndjson.gz", 403, "pro"},
			{"enterprise", "ipintel-delta.parquet", 200, ""},
		} {
			r := call(t, hs.URL, "GET", path+c.name, "", key(c.tier)...)
			if r.status != c.status || (c.need != "" && !strings.Contains(string(r.body), c.need)) {
				t.Errorf("%s %s: %d %s, want %d naming %q", c.tier, c.name, r.status, r.body, c.status, c.need)
			}
		}
		r := call(t, hs.URL, "GET", PathDataset+"?format=parquet-delta", "", key("scale")...)
		if r.status != 403 || !strings.Contains(string(r.body), "business") {
			t.Errorf("scale ?format=parquet-delta: %d %s", r.status, r.body)
		}
	})
}
