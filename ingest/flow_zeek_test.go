package ingest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func countReasons(reasons []string) map[string]int {
	m := map[string]int{}
	for _, r := range reasons {
		m[r]++
	}
	return m
}

func TestZeek_DocsJSON(t *testing.T) {
	t.Parallel()
	r := runScan(t, "zeek", readFile(t, "zeek-docs.ndjson"))
	if len(r.obs) != 13 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	if c := countReasons(r.skipped); c[flowUnrecognised] != 7 || c["zeek x509 record (read for ssl.log)"] != 4 || len(r.skipped) != 11 {
		t.Errorf("skipped %v", c)
	}
	byIP := map[string][]Observation{}
	for _, o := range r.obs {
		byIP[o.IP] = append(byIP[o.IP], o)
	}
	// The TLS 1.2 ssl.log record names its chain by file id; the x509.log
	// records come after it in the input, so it waits for its leaf.
	o := byIP["13.32.202.10"]
	if len(o) != 1 {
		t.Fatalf("13.32.202.10: %s", mustJSON(t, o))
	}
	tls := o[0].Service.Probes[0].TLS
	if o[0].Service.Port != 443 || o[0].ObservedAt != "2020-08-25T17:43:11Z" || strings.Join(o[0].Hostnames, ",") != "www.taosecurity.com" ||
		tls.Version != "TLSv1.2" || tls.Cipher != "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" || tls.Subject.CN != "www.taosecurity.com" ||
		tls.Issuer.CN != "Amazon" || tls.Issuer.OU[0] != "Server CA 1B" || tls.Serial != "b58bc3898391f36592ba1be1f6b03ef" ||
		tls.NotBefore != "2020-06-01T00:00:00Z" || tls.NotAfter != "2021-07-01T12:00:00Z" ||
		strings.Join(tls.SANs, ",") != "www.taosecurity.com,taosecurity.com,*.taosecurity.com" {
		t.Errorf("ssl + x509 = %s", mustJSON(t, o[0]))
	}
	// The ja3 package's ja3s, ISO 8601 times.
	if o := byIP["172.217.15.100"]; len(o) != 1 || o[0].Service.Probes[0].TLS.JA3S != "907bf3ecef1c987c889946b737b43de8" ||
		o[0].ObservedAt != "2020-09-16T14:01:26Z" || o[0].Hostnames[0] != "www.google.com" || o[0].Service.Probes[0].TLS.Version != "TLSv1.3" {
		t.Errorf("ja3s = %s", mustJSON(t, o))
	}
	// http.log: the request and the status.
	if o := byIP["31.3.245.133"]; len(o) != 1 {
		t.Errorf("http: %s", mustJSON(t, o))
	} else if p := o[0].Service.Probes[0]; o[0].Service.Port != 80 || p.Name != "zeek.http" || p.Request.Method != "GET" || p.Request.Path != "/" ||
		p.Request.Host != "testmyids.com" || headerValues(p.Request.Headers, "User-Agent")[0] != "curl/7.47.0" ||
		p.Response.Status != 200 || p.Response.Reason != "OK" || p.Response.Protocol != "HTTP/1.1" {
		t.Errorf("http = %s", mustJSON(t, p))
	}
	// ssh.log: the server's software string.
	if o := byIP["205.166.94.16"]; len(o) != 1 || o[0].Service.Port != 22 || o[0].Service.Probes[0].Banner.Received.Text() != "SSH-2.0-OpenSSH_8.0" {
		t.Errorf("ssh = %s", mustJSON(t, o))
	}
}

