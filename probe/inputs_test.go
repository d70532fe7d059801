package probe

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readBuiltinT(t *testing.T, name string) []byte {
	t.Helper()
	b, err := fetch(t.Context(), nil, "", name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The real IANA files parse in full.
func TestParse_RealIANAFiles(t *testing.T) {
	tlds, err := ParseTLDList(readTestdata(t, "tlds-alpha-by-domain.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tlds) != 1438 {
		t.Errorf("tld list: %d TLDs, want 1438", len(tlds))
	}
	idn := 0
	for _, tld := range tlds {
		if strings.HasPrefix(tld, "xn--") {
			idn++
		}
	}
	if idn != 151 || !slices.Contains(tlds, "xn--p1ai") || tlds[0] != "aaa" {
		t.Errorf("idn TLDs %d (want 151), xn--p1ai present %v, first %q", idn, slices.Contains(tlds, "xn--p1ai"), tlds[0])
	}

	boot, err := ParseBootstrap(readTestdata(t, "dns.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(boot) != 1200 {
		t.Errorf("bootstrap: %d TLDs, want 1200", len(boot))
	}
	if got := boot["samsung"]; !slices.Equal(got, []string{"https://nic.samsung/rdap/"}) {
		t.Errorf("samsung: %v", got)
	}
	if got := boot["xn--cg4bki"]; !slices.Equal(got, []string{"https://nic.samsung/rdap/"}) {
		t.Errorf("xn--cg4bki (IDN sharing a service): %v", got)
	}
	for tld, urls := range boot {
		for _, u := range urls {
			if !strings.HasSuffix(u, "/") {
				t.Errorf("%s: base url %q lacks the trailing slash", tld, u)
			}
		}
	}

	whois, err := ParseWhoisTable(readBuiltinT(t, "builtin:tld-whois.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(whois) != 872 || whois["aaa"] != "whois.nic.aaa" {
		t.Errorf("whois table: %d servers (want 872), aaa=%q", len(whois), whois["aaa"])
	}
	if _, ok := whois["abarth"]; ok {
		t.Error("abarth has no WHOIS server in the table")
	}

	cands, err := ParseCandidates(readBuiltinT(t, "builtin:supplemental-cctld-rdap.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cands["bh"]; !slices.Equal(got, []string{"https://rdap.centralnic.com/bh/"}) {
		t.Errorf("candidates bh: %v", got)
	}
	if len(cands) < 15 {
		t.Errorf("candidates: %d TLDs", len(cands))
	}
}

func TestParse_BadInput(t *testing.T) {
	tests := []struct {
		name  string
		parse func([]byte) error
		in    string
	}{
		{"tld list with a bad line", func(b []byte) error { _, err := ParseTLDList(b); return err }, "# v1\nCOM\nnot a tld\n"},
		{"empty tld list", func(b []byte) error { _, err := ParseTLDList(b); return err }, "# only a comment\n"},
		{"html instead of tld list", func(b []byte) error { _, err := ParseTLDList(b); return err }, "<html>\n"},
		{"bootstrap not json", func(b []byte) error { _, err := ParseBootstrap(b); return err }, "<html>"},
		{"bootstrap without services", func(b []byte) error { _, err := ParseBootstrap(b); return err }, `{"version":"1.0"}`},
		{"bootstrap service shape", func(b []byte) error { _, err := ParseBootstrap(b); return err }, `{"services":[[["com"]]]}`},
		{"whois table bad tld", func(b []byte) error { _, err := ParseWhoisTable(b); return err }, "tld\twhois_server\nc*m\twhois.x\n"},
		{"candidates not json", func(b []byte) error { _, err := ParseCandidates(b); return err }, "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.parse([]byte(tc.in)); !errors.Is(err, ErrBadInput) {
				t.Errorf("err = %v, want ErrBadInput", err)
			}
		})
	}
}

func TestParseIANAWhois(t *testing.T) {
	in := "% IANA WHOIS server\n\ndomain:       CH\norganisation: SWITCH\nwhois:        whois.nic.ch\nstatus:       ACTIVE\nremarks:      Registration information: http://www.nic.ch/\n"
	got := ParseIANAWhois([]byte(in))
	if got.Whois != "whois.nic.ch" || got.RegistryURL != "http://www.nic.ch/" {
		t.Errorf("got %+v", got)
	}
	if got := ParseIANAWhois([]byte("domain: ABARTH\nwhois:\nstatus: ACTIVE\n")); got.Whois != "" {
		t.Errorf("empty whois line: %+v", got)
	}
}

func TestFetch_URLAndPath(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/tlds.txt" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("# v\nCOM\n"))
	}))
	t.Cleanup(srv.Close)
	c := newHTTPClient(NewResolver(nil), 0, 3, false)
	b, err := fetch(t.Context(), c, "ua", srv.URL+"/tlds.txt")
	if err != nil || string(b) != "# v\nCOM\n" {
		t.Fatalf("fetch url: %q %v", b, err)
	}
	if _, err := fetch(t.Context(), c, "ua", srv.URL+"/missing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404 must be an error naming the status: %v", err)
	}
	if _, err := fetch(t.Context(), c, "ua", "testdata/tlds-alpha-by-domain.txt"); err != nil {
		t.Errorf("fetch path: %v", err)
	}
	if _, err := fetch(t.Context(), c, "ua", "testdata/nope.txt"); err == nil {
		t.Error("missing file must fail")
	}
}
