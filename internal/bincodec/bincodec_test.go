package bincodec

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/netintel/netintel/internal/ipmodel"
)

func ptr[T any](v T) *T { return &v }

func TestRoundTrip(t *testing.T) {
	sum := &ipmodel.CveSummary{TotalCount: 2, KevCount: 1, MaxSeverityScore: ptr(9.8), MaxSeverityRating: ptr("critical")}
	fs := []ipmodel.CveFinding{
		{CveID: "CVE-2024-21762", DetectionConfidence: "high", Source: "nvd", SeverityScore: ptr(9.8), KevAddedAt: ptr("2024-02-09"), EpssScore: ptr(0.94)},
		{CveID: "CVE-2023-27997", DetectionConfidence: "medium", Source: "nvd", MatchedVia: ptr("version_band")},
	}
	at := ipmodel.Attribution{OrgName: "Example Org", SignalSource: "whois", SignalConfidence: 0.7, ObservedAt: "2026-11-01T00:00:00Z"}
	var e Encoder
	e.Int(-5)
	e.Int(math.MaxInt64)
	e.Str("")
	e.Str("ünïcode")
	e.F64(-0.25)
	e.OptStr(nil)
	e.OptStr(ptr("x"))
	e.OptF64(ptr(math.Inf(1)))
	e.Strs([]string{"a", "bc"})
	e.Strs(nil)
	e.Attribution(at)
	e.CveSummary(nil)
	e.CveSummary(sum)
	e.CveFindings(fs)
	e.CveFindings(nil)

	d := NewDecoder(string(e.B))
	got := []any{d.Int(), d.Int(), d.Str(), d.Str(), d.F64(), d.OptStr(), *d.OptStr(), *d.OptF64(), d.Strs(), d.Strs(),
		d.Attribution(), d.CveSummary(), d.CveSummary(), d.CveFindings(), d.CveFindings()}
	want := []any{-5, math.MaxInt64, "", "ünïcode", -0.25, (*string)(nil), "x", math.Inf(1), []string{"a", "bc"}, []string(nil),
		at, (*ipmodel.CveSummary)(nil), sum, fs, []ipmodel.CveFinding(nil)}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("value %d: got %#v, want %#v", i, got[i], want[i])
		}
	}
}

// Corrupt input is an error that sticks, never a panic or a huge
// allocation, and reads after it return zero values.
func TestCorrupt(t *testing.T) {
	var e Encoder
	e.Str("hello")
	e.F64(1)
	whole := string(e.B)
	for n := range len(whole) {
		d := NewDecoder(whole[:n])
		_, _ = d.Str(), d.F64()
		if !errors.Is(d.End(), ErrCorrupt) {
			t.Errorf("cut at %d: %v", n, d.Err())
		}
	}
	for name, b := range map[string]string{
		"count beyond input": "\xff\xff\xff\xff\x0f",
		"flag not 0 or 1":    "\x02",
		"endless varint":     "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
	} {
		d := NewDecoder(b)
		var n int
		switch name {
		case "flag not 0 or 1":
			d.Flag()
		default:
			n = d.Count()
		}
		if n != 0 || !errors.Is(d.Err(), ErrCorrupt) || d.Str() != "" || d.Int() != 0 {
			t.Errorf("%s: count %d, err %v", name, n, d.Err())
		}
	}
	d := NewDecoder(whole + "x")
	_, _ = d.Str(), d.F64()
	if !errors.Is(d.End(), ErrCorrupt) {
		t.Error("a byte left over was not reported")
	}
}