func TestZeek_TSV(t *testing.T) {
	t.Parallel()
	// x509.log after ssl.log, as `cat ssl.log x509.log` gives them.
	r := runScan(t, "zeek", readFile(t, "zeek-6.2-ssl.log")+readFile(t, "zeek-6.2-x509.log"))
	if len(r.obs) != 15 || len(r.bad) != 0 || countReasons(r.skipped)["zeek x509 record (read for ssl.log)"] != 12 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	var vmware, sni *Observation
	for i, o := range r.obs {
		if o.IP == "10.47.3.200" {
			vmware = &r.obs[i]
		}
		if o.IP == "104.19.194.102" {
			sni = &r.obs[i]
		}
	}
	if vmware == nil || sni == nil {
		t.Fatal("records missing")
	}
	tls := vmware.Service.Probes[0].TLS
	// The subject with the escaped commas (VMware\, Inc) as TSV escapes them.
	if vmware.ObservedAt != "2018-03-24T17:15:20Z" || tls.Version != "TLSv1.0" || tls.Subject.CN != "localhost.localdomain" ||
		!slices.Equal(tls.Subject.O, []string{"VMware, Inc"}) || tls.Subject.OU[0] != "VMware ESX Server Default Certificate" ||
		tls.Subject.Email != "ssl-certificates@vmware.com" || tls.Issuer.DN != "O=VMware Installer" || tls.Serial != "cc57fe54011e" ||
		tls.SHA256 != "b2dafbcdbc75210672f137f27ce882ccb799887631655d4f11191d5a678e44fe" || tls.NotBefore != "2011-09-10T12:15:02Z" ||
		strings.Join(tls.SANs, ",") != "localhost.localdomain" {
		t.Errorf("vmware = %s", mustJSON(t, vmware))
	}
	if sni.Hostnames[0] != "cdnjs.cloudflare.com" || sni.Service.Probes[0].TLS.Version != "TLSv13-draft23" {
		t.Errorf("sni = %s", mustJSON(t, sni))
	}
	// The same records in the other order give the same observations.
	r2 := runScan(t, "zeek", readFile(t, "zeek-6.2-x509.log")+readFile(t, "zeek-6.2-ssl.log"))
	if len(r2.obs) != 15 {
		t.Fatalf("x509 first: %d obs", len(r2.obs))
	}
	key := func(os []Observation) []string {
		var k []string
		for _, o := range os {
			k = append(k, mustJSON(t, o))
		}
		slices.Sort(k)
		return k
	}
	if !slices.Equal(key(r.obs), key(r2.obs)) {
		t.Error("ssl.log before or after x509.log gives different observations")
	}
	// JSON streaming logs (_path) of the same capture.
	r3 := runScan(t, "zeek", readFile(t, "zeek-json-streaming.ndjson"))
	if len(r3.obs) != 1 || mustJSON(t, r3.obs[0].Service) != mustJSON(t, vmware.Service) {
		t.Errorf("json streaming = %s", mustJSON(t, r3.obs))
	}
}

