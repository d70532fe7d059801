package ingest

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const schemaPath = "../docs/observation.schema.json"

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem://observation.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://observation.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validateJSON(s *jsonschema.Schema, data []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// What every adapter publishes, read from the real samples, is valid
// against the documented schema (docs/observation.schema.json).
func TestSchema_AdapterOutputValid(t *testing.T) {
	t.Parallel()
	s := compileSchema(t)
	feeds := []struct {
		format, file string
		opt          Options
	}{
		{"tor-exits", "exit-addresses", Options{}},
		{"aws-ranges", "aws-ip-ranges.json", Options{}},
		{"gcp-ranges", "gcp-cloud.json", Options{}},
		{"cidr-list", "cloudflare-ips-v6.txt", Options{Kind: "cdn", Provider: "Cloudflare"}},
		{"cidr-list", "protonvpn.txt", Options{Kind: "vpn", Provider: "Proton VPN"}},
		{"observations", "observations.ndjson", Options{}},
		{"azure-service-tags", "azure-service-tags.json", Options{}},
		{"oracle-ranges", "oracle-public-ip-ranges.json", Options{}},
		{"fastly-ranges", "fastly-ip-ranges.json", Options{}},
		{"geofeed", "geofeed-linode.csv", Options{Kind: "hosting", Provider: "Akamai (Linode)"}},
		{"private-relay", "private-relay-egress.csv", Options{}},
		{"proxy-list", "proxy-list-http.txt", Options{Kind: "http"}},
		{"mullvad-relays", "mullvad-relays.json", Options{}},
		{"zgrab2", "zgrab2.jsonl", Options{}},
		{"zgrab2", "zgrab2-constructed.jsonl", Options{}},
		{"masscan", "masscan.json", Options{}},
		{"masscan", "masscan.txt", Options{}},
		{"masscan", "masscan-constructed.json", Options{}},
		{"nmap-xml", "nmap-complex.xml", Options{}},
		{"nmap-xml", "nmap-servicefp.xml", Options{}},
		{"nmap-xml", "nmap-scripts.xml", Options{}},
		{"shodan", "shodan.jsonl", Options{}},
		{"sonar-http", "sonar-http.jsonl", Options{}},
		{"goflow2", "goflow2-v2.2.6.ndjson", Options{}},
		{"nfdump-csv", "nfdump-1.7.1.csv", Options{}},
		{"nfdump-csv", "nfdump-1.7.8.csv", Options{}},
		{"httpx", "httpx.jsonl", Options{}},
		{"naabu", "naabu.jsonl", Options{}},
		{"nmap-grep", "nmap-grep.gnmap", Options{}},
		{"zeek", "zeek-docs.ndjson", Options{}},
		{"zeek", "zeek-6.2-ssl.log", Options{}},
		{"zeek", "zeek-json-streaming.ndjson", Options{}},
		{"suricata-eve", "suricata-eve.json", Options{}},
		{"censys", "censys-v2-host.json", Options{}},
		{"censys", "censys-platform-host.json", Options{}},
		{"fingerprintx", "fingerprintx.jsonl", Options{}},
		{"nuclei", "nuclei.jsonl", Options{}},
		{"nuclei", "nuclei-appliance.jsonl", Options{}},
		{"tlsx", "tlsx.jsonl", Options{}},
		{"leakix", "leakix-ip4scout.jsonl", Options{}},
		{"leakix", "leakix-l9event.json", Options{}},
		{"onyphe", "onyphe-api-v1.json", Options{}},
		{"zoomeye", "zoomeye-v1-uncover.json", Options{}},
		{"zoomeye", "zoomeye-v2-api.json", Options{}},
		{"netlas", "netlas-cookbook-response.json", Options{}},
		{"fofa", "fofa-gofofa-guide.jsonl", Options{}},
		{"fofa", "fofa-gofofa-guide.csv", Options{}},
		{"testssl", "testssl-3.0.8-pretty.json", Options{}},
		{"testssl", "testssl-defectdojo.csv", Options{}},
		{"sslyze", "sslyze-5.0.1-two-targets.json", Options{}},
		{"sslyze", "sslyze-3.0.7.json", Options{}},
		{"sslscan", "sslscan-2.0.7-full.xml", Options{}},
		{"ssh-audit", "ssh-audit-targets.json", Options{}},
		{"har", "har/mitmproxy-chrome.har", Options{}},
		{"har", "har/mitmproxy-firefox.har", Options{}},
		{"burp", "burp/nuclei-burp-items.xml", Options{}},
		{"burp", "burp/dd-one_finding.xml", Options{}},
		{"nikto", "nikto/dd-tdh.xml", Options{}},
		{"nikto", "nikto/nikto-2.1.6-vulnos2.txt", Options{}},
		{"nikto", "nikto/nikto-2.5.0.csv", Options{}},
		{"nikto", "nikto/dd-juice-shop.json", Options{}},
		{"httpx", "httpx/httpx-1.1.5-text.txt", Options{}},
		{"pcap", "pcap/anyconnect-vpn.pcap", Options{}}, {"pcap", "pcap/wireguard.pcap", Options{}}, {"pcap", "pcap/suricata-ikev1-isakmp-main-mode.pcap", Options{}}, {"pcap", "pcap/zeek-snmpwalk-short.pcap", Options{}}, {"pcap", "pcap/openvpn.pcap", Options{}},
	}
	for _, f := range feeds {
		t.Run(f.format+"/"+f.file, func(t *testing.T) {
			f.opt.ObservedAt = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			r := runAdapter(t, Adapters()[f.format], readFile(t, f.file), f.opt)
			if len(r.obs) == 0 || len(r.bad) != 0 {
				t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
			}
			for _, o := range r.obs {
				data, _, err := o.Encode()
				if err != nil {
					t.Fatal(err)
				}
				if err := validateJSON(s, data); err != nil {
					t.Fatalf("%s does not match the schema: %v", data, err)
				}
			}
		})
	}
}

