package enrich

import (
	"strings"
	"testing"

	"github.com/netintel/netintel/ingest"
)

// wantMatch is what a rules test expects Match to name for a service:
// nothing when Vendor is empty; else that vendor and each other field
// set. StrictVersion and StrictBand compare the exact version and band
// even when empty (asserting there is none).
type wantMatch struct {
	Vendor, Rule, Product, Version, Band string
	StrictVersion, StrictBand            bool
}

// checkMatch asserts what rules name for svc and returns the fingerprint
// for further checks (zero when nothing is wanted).
func checkMatch(t *testing.T, rules *Rules, svc *ingest.Service, w wantMatch) Fingerprint {
	t.Helper()
	fp, ok := rules.Match(svc, nil)
	if w.Vendor == "" {
		if ok {
			t.Errorf("named %q (rule %s), want nothing", fp.Vendor, fp.RuleID)
		}
		return Fingerprint{}
	}
	switch {
	case !ok:
		t.Errorf("named nothing, want %q", w.Vendor)
	case fp.Vendor != w.Vendor,
		w.Rule != "" && fp.RuleID != w.Rule,
		w.Product != "" && fp.Product != w.Product,
		(w.StrictVersion || w.Version != "") && fp.ExactVersion != w.Version,
		(w.StrictBand || w.Band != "") && fp.VersionBand != w.Band:
		t.Errorf("got %q %q (rule %s) version %q band %q; want %+v", fp.Vendor, fp.Product, fp.RuleID, fp.ExactVersion, fp.VersionBand, w)
	}
	return fp
}

// httpProbe is one HTTP exchange: headers as name, value pairs.
func httpProbe(method, path string, status int, body string, headers ...string) ingest.Probe {
	p := ingest.Probe{Request: &ingest.Request{Method: method, Path: path}, Response: &ingest.Response{Status: status, Body: ingest.TextBody(body)}}
	for i := 0; i+1 < len(headers); i += 2 {
		p.Response.Headers = append(p.Response.Headers, ingest.Header{Name: headers[i], Value: headers[i+1]})
	}
	return p
}

// tcpService is a TCP service on port with probes ps.
func tcpService(port int, ps ...ingest.Probe) *ingest.Service {
	return &ingest.Service{Port: port, Transport: "tcp", Probes: ps}
}

// rawAnswer is a TCP service on port whose one probe is a raw answer as a
// scanner records it, normalised as ingest does (an HTTP answer in a banner
// is read into the probe's response).
func rawAnswer(t testing.TB, port int, text string) *ingest.Service {
	t.Helper()
	o := ingest.Observation{V: 2, Type: "service", IP: "192.0.2.1", Source: "test", ObservedAt: "2026-11-27T00:00:00Z",
		Service: tcpService(port, ingest.Probe{Banner: &ingest.Banner{Received: ingest.TextBody(text)}})}
	if err := o.Normalize(); err != nil {
		t.Fatal(err)
	}
	return o.Service
}

// headerProbe is one HTTP exchange with typed headers; an empty body is
// none.
func headerProbe(method, path string, status int, body string, headers ...ingest.Header) ingest.Probe {
	p := ingest.Probe{Request: &ingest.Request{Method: method, Path: path}, Response: &ingest.Response{Status: status, Headers: headers}}
	if body != "" {
		p.Response.Body = ingest.TextBody(body)
	}
	return p
}

// matchNmapXML reads nmap's XML through the nmap-xml adapter and returns
// what rules name for each observation, in order.
func matchNmapXML(t *testing.T, rules *Rules, xml string) (got []Fingerprint, named []bool) {
	t.Helper()
	err := ingest.NmapXML(strings.NewReader(xml), ingest.Options{}, func(_ int, o ingest.Observation) error {
		fp, ok := rules.Match(o.Service, o.Flow)
		got, named = append(got, fp), append(named, ok)
		return nil
	}, func(le ingest.LineError) { t.Errorf("bad record: %v", le) })
	if err != nil {
		t.Fatal(err)
	}
	return got, named
}

// rulesAndCorpus returns the built-in rules and the accuracy corpus.
func rulesAndCorpus(t testing.TB) (*Rules, []Capture) {
	t.Helper()
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	caps, err := LoadCaptures(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	return rules, caps
}

// bannerService is a service on port and transport whose one probe is the
// raw text a scanner recorded.
func bannerService(port int, transport, text string) *ingest.Service {
	return &ingest.Service{Port: port, Transport: transport, Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody(text)}}}}
}

// namedSyslog is a case of a log line on a syslog service (514/udp) that
// the rules must name vendor's (by rule, when rule is not empty).
func namedSyslog(name, text, vendor, rule string) matchCase {
	return matchCase{name: name, svc: bannerService(514, "udp", text), want: wantMatch{Vendor: vendor, Rule: rule}}
}

// unnamedSyslog is a case of a log line on a syslog service that the rules
// must not name.
func unnamedSyslog(name, text string) matchCase {
	return matchCase{name: name, svc: bannerService(514, "udp", text)}
}

// matchCase is one row of a rules test table: a service and what the
// built-in rules must name for it.
type matchCase struct {
	name string
	svc  *ingest.Service
	want wantMatch
}

// caseList collects cases for checkMatches, one add a case.
type caseList []matchCase

func (l *caseList) add(name string, c matchCase, want wantMatch) {
	c.name, c.want = name, want
	*l = append(*l, c)
}

// bannerCase is a case of the raw text a probe of port and transport
// recorded.
func bannerCase(port int, transport, text string) matchCase {
	return matchCase{svc: bannerService(port, transport, text)}
}

// sshCase is a case of text an SSH session (22/tcp) recorded.
func sshCase(text string) matchCase { return bannerCase(22, "tcp", text) }

// checkMatches runs the built-in rules over each case as a subtest.
func checkMatches(t *testing.T, cases []matchCase) {
	t.Helper()
	rules, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			checkMatch(t, rules, tt.svc, tt.want)
		})
	}
}