func TestZeek_Conn(t *testing.T) {
	t.Parallel()
	r := runScan(t, "zeek", readFile(t, "zeek-conn.log"))
	// FTP and FTP data: no remote-access protocol.
	if len(r.obs) != 0 || len(r.bad) != 0 || countReasons(r.skipped)[flowUnrecognised] != 5 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	// The same conn.log header with flows that are a protocol's: a
	// WireGuard handshake (148 + 8 + 20 bytes), ESP (unknown_transport,
	// ip_proto 50), OpenVPN answered from the responder's side.
	head := readFile(t, "zeek-conn.log")
	head = head[:strings.Index(head, "1329843175")]
	head = strings.Replace(head, "tunnel_parents\n", "tunnel_parents\tip_proto\n", 1)
	head = strings.Replace(head, "set[string]\n", "set[string]\tcount\n", 1)
	rows := []string{
		"1700000000.5\tC1\t198.51.100.7\t40000\t203.0.113.9\t51820\tudp\t-\t0.1\t148\t92\tSF\t-\t0\tDd\t1\t176\t1\t120\t(empty)\t17",
		"1700000001\tC2\t198.51.100.7\t0\t203.0.113.10\t0\tunknown_transport\t-\t-\t-\t-\tOTH\t-\t0\t-\t3\t400\t0\t0\t(empty)\t50",
		"1700000002\tC3\t198.51.100.7\t5353\t203.0.113.11\t53\tudp\tdns\t0.01\t30\t60\tSF\t-\t0\tDd\t1\t58\t1\t88\t(empty)\t17",
		"bogus\tC4\t198.51.100.7\t1\t203.0.113.12\t2\ttcp\t-\t-\t-\t-\tS0\t-\t0\tS\t1\t40\t0\t0\t(empty)\t6",
		"1700000003\tC5\t198.51.100.7\t1\t203.0.113.12\n",
	}
	r = runScan(t, "zeek", head+strings.Join(rows, "\n"))
	if len(r.obs) != 2 || !slices.Equal(badLines(r.bad), []int{12, 13}) {
		t.Fatalf("obs %s bad %v skipped %v", mustJSON(t, r.obs), r.bad, r.skipped)
	}
	if f := r.obs[0]; f.IP != "203.0.113.9" || f.Flow.Protocol != "wireguard" || f.Flow.Port != 51820 || f.ObservedAt != "2023-11-14T22:13:20Z" {
		t.Errorf("wireguard = %s", mustJSON(t, f))
	}
	if f := r.obs[1]; f.IP != "203.0.113.10" || f.Flow.Protocol != "ipsec" {
		t.Errorf("esp = %s", mustJSON(t, f))
	}
	if !strings.Contains(r.bad[0].Error(), "ts: not a time") || !strings.Contains(r.bad[1].Error(), "the #fields header names") {
		t.Errorf("errors %v", r.bad)
	}
}

func TestSuricata_RealSample(t *testing.T) {
	t.Parallel()
	r := runScan(t, "suricata-eve", readFile(t, "suricata-eve.json"))
	if len(r.obs) != 10 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	c := countReasons(r.skipped)
	if c[flowUnrecognised] != 7 || c["suricata dns event not read"] != 1 || c["suricata alert event without tls, http or ssh metadata"] != 1 ||
		c["suricata smtp event not read"] != 1 || c["suricata tls event with no server evidence"] != 1 {
		t.Errorf("skipped %v", c)
	}
	// tls with ja3s (Suricata 6, malware-traffic-analysis capture).
	o := r.obs[2]
	tls := o.Service.Probes[0].TLS
	if o.IP != "204.79.197.200" || o.Service.Port != 443 || o.ObservedAt != "2022-02-08T14:40:36Z" || o.Hostnames[0] != "www.bing.com" ||
		tls.Version != "TLSv1.2" || tls.Subject.CN != "www.bing.com" || tls.Issuer.CN != "Microsoft RSA TLS CA 01" ||
		tls.Issuer.O[0] != "Microsoft Corporation" || tls.Serial != "12001f72f70a0aa155962ab9cb0000001f72f7" ||
		tls.NotBefore != "2021-12-22T01:34:07Z" || tls.NotAfter != "2022-06-22T01:34:07Z" || tls.JA3S != "fbe594b39bb5d9c53aa4f6caf8d2950c" {
		t.Errorf("tls = %s", mustJSON(t, o))
	}
	// http, non-extended and extended.
	if p := r.obs[0].Service.Probes[0]; r.obs[0].IP != "91.240.118.172" || r.obs[0].Service.Port != 80 || p.Request.Method != "GET" ||
		p.Request.Path != "/hh/hh.html" || !strings.HasPrefix(headerValues(p.Request.Headers, "User-Agent")[0], "Mozilla/4.0") ||
		p.Response.Status != 200 || p.Response.Protocol != "HTTP/1.1" || headerValues(p.Response.Headers, "Content-Type")[0] != "text/html" {
		t.Errorf("http = %s", mustJSON(t, p))
	}
	// The documentation's event with dump-all-headers: both header lists in order.
	o = r.obs[9]
	p := o.Service.Probes[0]
	var names []string
	for _, h := range p.Response.Headers {
		names = append(names, h.Name)
	}
	if o.IP != "142.11.240.191" || o.Service.Port != 35361 || p.Request.Method != "POST" || len(p.Request.Headers) != 7 ||
		strings.Join(names, ",") != "Content-Length,Content-Type,Server,Date" || headerValues(p.Response.Headers, "Server")[0] != "Microsoft-HTTPAPI/2.0" {
		t.Errorf("dump-all-headers = %s", mustJSON(t, o))
	}
}