// Lines the schema rejects, Normalize rejects too, so the document and the
// code agree on what an observation is. The one exception is a member the
// format does not know: the schema, the format as written, refuses it; the
// reader keeps the rest of the record and names the member in a warning.
func TestSchema_AgreesWithNormalize(t *testing.T) {
	t.Parallel()
	s := compileSchema(t)
	good := `{"v":1,"type":"signal","ip":"192.0.2.9","source":"s","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"tor_exit"}}`
	if err := validateJSON(s, []byte(good)); err != nil {
		t.Fatalf("good line rejected: %v", err)
	}
	extra := strings.Replace(good, `"v":1`, `"v":1,"extra":1`, 1)
	if err := validateJSON(s, []byte(extra)); err == nil {
		t.Errorf("schema accepts %s", extra)
	}
	warned := ""
	if r := runAdapter(t, NDJSON, extra+"\n", Options{Warn: func(_ int, msg string) { warned = msg }}); len(r.obs) != 1 || !strings.Contains(warned, "/extra") {
		t.Errorf("the reader lost %s or did not name /extra (%q)", extra, warned)
	}
	bad := map[string]string{
		"unknown kind":       strings.Replace(good, "tor_exit", "teleport", 1),
		"bad version":        strings.Replace(good, `"v":1`, `"v":3`, 1),
		"bad source":         strings.Replace(good, `"source":"s"`, `"source":"Has Spaces"`, 1),
		"bad time":           strings.Replace(good, "2026-11-20T10:00:00Z", "yesterday", 1),
		"bad listed_at":      strings.Replace(good, `"v":1`, `"v":1,"listed_at":"at fetch time"`, 1),
		"confidence > 1":     strings.Replace(good, `"kind":"tor_exit"`, `"kind":"tor_exit","confidence":1.5`, 1),
		"two payloads":       strings.Replace(good, `"signal":`, `"flow":{"port":1,"transport":"udp","protocol":"wireguard"},"signal":`, 1),
		"no payload":         `{"type":"signal","ip":"192.0.2.9","source":"s","observed_at":"2026-11-20T10:00:00Z"}`,
		"range without cidr": `{"type":"range","source":"s","observed_at":"2026-11-20T10:00:00Z","range":{"kind":"cdn"}}`,
		"service port 0":     `{"type":"service","ip":"192.0.2.1","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"port":0,"transport":"tcp"}}`,
		"flow bad protocol":  `{"type":"flow","ip":"192.0.2.1","source":"s","observed_at":"2026-11-20T10:00:00Z","flow":{"port":51820,"transport":"udp","protocol":"carrier-pigeon"}}`,
		"claim without org":  strings.Replace(good, `"v":1`, `"v":1,"claims":[{"signal_confidence":0.5}]`, 1),
	}
	for name, line := range bad {
		t.Run(name, func(t *testing.T) {
			if err := validateJSON(s, []byte(line)); err == nil {
				t.Errorf("schema accepts %s", line)
			}
			r := runAdapter(t, NDJSON, line+"\n", Options{})
			if len(r.obs) != 0 || len(r.bad) != 1 {
				t.Errorf("Normalize accepts %s", line)
			}
		})
	}
}

