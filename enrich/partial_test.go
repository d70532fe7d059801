package enrich

import (
	"slices"
	"strings"
	"testing"

	"github.com/netintel/netintel/ingest"
)

// namedNegativeVariants is, by kind of variant, how many variants of the
// plain negatives the built-in rules name (docs/accuracy.md, "Partial
// evidence"): honeypots and look-alikes whose whole capture is guarded by a
// piece the variant drops (the generic server's headers beside a copied
// body, a second probe's certificate). A rule change may lower these, never
// raise them. New negatives may: group AR10's imitations raised "body
// only" from 67 to 75 (NachoVPN's SonicWall SMA pages, the product's own
// bodies under its nginx handler; Galah's answers to the Zyxel ZTP and
// GlobalProtect probes), each told apart only by its headers, which that
// variant drops.
var namedNegativeVariants = map[string]int{
	VariantProbe: 3, VariantHeaders: 7, VariantBody: 75, VariantLowerHeaders: 5, VariantNoStatus: 6, VariantNoRequest: 3,
}

// The partial variants of the corpus (docs/accuracy.md, "Partial
// evidence"): no variant of a positive gets another vendor, and the
// plain negatives' variants named stay within namedNegativeVariants.
func TestEvaluatePartial_Corpus(t *testing.T) {
	rules, caps := rulesAndCorpus(t)
	rep := EvaluatePartial(rules, caps)
	t.Logf("\n%s", rep.Table())
	if rep.Total.Variants < 2000 || rep.Total.NegVariants < 2000 {
		t.Errorf("too few variants: %+v", rep.Total)
	}
	for _, w := range rep.Wrong {
		if !strings.HasSuffix(w, "on a negative") {
			t.Error("wrong vendor: " + w)
		} else {
			t.Log(w)
		}
	}
	for _, k := range rep.Kinds {
		if k.Wrong > 0 {
			t.Errorf("%s: %d variants of positives named with another vendor", k.Name, k.Wrong)
		}
		if k.NegNamed > namedNegativeVariants[k.Name] {
			t.Errorf("%s: %d variants of plain negatives named, at most %d before", k.Name, k.NegNamed, namedNegativeVariants[k.Name])
		}
	}
	for _, c := range rep.Copies {
		t.Log("copy: " + c)
	}
}

func TestPartialVariants_Kinds(t *testing.T) {
	vendor := "Acme"
	body := strings.Repeat("<p>x</p>", 700) // 5,600 bytes
	c := Capture{ID: "t", Family: "f", Expect: Expect{Vendor: &vendor}, Observation: ingest.Observation{
		Type: ingest.TypeService, IP: "192.0.2.1", Source: "t", ObservedAt: "2026-11-01T00:00:00Z",
		Service: &ingest.Service{Port: 443, Transport: "tcp", Detected: &ingest.Detected{By: "nmap", Product: "Acme VPN"}, Probes: []ingest.Probe{
			{Request: &ingest.Request{Method: "GET", Path: "/login"},
				Response: &ingest.Response{Status: 200, Reason: "OK", Protocol: "HTTP/1.1",
					Headers: ingest.Headers{{Name: "Server", Value: "Acme"}, {Name: "Set-Cookie", Value: "ACME=1"}}, Body: ingest.TextBody(body)},
				TLS: &ingest.TLS{Subject: &ingest.DN{CN: "acme"}}},
			{Banner: &ingest.Banner{Received: ingest.TextBody("SSH-2.0-Acme\r\n")}},
		}},
	}}
	if err := c.Observation.Normalize(); err != nil {
		t.Fatal(err)
	}
	before := obsKey(&c.Observation)
	vs := PartialVariants(&c)
	if obsKey(&c.Observation) != before {
		t.Error("PartialVariants changed the capture")
	}
	var kinds []string
	byKind := map[string]ingest.Probe{}
	for _, v := range vs {
		kinds = append(kinds, v.Kind)
		if v.Observation.Service.Detected != nil || len(v.Observation.Service.Probes) != 1 {
			t.Errorf("%s: want one probe and no scanner identification: %+v", v.Kind, v.Observation.Service)
		}
		if _, ok := byKind[v.Kind]; !ok {
			byKind[v.Kind] = v.Observation.Service.Probes[0]
		}
	}
	want := []string{VariantProbe, VariantHeaders, VariantBody, VariantBody4K, VariantBody1K, VariantLowerHeaders, VariantNoStatus,
		VariantNoRequest, VariantTLS, VariantProbe}
	if !slices.Equal(kinds, want) {
		t.Fatalf("kinds = %q, want %q", kinds, want)
	}
	if p := byKind[VariantHeaders]; p.Response.Body != nil || p.TLS != nil || p.Response.Status != 200 || len(p.Response.Headers) != 2 {
		t.Errorf("headers only: %+v", p.Response)
	}
	if p := byKind[VariantBody]; p.Response.Status != 0 || len(p.Response.Headers) != 0 || p.TLS != nil || p.Response.Body.Data != body {
		t.Errorf("body only: %+v", p.Response)
	}
	if p := byKind[VariantBody1K]; len(p.Response.Body.Data) != 1024 || !p.Response.Body.Truncated || p.Response.Body.Length != int64(len(body)) || p.Response.Body.SHA256 != "" {
		t.Errorf("body cut 1 KiB: %d bytes, %+v", len(p.Response.Body.Data), p.Response.Body.Truncated)
	}
	if p := byKind[VariantLowerHeaders]; p.Response.Headers[0].Name != "server" || p.Response.Headers[1].Name != "set-cookie" {
		t.Errorf("lower-case: %+v", p.Response.Headers)
	}
	if p := byKind[VariantNoStatus]; p.Response.Status != 0 || p.Response.Reason != "" || p.Response.Protocol != "" || len(p.Response.Headers) != 2 {
		t.Errorf("no status line: %+v", p.Response)
	}
	if p := byKind[VariantNoRequest]; p.Request != nil || p.Response == nil {
		t.Errorf("no request: %+v", p)
	}
	if p := byKind[VariantTLS]; p.TLS == nil || p.Response != nil || p.Request != nil {
		t.Errorf("TLS alone: %+v", p)
	}
	// a flow, and a service with one bare probe, have no variant other than themselves
	one := c
	one.Observation.Service = &ingest.Service{Port: 22, Transport: "tcp", Probes: []ingest.Probe{{Banner: &ingest.Banner{Received: ingest.TextBody("SSH-2.0-x\r\n")}}}}
	if vs := PartialVariants(&one); len(vs) != 0 {
		t.Errorf("bare banner: %d variants", len(vs))
	}
}