func TestSuricata_Flows(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		// A WireGuard handshake seen by Suricata: whole frames (148 + 8 + 20 + 14).
		`{"timestamp":"2026-11-20T10:00:05.000000+0000","event_type":"flow","src_ip":"198.51.100.7","src_port":40000,"dest_ip":"203.0.113.9","dest_port":51820,"proto":"UDP","app_proto":"failed","flow":{"pkts_toserver":1,"pkts_toclient":1,"bytes_toserver":190,"bytes_toclient":134,"start":"2026-11-20T10:00:00.000000+0000","end":"2026-11-20T10:00:00.100000+0000","age":0,"state":"established","reason":"timeout","alerted":false}}`,
		// The same from a raw-IP capture (no link layer).
		`{"timestamp":"2026-11-20T10:00:05.000000+0000","event_type":"netflow","src_ip":"198.51.100.7","src_port":40000,"dest_ip":"203.0.113.9","dest_port":51820,"proto":"UDP","netflow":{"pkts":1,"bytes":176,"start":"2026-11-20T10:00:00.000000+0000","end":"2026-11-20T10:00:00.000000+0000"}}`,
		// ESP, proto as a number.
		`{"timestamp":"2026-11-20T10:00:05.000000+0000","event_type":"flow","src_ip":"198.51.100.7","dest_ip":"203.0.113.10","proto":"050","flow":{"pkts_toserver":3,"bytes_toserver":400,"end":"2026-11-20T10:00:01.000000+0000"}}`,
		`{"timestamp":"x","event_type":"flow","src_ip":"198.51.100.7","dest_ip":"203.0.113.10","proto":"UDP","flow":{"pkts_toserver":1}}`,
		`{"event_type":"flow","src_ip":"0.0.0.0","dest_ip":"203.0.113.10","proto":"UDP","flow":{}}`,
		`{"event_type":"tls","src_ip":"198.51.100.7","dest_ip":"203.0.113.10","dest_port":0,"proto":"TCP","tls":{"subject":"CN=x"}}`,
		`{"src_ip":"198.51.100.7"}`,
		`[`,
		`{"event_type":"flow","src_ip":"198.51.100.7","dest_ip":"203.0.113.10","proto":"TCP"}`,
	}, "\n")
	r := runScan(t, "suricata-eve", in)
	// Line 5, a flow from 0.0.0.0, is skipped (TestZeek_UnspecifiedAddressSkipped).
	if len(r.obs) != 3 || !slices.Equal(badLines(r.bad), []int{4, 6, 7, 8, 9}) || len(r.skipped) != 1 {
		t.Fatalf("obs %s bad %v skipped %v", mustJSON(t, r.obs), r.bad, r.skipped)
	}
	if f := r.obs[0]; f.IP != "203.0.113.9" || f.Flow.Protocol != "wireguard" || f.Flow.Basis != "port+size" || f.ObservedAt != "2026-11-20T10:00:00Z" {
		t.Errorf("wireguard flow = %s", mustJSON(t, f))
	}
	if f := r.obs[1]; f.Flow.Protocol != "wireguard" || f.Flow.Basis != "port+size" {
		t.Errorf("wireguard netflow = %s", mustJSON(t, f))
	}
	if f := r.obs[2]; f.IP != "203.0.113.10" || f.Flow.Protocol != "ipsec" || f.ObservedAt != "2026-11-20T10:00:01Z" {
		t.Errorf("esp = %s", mustJSON(t, f))
	}
}