// The schema's enums and property names are the code's.
func TestSchema_MatchesTypes(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	type node struct {
		Properties map[string]*node `json:"properties"`
		Items      *node            `json:"items"`
		Enum       []string         `json:"enum"`
		Ref        string           `json:"$ref"`
		Defs       map[string]*node `json:"$defs"`
		AnyOf      []*node          `json:"anyOf"`
	}
	var root node
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	// deref follows a "#/$defs/NAME" reference, and of other shapes read
	// (anyOf) the format's own: the first with properties or items.
	var deref func(n *node) *node
	deref = func(n *node) *node {
		if n != nil && n.Ref != "" {
			return deref(root.Defs[strings.TrimPrefix(n.Ref, "#/$defs/")])
		}
		if n != nil && n.Properties == nil && n.Items == nil {
			for _, alt := range n.AnyOf {
				if a := deref(alt); a != nil && (a.Properties != nil || a.Items != nil) {
					return a
				}
			}
		}
		return n
	}
	p := root.Properties
	enums := []struct {
		name string
		got  []string
		want []string
	}{
		{"type", p["type"].Enum, []string{TypeService, TypeSignal, TypeRange, TypeFlow}},
		{"signal.kind", p["signal"].Properties["kind"].Enum, SignalKinds},
		{"range.kind", p["range"].Properties["kind"].Enum, RangeKinds},
		{"flow.protocol", p["flow"].Properties["protocol"].Enum, FlowProtocols},
	}
	for _, e := range enums {
		if !slices.Equal(e.got, e.want) {
			t.Errorf("%s: schema %v, code %v", e.name, e.got, e.want)
		}
	}
	keys := func(m map[string]*node) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	// Property names: marshal a fully populated value and compare its keys.
	mmh3 := int32(1)
	body := &Body{Encoding: "x", Data: "x", Truncated: true, Length: 1, SHA256: "x", MMH3: &mmh3, MD5: "x"}
	dn := &DN{CN: "x", O: []string{"x"}, OU: []string{"x"}, C: "x", ST: "x", L: "x", Email: "x", DN: "x"}
	headers := []Header{{Name: "x", Value: "x", Truncated: true}}
	full := Observation{V: 1, Type: TypeService, IP: "x", Network: "x", Source: "x", ObservedAt: "x", ListedAt: "x", Class: "x",
		Claims: []Claim{{OrgName: "x", SignalSource: "x", SignalConfidence: 1, ASN: 1}}, Hostnames: []string{"x"},
		Service: &Service{Port: 1, Transport: "x", ProtocolFamily: "x", Banner: "x",
			Probes: []Probe{{Name: "x", Request: &Request{Method: "x", Path: "x", Host: "x", Headers: headers, Body: body},
				Response: &Response{Status: 1, Reason: "x", Protocol: "x", Headers: headers, Title: "x", Body: body},
				TLS: &TLS{Version: "x", Cipher: "x", Subject: dn, Issuer: dn, SANs: []string{"x"}, Serial: "x", SHA256: "x",
					NotBefore: "x", NotAfter: "x", SelfSigned: true, JARM: "x", JA3S: "x", JA4S: "x", PEM: "x"},
				Banner: &Banner{Sent: body, Received: body}}},
			Detected: &Detected{By: "x", Service: "x", Product: "x", Version: "x", Info: "x", CPE: []string{"x"}},
			HTTP:     &HTTPEvidence{Status: 1, Headers: map[string]string{"a": "b"}, Cookies: []string{"x"}, Title: "x", Bodies: map[string]string{"a": "b"}, FaviconHash: "x"},
			TLS:      &TLSEvidence{Subject: "x", Issuer: "x", Serial: "x"}},
		Signal: &Signal{Kind: "x", Provider: "x", Confidence: 1, Ref: "x", Port: 1, ProtocolFamily: "x"},
		Range:  &Range{Kind: "x", Provider: "x", Region: "x", Service: "x", Country: "x", City: "x", Confidence: 1},
		Flow:   &Flow{Port: 1, Transport: "x", Protocol: "x", Packets: 1, Bytes: 1, IPProtocol: 1, Basis: "x", Confidence: 1}}
	data, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var check func(path string, v map[string]any, n *node)
	check = func(path string, v map[string]any, n *node) {
		n = deref(n)
		var got []string
		for k := range v {
			got = append(got, k)
		}
		slices.Sort(got)
		if want := keys(n.Properties); !slices.Equal(got, want) {
			t.Errorf("%s: code fields %v, schema properties %v", path, got, want)
		}
		for k, sub := range v {
			pk := deref(n.Properties[k])
			if obj, ok := sub.(map[string]any); ok && pk != nil && pk.Properties != nil {
				check(path+"."+k, obj, pk)
			}
			if arr, ok := sub.([]any); ok && len(arr) > 0 && pk != nil && pk.Items != nil {
				pk.Items = deref(pk.Items)
				if obj, ok := arr[0].(map[string]any); ok {
					check(path+"."+k+"[]", obj, pk.Items)
				}
			}
		}
	}
	check("observation", m, &root)
}
