package publish

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/publish/gen"
)

func sptr(s string) *string   { return &s }
func fptr(f float64) *float64 { return &f }

// encoderRecords are generated hosts and ranges (with the claims of the
// ranges around them, as Build writes them) and records with every
// optional field set, strings that need escaping or quoting, and floats
// at the edges of the JSON number forms.
func encoderRecords(t *testing.T) []ipmodel.Record {
	t.Helper()
	g := gen.New(3000, 5)
	var out []ipmodel.Record
	idx := newRangeIndex()
	if err := g.Ranges(t.Context(), func(r ipmodel.Record) error {
		p, err := recordPrefix(&r, true)
		if err != nil {
			return err
		}
		idx.add(p, ipmodel.AudienceEnterprise, &r, false)
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := g.Hosts(t.Context(), func(r ipmodel.Record) error {
		p, err := recordPrefix(&r, false)
		if err != nil {
			return err
		}
		idx.apply(&r, p.Addr(), ipmodel.AudienceEnterprise)
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	odd := []string{"", "a", "ab", `quo"te`, `back\slash`, "new\nline", "cr\rlf\r\n", "tab\there", "\x00\x01\x1f\x7f", "\b\f",
		"<html>&amp;", "héllo wörld", "\u2028\u2029", "bad \xff\xfe utf8", " leading space", "\u00a0nbsp", `\.`, "comma,here", "x;y",
		strings.Repeat("long", 40), "2026-11-23T03:00:00Z"}
	for i, s := range odd {
		full := ipmodel.Record{
			IP: "192.0.2." + strconv.Itoa(i), Classifications: []string{ipmodel.ClassVPN, s}, Provider: sptr(s),
			Confidence: []float64{0, 1, 0.5, 1e-7, 1e21, 123456789.125, -0.25, 5e-324}[i%8],
			FirstSeen:  s, LastSeen: "2026-11-23T03:00:00Z", Sources: []string{s, "x"}, ASN: uint32(i * 70000),
			Attributions: []ipmodel.Attribution{{OrgName: s, SignalSource: "src" + s, SignalConfidence: 0.75, ObservedAt: s}},
			Country:      sptr(s), Region: sptr("R" + s), City: sptr(s + "C"),
			Assets: []ipmodel.Asset{{Port: i * 3000, ProtocolFamily: s, Vendor: sptr(s), Product: sptr("p"), VersionBand: sptr(s),
				VersionPrecision: sptr("v"), ExactVersion: sptr(s), ConfidenceBand: "high", EvidenceSources: []string{s}, FirstSeen: s, LastSeen: s,
				Attributions: []ipmodel.Attribution{{OrgName: "o", SignalSource: s, SignalConfidence: 1e-9}},
				CveSummary:   &ipmodel.CveSummary{TotalCount: i, KevCount: 1 << 40, MaxSeverityScore: fptr(9.8), MaxSeverityRating: sptr(s), EolStatus: sptr("eol"), LastComputedAt: sptr(s)},
				Cves: []ipmodel.CveFinding{{CveID: "CVE-2024-" + s, DetectionConfidence: "high", Source: s, SeverityScore: fptr(7.5), SeverityRating: sptr("high"),
					CvssVersion: sptr("3.1"), KevAddedAt: sptr(s), EpssScore: fptr(0.00001), EpssPercentile: fptr(0.999), EuvdID: sptr(s), JvnID: sptr(s), MatchedVia: sptr(s)},
					{CveID: "CVE-2024-" + s, DetectionConfidence: "high", Source: s}}},
				{Port: 65535}},
		}
		if i%2 == 1 {
			full.Network = "192.0.2.0/" + strconv.Itoa(24+i%8)
		}
		out = append(out, full, ipmodel.Record{IP: "2001:db8::" + strconv.Itoa(i)})
	}
	return out
}

// TestAppendNDJSON_MatchesEncodingJSON: the NDJSON line is the bytes
// encoding/json writes for toND(r), for every record.
func TestAppendNDJSON_MatchesEncodingJSON(t *testing.T) {
	for _, r := range encoderRecords(t) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(toND(&r)); err != nil {
			t.Fatal(err)
		}
		got, err := appendNDJSON([]byte("prefix"), &r)
		if err != nil {
			t.Fatal(err)
		}
		if w := "prefix" + strings.TrimSuffix(want.String(), "\n"); string(got) != w {
			t.Fatalf("record %s\n got %s\nwant %s", r.IP, got, w)
		}
	}
}

// TestAppendNDJSON_NaN: a float JSON cannot hold is the error
// encoding/json gives, not a line.
func TestAppendNDJSON_NaN(t *testing.T) {
	for _, r := range []ipmodel.Record{
		{IP: "192.0.2.1", Confidence: math.NaN()},
		{IP: "192.0.2.1", Attributions: []ipmodel.Attribution{{SignalConfidence: math.Inf(1)}}},
		{IP: "192.0.2.1", Assets: []ipmodel.Asset{{Cves: []ipmodel.CveFinding{{EpssScore: fptr(math.Inf(-1))}}}}},
	} {
		if _, err := appendNDJSON(nil, &r); err == nil || !strings.Contains(err.Error(), "unsupported value") {
			t.Fatalf("%+v: err %v, want unsupported value", r, err)
		}
	}
}

// oldCSVRow is the CSV row as the writer built it before it appended
// bytes: strings through encoding/csv, JSON columns through encoding/json.
func oldCSVRow(t *testing.T, r *ipmodel.Record) []string {
	t.Helper()
	js := func(v any) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	f := Flags(r)
	row := []string{r.IP, r.Network, strings.Join(r.Classifications, ListSeparator), deref(r.Provider),
		strconv.FormatFloat(r.Confidence, 'f', -1, 64), r.FirstSeen, r.LastSeen, strings.Join(r.Sources, ListSeparator)}
	for i := range f {
		row = append(row, strconv.FormatBool(f[i]))
	}
	asn := ""
	if r.ASN != 0 {
		asn = strconv.FormatUint(uint64(r.ASN), 10)
	}
	return append(row, js(ndAssets(r.Assets)), asn, js(nonNil(r.Attributions)), deref(r.Country), deref(r.Region), deref(r.City))
}

// TestCSVWriter_MatchesEncodingCSV: the CSV file is the bytes
// encoding/csv (UseCRLF) writes for the same rows.
func TestCSVWriter_MatchesEncodingCSV(t *testing.T) {
	recs := encoderRecords(t)
	var gz bytes.Buffer
	w, err := newCSVWriter(&gz)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	cw := csv.NewWriter(&want)
	cw.UseCRLF = true
	if err := cw.Write(Columns); err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i], netip.Prefix{}); err != nil {
			t.Fatal(err)
		}
		if err := cw.Write(oldCSVRow(t, &recs[i])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cw.Flush()
	zr, err := gzip.NewReader(&gz)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		gl, wl := strings.Split(string(got), "\r\n"), strings.Split(want.String(), "\r\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d\n got %q\nwant %q", i, gl[i], wl[i])
			}
		}
		t.Fatalf("got %d lines, want %d", len(gl), len(wl))
	}
	if w.Rows() != int64(len(recs)) {
		t.Fatalf("rows %d, want %d", w.Rows(), len(recs))
	}
}
