package enrich

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/netintel/netintel/ingest"
)

// A change of form is a way a hand-made or converted capture writes the
// same evidence differently from the scanner's record (a URL for a path,
// lower-case header names as HTTP/2 sends them, the raw text of an
// exchange); a loss drops part of the evidence (the status line, the
// request, the body).
type formChange struct {
	name string
	// same says the change keeps every piece of evidence: the answer
	// must not change.
	same bool
	// f changes the observation's JSON form or its service, and says
	// whether it changed anything.
	f func(s *ingest.Service) bool
}

func eachResponse(s *ingest.Service, f func(r *ingest.Response) bool) bool {
	ch := false
	for i := range s.Probes {
		if s.Probes[i].Response != nil && f(s.Probes[i].Response) {
			ch = true
		}
	}
	return ch
}

// rawHTTP writes a probe's request and response as the raw text a client
// prints (probes whose response has a base64 body, a scanner's title or a
// cut header are left as they are).
func rawHTTP(p *ingest.Probe) (req, resp string, ok bool) {
	r := p.Response
	if r == nil || r.Status == 0 || r.Title != "" || (r.Body != nil && (r.Body.Encoding != "" || r.Body.MMH3 != nil || r.Body.MD5 != "" || r.Body.Truncated || r.Body.Data == "")) {
		return "", "", false
	}
	var b strings.Builder
	proto := r.Protocol
	if proto == "" {
		proto = "HTTP/1.1"
	}
	fmt.Fprintf(&b, "%s %d %s\r\n", proto, r.Status, r.Reason)
	for _, h := range r.Headers {
		if h.Truncated || strings.ContainsAny(h.Value, "\r\n") {
			return "", "", false
		}
		fmt.Fprintf(&b, "%s: %s\r\n", h.Name, h.Value)
	}
	b.WriteString("\r\n")
	if r.Body != nil {
		b.WriteString(r.Body.Data)
	}
	resp = b.String()
	if q := p.Request; q != nil {
		if q.Body != nil || len(q.Headers) > 0 || strings.ContainsAny(q.Path, " \r\n") {
			return "", "", false
		}
		req = q.Method + " " + q.Path + " HTTP/1.1\r\n"
		if q.Host != "" {
			req += "Host: " + q.Host + "\r\n"
		}
	}
	return req, resp, true
}

var formChanges = []formChange{
	{"url-path", true, func(s *ingest.Service) bool {
		ch := false
		for i := range s.Probes {
			if r := s.Probes[i].Request; r != nil && strings.HasPrefix(r.Path, "/") {
				r.Path = "https://vpn.example.com" + r.Path
				ch = true
			}
		}
		return ch
	}},
	{"lower-headers", true, func(s *ingest.Service) bool {
		return eachResponse(s, func(r *ingest.Response) bool {
			ch := false
			for i := range r.Headers {
				if l := strings.ToLower(r.Headers[i].Name); l != r.Headers[i].Name {
					r.Headers[i].Name = l
					ch = true
				}
			}
			return ch
		})
	}},
	{"upper-title-tag", true, func(s *ingest.Service) bool {
		return eachResponse(s, func(r *ingest.Response) bool {
			if r.Body == nil || !strings.Contains(r.Body.Data, "<title>") {
				return false
			}
			r.Body.Data = strings.NewReplacer("<title>", "<TITLE>", "</title>", "</TITLE>").Replace(r.Body.Data)
			r.Body.SHA256, r.Body.MMH3, r.Body.MD5 = "", nil, ""
			return true
		})
	}},
	{"raw-http", true, nil}, // written as raw text in the observation's JSON: see formsJSON
	{"no-status", false, func(s *ingest.Service) bool {
		return eachResponse(s, func(r *ingest.Response) bool {
			if r.Status == 0 {
				return false
			}
			r.Status, r.Reason = 0, ""
			return true
		})
	}},
	{"no-path", false, func(s *ingest.Service) bool {
		ch := false
		for i := range s.Probes {
			if r := s.Probes[i].Request; r != nil && r.Path != "" && r.Path != "/" {
				r.Path = ""
				ch = true
			}
		}
		return ch
	}},
	{"reflow-body", false, func(s *ingest.Service) bool {
		ws := regexp.MustCompile(`\s+`)
		return eachResponse(s, func(r *ingest.Response) bool {
			if r.Body == nil || r.Body.Encoding != "" || r.Body.Data == "" {
				return false
			}
			n := ws.ReplaceAllString(r.Body.Data, " ")
			if n == r.Body.Data {
				return false
			}
			r.Body.Data, r.Body.SHA256, r.Body.MMH3, r.Body.MD5, r.Body.Length = n, "", nil, "", 0
			return true
		})
	}},
	{"no-body", false, func(s *ingest.Service) bool {
		return eachResponse(s, func(r *ingest.Response) bool {
			if r.Body == nil {
				return false
			}
			r.Body = nil
			return true
		})
	}},
	{"no-headers", false, func(s *ingest.Service) bool {
		return eachResponse(s, func(r *ingest.Response) bool {
			if len(r.Headers) == 0 || r.Body == nil {
				return false
			}
			r.Headers = nil
			return true
		})
	}},
	{"no-detected", false, func(s *ingest.Service) bool {
		if s.Detected == nil {
			return false
		}
		s.Detected = nil
		return true
	}},
}