// TestSuricata_Alerts: alerts go in with the flow's app-layer metadata, on
// the flow's server whichever way the alert's packet went: a real export
// (a pretty-printed JSON array of Suricata 4.x alerts, the subject in
// OpenSSL's one-line form) and Suricata 7's direction and flow members.
func TestSuricata_Alerts(t *testing.T) {
	t.Parallel()
	r := runScan(t, "suricata-eve", readFile(t, "suricata-alerts-wrccdc2018.json"))
	if len(r.obs) != 2 || len(r.bad) != 0 || countReasons(r.skipped)["suricata alert event without tls, http or ssh metadata"] != 1 {
		t.Fatalf("obs %s bad %v skipped %v", mustJSON(t, r.obs), r.bad, r.skipped)
	}
	h := r.obs[0]
	if h.IP != "64.135.77.30" || h.Service.Port != 80 || h.Service.Probes[0].Request.Path == "" || h.Hostnames[0] != "cfg.crawler.com" {
		t.Errorf("http alert = %s", mustJSON(t, h))
	}
	tls := r.obs[1].Service.Probes[0].TLS
	if r.obs[1].IP != "10.47.1.1" || r.obs[1].Service.Port != 443 || tls.Subject.CN != "d92c11ece94546685d283c62baa542e1f4e65323e4c865aa71cd5bff8dfc95b7" ||
		tls.Subject.Email != "support@paloaltonetworks.com" || tls.Issuer.CN != "localhost" || tls.Issuer.OU[0] != "Support" {
		t.Errorf("tls alert = %s", mustJSON(t, r.obs[1]))
	}

	// The server's own packet raised the alert: the server is the source.
	const tlsMeta = `"tls":{"subject":"CN=vpn.example.com","issuerdn":"CN=vpn.example.com","version":"TLS 1.2"}`
	lines := strings.Join([]string{
		`{"timestamp":"2025-01-02T03:04:05.000000+0000","event_type":"alert","src_ip":"198.51.100.7","src_port":443,"dest_ip":"192.0.2.10","dest_port":51000,"proto":"TCP","direction":"to_client",` + tlsMeta + `}`,
		// Suricata 7's flow member names the client and the server.
		`{"timestamp":"2025-01-02T03:04:05.000000+0000","event_type":"alert","src_ip":"198.51.100.8","src_port":40000,"dest_ip":"192.0.2.10","dest_port":51000,"proto":"TCP",` + tlsMeta + `,"flow":{"src_ip":"192.0.2.10","dest_ip":"198.51.100.8","src_port":51000,"dest_port":40000}}`,
		// No direction: the lower port is the server's.
		`{"timestamp":"2025-01-02T03:04:05.000000+0000","event_type":"alert","src_ip":"198.51.100.9","src_port":10443,"dest_ip":"192.0.2.10","dest_port":51000,"proto":"TCP",` + tlsMeta + `}`,
		`{"timestamp":"2025-01-02T03:04:05.000000+0000","event_type":"alert","src_ip":"192.0.2.10","src_port":51000,"dest_ip":"198.51.100.10","dest_port":8443,"proto":"TCP","direction":"to_server",` + tlsMeta + `}`,
	}, "\n")
	r = runScan(t, "suricata-eve", lines)
	var got []string
	for _, o := range r.obs {
		got = append(got, fmt.Sprintf("%s:%d", o.IP, o.Service.Port))
	}
	want := "198.51.100.7:443 198.51.100.8:40000 198.51.100.9:10443 198.51.100.10:8443"
	if strings.Join(got, " ") != want || len(r.bad) != 0 {
		t.Errorf("servers %v, want %s (bad %v)", got, want, r.bad)
	}
}