// A rule that needs two pieces names the capture and none of its
// variants, and EvaluatePartial says so; a variant of a negative named is
// listed, a copy's apart.
func TestEvaluatePartial_Scores(t *testing.T) {
	rules, err := ParseRules([]byte(`version: 2
rules:
  - id: acme-two-pieces
    vendor: Acme
    product: VPN
    protocol_family: https
    match:
      all:
        - {header.server: '^Acme$'}
        - {body: 'acme-login'}
  - id: acme-body
    vendor: Acme
    product: VPN
    protocol_family: https
    match:
      any:
        - {body: 'acme-portal'}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vendor := "Acme"
	obs := func(body string) ingest.Observation {
		o := ingest.Observation{Type: ingest.TypeService, IP: "192.0.2.1", Source: "t", ObservedAt: "2026-11-01T00:00:00Z",
			Service: &ingest.Service{Port: 443, Transport: "tcp", Probes: []ingest.Probe{{Request: &ingest.Request{Path: "/"},
				Response: &ingest.Response{Status: 200, Headers: ingest.Headers{{Name: "Server", Value: "Acme"}}, Body: ingest.TextBody(body)}}}}}
		if err := o.Normalize(); err != nil {
			t.Fatal(err)
		}
		return o
	}
	caps := []Capture{
		{ID: "a", Family: "acme", Expect: Expect{Vendor: &vendor}, Observation: obs("acme-login"), file: "a.json"},
		{ID: "b", Family: "acme", Expect: Expect{Vendor: &vendor}, Observation: obs("acme-portal"), file: "b.json"},
		{ID: "n", Negative: true, Observation: obs("acme-portal"), file: "n.json"},
		{ID: "c", Negative: true, Copy: "copies the page", Observation: obs("acme-portal"), file: "c.json"},
	}
	rep := EvaluatePartial(rules, caps)
	if rep.Lost["acme-two-pieces"] != 0 {
		// the capture's "no request" and lower-case variants keep both pieces
		t.Errorf("lost: %v", rep.Lost)
	}
	if rep.LostBy[VariantBody]["acme-two-pieces"] != 1 || rep.LostBy[VariantHeaders]["acme-two-pieces"] != 1 || rep.LostBy[VariantBody]["acme-body"] != 0 {
		t.Errorf("lost by kind: %v", rep.LostBy)
	}
	if rep.Total.Wrong != 0 || rep.Total.NegNamed == 0 || rep.Total.CopyNamed == 0 || len(rep.Copies) != rep.Total.CopyNamed {
		t.Errorf("total: %+v", rep.Total)
	}
	if len(rep.Wrong) != rep.Total.NegNamed || !strings.Contains(rep.Wrong[0], "n.json: ") {
		t.Errorf("wrong: %v", rep.Wrong)
	}
	if tab := rep.Table(); !strings.Contains(tab, "| body only |") || !strings.Contains(tab, "| acme |") {
		t.Errorf("table:\n%s", tab)
	}
}