// formsJSON is c's observation as JSON after change ch, and whether ch
// changed anything.
func formsJSON(t testing.TB, c *Capture, ch formChange) ([]byte, bool) {
	t.Helper()
	b, err := jsonv2.Marshal(c.Observation)
	if err != nil {
		t.Fatal(err)
	}
	if ch.f != nil {
		var o ingest.Observation
		if err := jsonv2.Unmarshal(b, &o, ingest.DecodeOptions); err != nil {
			t.Fatal(err)
		}
		if !ch.f(o.Service) {
			return nil, false
		}
		if b, err = jsonv2.Marshal(o); err != nil {
			t.Fatal(err)
		}
		return b, true
	}
	// raw-http: each probe's request and response as raw strings.
	var m map[string]any
	if err := jsonv2.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	probes, _ := m["service"].(map[string]any)["probes"].([]any)
	changed := false
	for i, p := range c.Observation.Service.Probes {
		req, resp, ok := rawHTTP(&p)
		if !ok {
			continue
		}
		pm := probes[i].(map[string]any)
		pm["response"] = resp
		if req != "" {
			pm["request"] = req
		}
		changed = true
	}
	if !changed {
		return nil, false
	}
	if b, err = jsonv2.Marshal(m); err != nil {
		t.Fatal(err)
	}
	return b, true
}

// Evidence written in another form than the scanner's record (a URL for
// the request path, lower-case header names, an upper-case title tag, the
// exchange as raw text) gets the same answer: every positive of the
// corpus named right keeps its vendor, and nothing gets a wrong one.
func TestRules_SameEvidenceOtherForm(t *testing.T) {
	rules, caps := rulesAndCorpus(t)
	for _, ch := range formChanges {
		if !ch.same {
			continue
		}
		changed := 0
		for i := range caps {
			c := &caps[i]
			if c.Negative || c.Observation.Service == nil {
				continue
			}
			b, ok := formsJSON(t, c, ch)
			if !ok {
				continue
			}
			changed++
			var o ingest.Observation
			if err := jsonv2.Unmarshal(b, &o, ingest.DecodeOptions); err != nil {
				t.Fatalf("%s: %s: %v\n%s", ch.name, c.ID, err, b)
			}
			if err := o.Normalize(); err != nil {
				t.Fatalf("%s: %s: %v", ch.name, c.ID, err)
			}
			want := *c.Expect.Vendor
			fp0, ok0 := rules.Match(c.Observation.Service, nil)
			fp1, ok1 := rules.Match(o.Service, nil)
			switch {
			case ok1 && !SameVendor(fp1.Vendor, want):
				t.Errorf("%s: %s: wrong vendor %q (%s)", ch.name, c.ID, fp1.Vendor, fp1.RuleID)
			case ok0 && SameVendor(fp0.Vendor, want) && !ok1:
				t.Errorf("%s: %s: named %q (%s) as recorded, nothing in the other form", ch.name, c.ID, fp0.Vendor, fp0.RuleID)
			}
		}
		if changed < 50 {
			t.Errorf("%s changed only %d captures: the change no longer reaches the corpus", ch.name, changed)
		}
	}
}

// TestSweep_EvidenceLost (NETINTEL_SWEEP=1) measures what the rules still
// name when part of the evidence is lost, as hand-made and converted
// captures lose it, and which negatives get named then
// (NETINTEL_SWEEP_V=1 lists the positives lost).
func TestSweep_EvidenceLost(t *testing.T) {
	if os.Getenv("NETINTEL_SWEEP") == "" {
		t.Skip("a measurement: NETINTEL_SWEEP=1")
	}
	rules, caps := rulesAndCorpus(t)
	for _, ch := range formChanges {
		changed, before, after := 0, 0, 0
		var lost []string
		for i := range caps {
			c := &caps[i]
			if c.Observation.Service == nil || c.Copy != "" {
				continue
			}
			b, ok := formsJSON(t, c, ch)
			if !ok {
				continue
			}
			var o ingest.Observation
			if err := jsonv2.Unmarshal(b, &o, ingest.DecodeOptions); err != nil {
				t.Fatalf("%s: %s: %v", ch.name, c.ID, err)
			}
			if err := o.Normalize(); err != nil {
				t.Fatalf("%s: %s: %v", ch.name, c.ID, err)
			}
			fp1, ok1 := rules.Match(o.Service, nil)
			if c.Negative {
				if ok1 {
					t.Logf("%s: negative %s named %q (%s)", ch.name, c.ID, fp1.Vendor, fp1.RuleID)
				}
				continue
			}
			changed++
			want := *c.Expect.Vendor
			fp0, ok0 := rules.Match(c.Observation.Service, nil)
			r0, r1 := ok0 && SameVendor(fp0.Vendor, want), ok1 && SameVendor(fp1.Vendor, want)
			if r0 {
				before++
			}
			if r1 {
				after++
			}
			if r0 && !r1 {
				lost = append(lost, c.ID+" ("+fp0.RuleID+")")
			}
			if ok1 && !r1 {
				t.Errorf("%s: %s gives wrong vendor %q", ch.name, c.ID, fp1.Vendor)
			}
		}
		t.Logf("%-16s changed %4d  right as recorded %4d, changed %4d  lost %s", ch.name, changed, before, after, strconv.Itoa(len(lost)))
		if os.Getenv("NETINTEL_SWEEP_V") != "" {
			for _, l := range lost {
				t.Logf("    lost %s", l)
			}
		}
	}
}