// TestZeek_SNMP: snmp.log's display_string (the agent's sysDescr) is a
// banner of the responder's UDP port, in TSV (the header of Zeek's own
// baseline, testing/btest/Baseline/scripts.base.protocols.snmp.v3) and
// JSON; a record without one is skipped; a ts that is not a time (Zeek's
// test logs) is warned of and the record goes in.
func TestZeek_SNMP(t *testing.T) {
	t.Parallel()
	tsv := "#separator \\x09\n#set_separator\t,\n#empty_field\t(empty)\n#unset_field\t-\n#path\tsnmp\n" +
		"#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tduration\tversion\tcommunity\tget_requests\tget_bulk_requests\tget_responses\tset_requests\tdisplay_string\tup_since\n" +
		"#types\ttime\tstring\taddr\tport\taddr\tport\tinterval\tstring\tstring\tcount\tcount\tcount\tcount\tstring\ttime\n" +
		"1700000000.000000\tC1\t192.0.2.10\t54211\t198.51.100.7\t161\t0.001171\t2c\tpublic\t1\t0\t1\t0\tCisco Adaptive Security Appliance Version 9.8(4)\t-\n" +
		"XXXXXXXXXX.XXXXXX\tC2\t192.0.2.10\t54212\t198.51.100.8\t161\t0.001171\t2c\tpublic\t1\t0\t1\t0\tRouterOS RB4011iGS+\t-\n" +
		"1700000000.000000\tC3\t192.0.2.10\t54213\t198.51.100.9\t161\t11.133819\t3\t-\t0\t0\t0\t0\t-\t-\n"
	r, warns := runScanWarn(t, "zeek", tsv)
	if len(r.obs) != 2 || len(r.bad) != 0 || countReasons(r.skipped)["zeek snmp record with no display_string (sysDescr)"] != 1 {
		t.Fatalf("obs %s bad %v skipped %v", mustJSON(t, r.obs), r.bad, r.skipped)
	}
	o := r.obs[0]
	if o.IP != "198.51.100.7" || o.Service.Port != 161 || o.Service.Transport != "udp" || o.ObservedAt != "2023-11-14T22:13:20Z" ||
		o.Service.Probes[0].Banner.Received.Text() != "Cisco Adaptive Security Appliance Version 9.8(4)" {
		t.Errorf("snmp = %s", mustJSON(t, o))
	}
	if len(warns) != 1 || !strings.Contains(warns[0], `ts: not a time: "XXXXXXXXXX.XXXXXX"`) {
		t.Errorf("warnings %q", warns)
	}
	// JSON without _path, known by its fields.
	r = runScan(t, "zeek", `{"ts":1700000000.0,"uid":"C4","id.orig_h":"192.0.2.10","id.orig_p":50085,"id.resp_h":"198.51.100.7","id.resp_p":161,"duration":0.0,"version":"2c","community":"public","get_requests":1,"get_bulk_requests":0,"get_responses":1,"set_requests":0,"display_string":"SonicWALL TZ 470 (SonicOS 7.0.1-5035)"}`)
	if len(r.obs) != 1 || r.obs[0].Service.Probes[0].Banner.Received.Text() != "SonicWALL TZ 470 (SonicOS 7.0.1-5035)" {
		t.Errorf("json snmp: %s %v %v", mustJSON(t, r.obs), r.bad, r.skipped)
	}
}

// TestZeek_ConnServiceVerdict: conn.log's service, the analyzers that
// confirmed a protocol in the packets, names the protocol on the responder
// whatever the port (basis label); without one the inference reads the
// counters as before. The OpenVPN record is corelight/zeek-spicy-openvpn's
// baseline tests/baseline/analyzer.openvpn/conn.log.filtered @b6a49d74
// (BSD-3-Clause), its XXXXXXXXXX.XXXXXX time written as a time.
func TestZeek_ConnServiceVerdict(t *testing.T) {
	t.Parallel()
	head := "#separator \\x09\n#path\tconn\n#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tproto\tservice\tduration\torig_bytes\tresp_bytes\tconn_state\tmissed_bytes\thistory\torig_pkts\torig_ip_bytes\tresp_pkts\tresp_ip_bytes\ttunnel_parents\n" +
		"#types\ttime\tstring\taddr\tport\taddr\tport\tenum\tstring\tinterval\tcount\tcount\tstring\tcount\tstring\tcount\tcount\tcount\tcount\tset[string]\n"
	rows := "1700000000.000000\tCHhAvVGS1DHFjwGM9\t192.168.88.3\t50568\t46.246.122.61\t1198\tudp\tspicy_openvpn_udp,ssl\t44.271572\t5825\t8524\tSF\t0\tDd\t57\t7421\t48\t9868\t-\n" +
		"1700000000.000000\tC2\t192.0.2.10\t500\t198.51.100.7\t500\tudp\tspicy_ipsec_ike_udp\t1.0\t900\t900\tSF\t0\tDd\t4\t1012\t4\t1012\t-\n" +
		"1700000000.000000\tC3\t192.0.2.10\t40000\t198.51.100.8\t2222\ttcp\tssh\t3.0\t2000\t3000\tSF\t0\tShADadFf\t20\t3000\t20\t4000\t-\n" +
		"1700000000.000000\tC4\t192.0.2.10\t40001\t198.51.100.9\t443\ttcp\tssl,http\t3.0\t2000\t3000\tSF\t0\tShADadFf\t20\t3000\t20\t4000\t-\n"
	r := runScan(t, "zeek", head+rows)
	var got []string
	for _, o := range r.obs {
		got = append(got, fmt.Sprintf("%s %s/%d %s %v %q", o.IP, o.Flow.Transport, o.Flow.Port, o.Flow.Protocol, o.Flow.Confidence, o.Flow.Basis))
	}
	want := []string{`46.246.122.61 udp/1198 openvpn 0.95 ""`, `198.51.100.7 udp/500 ikev2 0.95 ""`, `198.51.100.8 tcp/2222 ssh 0.95 ""`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(r.bad) != 0 {
		t.Errorf("flows\n%s\nwant\n%s\n(bad %v, skipped %v)", strings.Join(got, "\n"), strings.Join(want, "\n"), r.bad, r.skipped)
	}
}

// TestZeek_UnspecifiedAddressSkipped: Zeek's conn.log of a PPP capture
// (its btest baseline core.ppp) holds two ICMPv6 neighbour solicitations
// from :: (duplicate address detection), real packets; they were
// reported as malformed ("id.orig_h: unspecified address ::") and the
// file refused as not Zeek. They are skipped now, with their reason; so
// is Suricata's flow event of a DHCP client at 0.0.0.0 (a constructed
// line in eve's shape).
func TestZeek_UnspecifiedAddressSkipped(t *testing.T) {
	t.Parallel()
	r := runScan(t, "zeek", readFile(t, "zeek-btest-ppp-conn.log"))
	if len(r.bad) != 0 || len(r.skipped) != 3 {
		t.Fatalf("bad %v skipped %v", r.bad, r.skipped)
	}
	n := 0
	for _, s := range r.skipped {
		if strings.Contains(s, "unspecified address") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("skipped %v: want 2 of the unspecified address", r.skipped)
	}
	eve := `{"timestamp":"2016-06-08T20:01:52.875791+0000","flow_id":1,"event_type":"flow","src_ip":"0.0.0.0","src_port":68,"dest_ip":"255.255.255.255","dest_port":67,"proto":"UDP","app_proto":"dhcp","flow":{"pkts_toserver":1,"pkts_toclient":0,"bytes_toserver":342,"bytes_toclient":0,"start":"2016-06-08T20:01:52.875791+0000","end":"2016-06-08T20:01:52.875791+0000","age":0,"state":"new","reason":"timeout","alerted":false}}` + "\n"
	r = runScan(t, "suricata-eve", eve)
	if len(r.bad) != 0 || len(r.skipped) != 1 || !strings.Contains(r.skipped[0], "unspecified address") {
		t.Errorf("suricata: bad %v skipped %v", r.bad, r.skipped)
	}
}
