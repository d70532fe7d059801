package ingest

import (
	"encoding/csv"
	"fmt"
	"strings"
	"testing"
	"time"
)

// shadowserverRun reads input with the shadowserver adapter and keeps
// what it emits, reports, skips and warns of, with their lines.
type shadowserverResult struct {
	obs      []Observation
	lines    []int
	bad      []string // "line N: error"
	skipped  []string // "line N: reason"
	warnings []string // "line N: message"
}

func shadowserverRun(t *testing.T, input string) shadowserverResult {
	t.Helper()
	var r shadowserverResult
	opt := Options{ObservedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Skipped: func(line int, reason string) { r.skipped = append(r.skipped, fmt.Sprintf("line %d: %s", line, reason)) },
		Warn:    func(line int, msg string) { r.warnings = append(r.warnings, fmt.Sprintf("line %d: %s", line, msg)) }}
	err := Shadowserver(strings.NewReader(input), opt, func(line int, o Observation) error {
		r.obs = append(r.obs, o)
		r.lines = append(r.lines, line)
		return nil
	}, func(le LineError) { r.bad = append(r.bad, le.Error()) })
	if err != nil {
		t.Fatalf("adapter: %v", err)
	}
	return r
}

// TestShadowserver_Samples reads each real report (testdata/SOURCES.md,
// "Shadowserver reports") and checks what each row became.
func TestShadowserver_Samples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file                string
		services            int
		bad, skip, warnings []string
		check               func(t *testing.T, obs []Observation)
	}{
		{file: "shadowserver-scan_http.csv", services: 2, check: func(t *testing.T, obs []Observation) {
			o := obs[0]
			p := o.Service.Probes[0]
			if o.IP != "75.74.78.113" || o.Service.Port != 8080 || o.Service.Transport != "tcp" || o.ObservedAt != "2018-04-19T00:02:26Z" ||
				strings.Join(o.Hostnames, ",") != "c-75-74-78-113.hsd1.fl.comcast.net" || len(o.Claims) != 0 {
				t.Errorf("row 1 = %s", mustJSON(t, o))
			}
			if p.Name != "shadowserver:http" || p.Request.Method != "GET" || p.Request.Path != "/" || p.TLS != nil ||
				p.Response.Status != 200 || p.Response.Reason != "OK" || p.Response.Protocol != "HTTP/1.1" ||
				headerValues(p.Response.Headers, "Server")[0] != "lighttpd" || headerValues(p.Response.Headers, "Transfer-Encoding")[0] != "chunked" ||
				headerValues(p.Response.Headers, "Date")[0] != "Thu, 19 Apr 2018 00:02:28 GMT" || headerValues(p.Response.Headers, "Content-Type")[0] != "text/html" {
				t.Errorf("http = %s", mustJSON(t, p))
			}
			if d := o.Service.Detected; d == nil || d.By != "shadowserver" || d.Service != "http" || d.Info != "tag: http" {
				t.Errorf("detected = %s", mustJSON(t, d))
			}
			if p := obs[1].Service.Probes[0]; headerValues(p.Response.Headers, "Content-Length")[0] != "17729" || len(headerValues(p.Response.Headers, "Server")) != 0 {
				t.Errorf("row 2 = %s", mustJSON(t, p))
			}
		}},
		// the Ubiquiti discovery report names the device by modelshort and
		// its firmware: kept as what Shadowserver identified
		{file: "shadowserver-accessible-ubiquiti.csv", services: 2, check: func(t *testing.T, obs []Observation) {
			o := obs[0]
			if o.Service.Port != 10001 || o.Service.Transport != "udp" || len(o.Service.Probes) != 0 {
				t.Errorf("row 1 = %s", mustJSON(t, o))
			}
			if d := o.Service.Detected; d == nil || d.Service != "ubiquiti" || d.Product != "AG5-HP" || d.Version != "XM.ar7240.v6.0.4-licensed.30805.170505.1649" {
				t.Errorf("detected = %s", mustJSON(t, o.Service.Detected))
			}
			if d := obs[1].Service.Detected; d.Product != "LB5" || d.Version != "XW.ar934x.v6.0.4.30805.170505.1510" {
				t.Errorf("row 2 detected = %s", mustJSON(t, d))
			}
		}},
		{file: "shadowserver-scan_ssl.csv", services: 3, check: func(t *testing.T, obs []Observation) {
			o := obs[0]
			p := o.Service.Probes[0]
			tls := p.TLS
			if o.IP != "96.60.0.0" || o.Service.Port != 10443 || o.Service.Transport != "tcp" || o.ObservedAt != "2022-01-10T00:01:42Z" || len(o.Service.Probes) != 1 {
				t.Errorf("row 1 = %s", mustJSON(t, o))
			}
			if tls == nil || tls.Version != "TLSv1.2" || tls.Cipher != "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA" ||
				tls.Subject.CN != "FGT60D4614030700" || tls.Subject.O[0] != "Fortinet" || tls.Subject.OU[0] != "FortiGate" || tls.Subject.C != "US" ||
				tls.Subject.Email != "support@fortinet.com" || tls.Issuer.CN != "support" || tls.Issuer.OU[0] != "Certificate Authority" ||
				tls.Serial != "168cae" || tls.SHA256 != "35abb6762a3d17b2fb40451bfc0a990a6e4857f7300a3bb11ae699705b7c3241" ||
				tls.NotBefore != "2014-06-23T09:56:32Z" || tls.NotAfter != "2038-01-19T03:14:07Z" || tls.SelfSigned {
				t.Errorf("tls = %s", mustJSON(t, tls))
			}
			// The HTTP answer scan_ssl records (server_type is the Server header).
			if p.Response.Status != 200 || headerValues(p.Response.Headers, "Server")[0] != "xxxxxxxx-xxxxx" || headerValues(p.Response.Headers, "Content-Length")[0] != "131" {
				t.Errorf("http = %s", mustJSON(t, p.Response))
			}
			if d := o.Service.Detected; d.Service != "ssl" || d.Info != "tag: ssl,vpn" {
				t.Errorf("detected = %s", mustJSON(t, d))
			}
			if s := obs[1].Service.Probes[0].TLS.Subject; s.CN != "1078-btb-tbi-HungHa-61d39c6d5a7e2" || s.O[0] != "pfSense webConfigurator Self-Signed Certificate" {
				t.Errorf("row 2 subject = %s", mustJSON(t, s))
			}
		}},
		{file: "shadowserver-scan_ssl_poodle.csv", services: 6, check: func(t *testing.T, obs []Observation) {
			if tls := obs[0].Service.Probes[0].TLS; obs[0].IP != "203.0.113.85" || obs[0].Service.Port != 8443 || tls.Subject.CN != "usg20_107BEF394BA5" || !tls.SelfSigned || tls.Serial != "53aa112a" {
				t.Errorf("usg20 = %s", mustJSON(t, obs[0]))
			}
			// A negative serial (as Shadowserver prints it) keeps its sign.
			if tls := obs[4].Service.Probes[0].TLS; tls.Subject.CN != "FGT60C3G12019794" || tls.Issuer.O[0] != "Fortinet Ltd." || tls.Serial != "-6cd83a89" || tls.Version != "TLSv1.0" {
				t.Errorf("FGT60C = %s", mustJSON(t, tls))
			}
			if tls := obs[5].Service.Probes[0].TLS; obs[5].ObservedAt != "2022-02-07T00:01:41Z" || tls.Subject.CN != "FWF60D4615000455" || tls.Serial != "1ca40f" {
				t.Errorf("FWF60D = %s", mustJSON(t, tls))
			}
		}},
		{file: "shadowserver-scan_ssl_freak.csv", services: 6, check: func(t *testing.T, obs []Observation) {
			if tls := obs[0].Service.Probes[0].TLS; tls.Subject.CN != "Technicolor TG670" || tls.Serial != "-7a2c610e" {
				t.Errorf("technicolor = %s", mustJSON(t, tls))
			}
			if tls := obs[3].Service.Probes[0].TLS; obs[3].IP != "198.51.100.146" || tls.Subject.CN != "zywall_110_A0E4CB7CE5AF" || tls.Cipher != "TLS_ECDHE_RSA_WITH_RC4_128_SHA" ||
				tls.NotAfter != "2025-01-23T17:19:56Z" || !tls.SelfSigned {
				t.Errorf("zywall = %s", mustJSON(t, tls))
			}
		}},
		{file: "shadowserver-scan_snmp.csv", services: 3, check: func(t *testing.T, obs []Observation) {
			o := obs[1]
			if o.IP != "192.168.0.2" || o.Service.Port != 161 || o.Service.Transport != "udp" || o.ObservedAt != "2010-02-10T00:00:01Z" ||
				o.Service.Probes[0].Name != "shadowserver:snmp" || o.Service.Probes[0].Banner.Received.Text() != "RouterOS CCR1009-8G-1S-1S+" {
				t.Errorf("mikrotik = %s", mustJSON(t, o))
			}
			// device_vendor as detected; the version column (SNMP's 2) is not a product version.
			if d := o.Service.Detected; d.Product != "MikroTik" || d.Version != "" || d.Service != "snmp" || d.Info != "device_type: router; tag: snmp,iot" {
				t.Errorf("detected = %s", mustJSON(t, d))
			}
			if len(obs[2].Service.Probes) != 0 {
				t.Errorf("row without sysdesc = %s", mustJSON(t, obs[2]))
			}
		}},
		{file: "shadowserver-scan_isakmp.csv", services: 2, check: func(t *testing.T, obs []Observation) {
			// The report has no vendor IDs: an open udp/500 and its tag.
			if o := obs[0]; o.IP != "198.123.245.42" || o.Service.Port != 500 || o.Service.Transport != "udp" || len(o.Service.Probes) != 0 ||
				o.Service.Detected.Service != "isakmp" || o.Service.Detected.Info != "tag: isakmp-vulnerable" {
				t.Errorf("isakmp = %s", mustJSON(t, o))
			}
		}},
		{file: "shadowserver-scan_telnet.csv", services: 2, check: func(t *testing.T, obs []Observation) {
			if o := obs[1]; o.IP != "198.123.245.145" || o.Service.Port != 5678 || o.ObservedAt != "2019-09-04T12:27:40Z" ||
				o.Service.Probes[0].Banner.Received.Text() != "|MikroTik v6.45.3 (stable)|Login:" || o.Service.Detected.Service != "telnet-alt" {
				t.Errorf("telnet = %s", mustJSON(t, o))
			}
		}},
		{file: "shadowserver-scan6_telnet.csv", services: 2, check: func(t *testing.T, obs []Observation) {
			if o := obs[0]; o.IP != "2a01::12" || o.Service.Probes[0].Banner.Received.Text() != "|MikroTik v6.5|Login:" {
				t.Errorf("telnet6 = %s", mustJSON(t, o))
			}
		}},
		{file: "shadowserver-scan_vnc.csv", services: 2, check: func(t *testing.T, obs []Observation) {
			if o := obs[1]; o.Service.Transport != "tcp" || o.Service.Probes[0].Banner.Received.Text() != "RFB 005.000" ||
				o.Service.Detected.Product != "RealVNC Enterprise v5.3 or later" || strings.Join(o.Hostnames, ",") != "localhost.localdomain" {
				t.Errorf("vnc = %s", mustJSON(t, o))
			}
		}},
		{file: "shadowserver-scan_rdp.csv", services: 2,
			warnings: []string{"line 2: 31 columns, the header (line 1) has 32: the last 1 read as empty", "line 3: 31 columns, the header (line 1) has 32: the last 1 read as empty"},
			check: func(t *testing.T, obs []Observation) {
				p := obs[0].Service.Probes[0]
				if p.Name != "shadowserver:rdp" || p.TLS.Subject.CN != "KABESRV.KABE.local" || p.TLS.Serial != "1ef2b37af850c9bf4e88f18177001d6b" ||
					p.TLS.SHA256 != "b7c9f407d5c0751dea0c40e72639c230c613837e1846d8e94c453f881b0b7076" || p.TLS.NotAfter != "2019-10-29T02:22:06Z" ||
					!strings.Contains(obs[0].Service.Detected.Info, "bluekeep_vulnerable: N") {
					t.Errorf("rdp = %s", mustJSON(t, obs[0]))
				}
			}},
		{file: "shadowserver-scan_ssh.csv", services: 3, check: func(t *testing.T, obs []Observation) {
			if p := obs[0].Service.Probes[0]; p.Name != "shadowserver:ssh" || p.Banner.Received.Text() != "SSH-2.0-OpenSSH_7.4" || obs[0].Service.Port != 22 {
				t.Errorf("ssh = %s", mustJSON(t, obs[0]))
			}
			if o := obs[2]; o.IP != "72.17.0.0" || o.Service.Probes[0].Banner.Received.Text() != "SSH-1.99-Cisco-1.25" || o.Service.Detected.Product != "Cisco" {
				t.Errorf("cisco = %s", mustJSON(t, o))
			}
		}},
		{file: "shadowserver-scan_ftp.csv", services: 2, check: func(t *testing.T, obs []Observation) {
			o := obs[0]
			if len(o.Service.Probes) != 2 || o.Service.Probes[0].TLS.Subject.CN != "*.bizmw.com" || o.Service.Probes[1].Banner.Received.Text() != "220 FTP Server ready.|" ||
				o.Service.Detected.Service != "ftp" {
				t.Errorf("ftp = %s", mustJSON(t, o))
			}
			if !strings.Contains(obs[1].Service.Probes[len(obs[1].Service.Probes)-1].Banner.Received.Text(), "|220 FTP server ready, 1 active clients") {
				t.Errorf("ftp 2 = %s", mustJSON(t, obs[1]))
			}
		}},
		{file: "shadowserver-scan_dns.csv", services: 5, check: func(t *testing.T, obs []Observation) {
			if o := obs[2]; o.IP != "198.51.100.167" || o.Service.Port != 53 || o.Service.Transport != "udp" ||
				o.Service.Probes[0].Name != "shadowserver:dns_version" || o.Service.Probes[0].Banner.Received.Text() != "ZyWALL DNS" {
				t.Errorf("zywall dns = %s", mustJSON(t, o))
			}
			if o := obs[3]; len(o.Service.Probes) != 0 {
				t.Errorf("no version = %s", mustJSON(t, o))
			}
		}},
		{file: "shadowserver-device_id.csv", services: 3, check: func(t *testing.T, obs []Observation) {
			o := obs[2]
			if o.IP != "96.60.0.0" || o.Service.Port != 10443 || o.Service.Transport != "tcp" || len(o.Service.Probes) != 0 ||
				strings.Join(o.Hostnames, ",") != "96-60-66-218.example.com" {
				t.Errorf("device = %s", mustJSON(t, o))
			}
			if d := o.Service.Detected; d.By != "shadowserver" || d.Product != "Fortinet FortiGate" || d.Info != "device_type: firewall; tag: ssl,vpn" {
				t.Errorf("detected = %s", mustJSON(t, d))
			}
		}},
		{file: "shadowserver-scan_http_vulnerable.csv", services: 3,
			warnings: []string{`line 2: csv: quotes escaped with a backslash (\") read as quotes`, `line 3: csv: quotes escaped with a backslash (\") read as quotes`},
			check: func(t *testing.T, obs []Observation) {
				p := obs[0].Service.Probes[0]
				if p.Response.Status != 401 || headerValues(p.Response.Headers, "Server")[0] != "TwistedWeb/19.7.0" ||
					headerValues(p.Response.Headers, "WWW-Authenticate")[0] != `Basic realm=""OpenWebif""` ||
					!strings.HasPrefix(headerValues(p.Response.Headers, "Set-Cookie")[0], "TWISTED_SESSION=5473ad3f") {
					t.Errorf("openwebif = %s", mustJSON(t, p))
				}
				if d := obs[2].Service.Detected; !strings.Contains(d.Info, "tag: git-config-file; detail: repositoryformatversion = 0;") {
					t.Errorf("git config = %s", mustJSON(t, d))
				}
			}},
		{file: "shadowserver-scan_exchange.csv", services: 7, check: func(t *testing.T, obs []Observation) {
			if o := obs[0]; o.IP != "12.237.1.2" || o.Service.Port != 443 || o.Service.Detected.Version != "15.2.721" ||
				o.Service.Detected.Info != "tag: exchange;cve-2021-26855; servername: AFS-EXCH2019" || o.Service.Detected.Service != "exchange" {
				t.Errorf("exchange = %s", mustJSON(t, o))
			}
		}},
		{file: "shadowserver-special.csv", skip: []string{
			"line 2: no port (column port is empty or missing): not a service",
			"line 3: no port (column port is empty or missing): not a service",
			"line 4: no port (column port is empty or missing): not a service"}},
		{file: "shadowserver-event4_sinkhole_http.csv",
			bad:  []string{`line 1: header: no "ip" column: an event report (src_ip, dst_ip: the hosts a sinkhole or honeypot saw connect) lists no service`},
			skip: []string{"line 2: the header of line 1 names no ip column", "line 3: the header of line 1 names no ip column"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			r := shadowserverRun(t, readFile(t, tt.file))
			if len(r.obs) != tt.services || strings.Join(r.bad, "\n") != strings.Join(tt.bad, "\n") ||
				strings.Join(r.skipped, "\n") != strings.Join(tt.skip, "\n") || strings.Join(r.warnings, "\n") != strings.Join(tt.warnings, "\n") {
				t.Fatalf("%d services (want %d)\nbad %q\nskipped %q\nwarnings %q", len(r.obs), tt.services, r.bad, r.skipped, r.warnings)
			}
			for i, o := range r.obs {
				if o.Source != "shadowserver" || r.lines[i] != i+2 {
					t.Errorf("service %d: source %q line %d", i, o.Source, r.lines[i])
				}
			}
			if tt.check != nil {
				tt.check(t, r.obs)
			}
		})
	}
}

// TestShadowserver_Input covers the shapes of the CSV and the errors a
// bad row gets: each names its line and column, and the rows around it
// still go in.
func TestShadowserver_Input(t *testing.T) {
	t.Parallel()
	const head = `"timestamp","ip","protocol","port","hostname","tag","banner"` + "\n"
	tests := []struct {
		name, input string
		ips         []string
		lines       []int
		bad, skip   []string
		warnings    []string
		banner      string
	}{
		{name: "BOM and CRLF", input: "\xef\xbb\xbf" + strings.ReplaceAll(head+`"2026-11-20 10:00:00","192.0.2.1","tcp",23,"","telnet","x"`+"\n", "\n", "\r\n"),
			ips: []string{"192.0.2.1"}, lines: []int{2}, banner: "x"},
		{name: "a quoted value over three lines", input: head + `"2026-11-20 10:00:00","192.0.2.1","tcp",23,,"telnet","a` + "\nb\n" + `c"` + "\n" + `"2026-11-20 10:00:00","192.0.2.2","tcp",23,,"telnet","d"` + "\n",
			ips: []string{"192.0.2.1", "192.0.2.2"}, lines: []int{2, 5}, banner: "a\nb\nc"},
		{name: "two reports one after the other", input: head + `"2026-11-20 10:00:00","192.0.2.1","tcp",23,,"telnet","x"` + "\n\n" +
			`"timestamp","ip","port","sysdesc"` + "\n" + `"2026-11-20 10:00:01","192.0.2.2",161,"RouterOS RB4011"` + "\n",
			ips: []string{"192.0.2.1", "192.0.2.2"}, lines: []int{2, 5}, banner: "x"},
		{name: "bad address", input: head + `"2026-11-20 10:00:00","192.0.2.300","tcp",23,,,` + "\n" + `"2026-11-20 10:00:00","192.0.2.1","tcp",23,,,` + "\n",
			ips: []string{"192.0.2.1"}, lines: []int{3}, bad: []string{`line 2: column ip: not an IP address: "192.0.2.300"`}},
		{name: "no address", input: head + `"2026-11-20 10:00:00","","tcp",23,,,` + "\n",
			skip: []string{"line 2: no address (column ip is empty)"}},
		{name: "bad port", input: head + `"2026-11-20 10:00:00","192.0.2.1","tcp",70000,,,` + "\n" + `"2026-11-20 10:00:00","192.0.2.1","tcp",telnet,,,` + "\n",
			bad: []string{`line 2: column port: must be 1..65535, got "70000"`, `line 3: column port: must be 1..65535, got "telnet"`}},
		{name: "bad time", input: head + `"20/11/2026","192.0.2.1","tcp",23,,,` + "\n",
			bad: []string{`line 2: column timestamp: "20/11/2026" is not a time ("2006-01-02 15:04:05", UTC, or "2006-01-02 15:04:05Z")`}},
		{name: "bad protocol", input: head + `"2026-11-20 10:00:00","192.0.2.1","icmp",23,,,` + "\n",
			bad: []string{`line 2: column protocol: "icmp" is not tcp or udp`}},
		{name: "too many columns", input: head + `"2026-11-20 10:00:00","192.0.2.1","tcp",23,,,,x` + "\n",
			bad: []string{`line 2: 8 columns, the header (line 1) has 7`}},
		{name: "fewer columns", input: head + `"2026-11-20 10:00:00","192.0.2.1","tcp",23` + "\n",
			ips: []string{"192.0.2.1"}, lines: []int{2}, warnings: []string{"line 2: 4 columns, the header (line 1) has 7: the last 3 read as empty"}},
		{name: "bare quote", input: head + `"2026-11-20 10:00:00","192.0.2.1","tcp",23,,a"b,` + "\n",
			bad: []string{`line 2: csv: at character 46: bare " in non-quoted-field`}},
		{name: "unclosed quote at the end", input: head + `"2026-11-20 10:00:00","192.0.2.1","tcp",23,,,"abc` + "\n",
			bad: []string{`line 2: csv: the input ends inside a quoted value`}},
		{name: "not a report", input: "hello,world\n1,2\n",
			bad: []string{`line 1: header: no "ip" column: not a Shadowserver report header (first column "hello")`}, skip: []string{"line 2: the header of line 1 names no ip column"}},
		{name: "no time: the file's", input: `"ip","port"` + "\n" + `"192.0.2.1",443` + "\n", ips: []string{"192.0.2.1"}, lines: []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := shadowserverRun(t, tt.input)
			var ips []string
			for _, o := range r.obs {
				ips = append(ips, o.IP)
			}
			if strings.Join(ips, ",") != strings.Join(tt.ips, ",") || fmt.Sprint(r.lines) != fmt.Sprint(tt.lines) ||
				strings.Join(r.bad, "\n") != strings.Join(tt.bad, "\n") || strings.Join(r.skipped, "\n") != strings.Join(tt.skip, "\n") ||
				strings.Join(r.warnings, "\n") != strings.Join(tt.warnings, "\n") {
				t.Fatalf("ips %v lines %v\nbad %q\nskipped %q\nwarnings %q", ips, r.lines, r.bad, r.skipped, r.warnings)
			}
			if tt.banner != "" && r.obs[0].Service.Probes[0].Banner.Received.Text() != tt.banner {
				t.Errorf("banner = %s", mustJSON(t, r.obs[0].Service.Probes))
			}
			if tt.name == "no time: the file's" && r.obs[0].ObservedAt != "2026-11-01T00:00:00Z" {
				t.Errorf("observed_at %s", r.obs[0].ObservedAt)
			}
			if tt.name == "two reports one after the other" && (r.obs[1].Service.Transport != "udp" || r.obs[1].Service.Probes[0].Banner.Received.Text() != "RouterOS RB4011") {
				t.Errorf("second report = %s", mustJSON(t, r.obs[1]))
			}
		})
	}
}

// TestSplitCSV_EncodingCSV holds the adapter's record splitter to
// encoding/csv: the same values for what both read, an error where
// encoding/csv has one.
func TestSplitCSV_EncodingCSV(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`a,b,c`, `,,`, `""`, `"a,b",c`, `"say ""hi""",x`, `a,"",b`, `"multi` + "\n" + `line",2`, `x,`, `"",""`, `1,"2",3,"4,5"`,
		`a"b,c`, `"a"b,c`, `"a" ,b`, `a,b"`,
	} {
		want, werr := csv.NewReader(strings.NewReader(in + "\n")).Read()
		got, open, gerr := splitCSV(nil, []byte(in))
		if open || (werr != nil) != (gerr != nil) || (werr == nil && strings.Join(got, "|") != strings.Join(want, "|")) {
			t.Errorf("%q: got %q open %v err %v; encoding/csv %q err %v", in, got, open, gerr, want, werr)
		}
	}
	if _, open, err := splitCSV(nil, []byte(`a,"b`+"\n"+`c`)); !open || err != nil {
		t.Errorf("an unclosed quoted value: open %v err %v", open, err)
	}
}

// shadowserverAPIDeviceID is the Reports API's answer for a device_id
// report, rows 1 and 3 of the fixture
// external-import/shadowserver/tests/fixtures/report_type_device_id.json
// of github:OpenCTI-Platform/connectors at
// a2681ba88eb06bdaa4e78e0227716e9c12a7031f (Apache-2.0; its addresses,
// host names and ASNs already placeholders there), the addresses
// 192.168.0.1 and 192.168.0.3 replaced by the documentation addresses
// 192.0.2.1 and 192.0.2.3; members, their order and values (numbers as
// JSON numbers, the timestamp's trailing Z) as the fixture has them.
const shadowserverAPIDeviceID = `[
  {
    "asn": 12345,
    "city": "ALBANY",
    "device_model": "",
    "device_type": "video-system",
    "device_vendor": "Hikvision",
    "device_version": "",
    "geo": "US",
    "hostname": "example1.com",
    "hostname_source": "ptr",
    "ip": "192.0.2.1",
    "naics": 517311,
    "port": 8080,
    "protocol": "tcp",
    "region": "NEW YORK",
    "sector": "Communications, Service Provider, and Hosting Service",
    "severity": "info",
    "tag": "http;iot;CVE-2024-38063",
    "timestamp": "2024-01-04 00:43:10Z"
  },
  {
    "asn": 98765,
    "city": "SARATOGA SPRINGS",
    "device_model": "FortiOS SSL-VPN",
    "device_type": "vpn",
    "device_vendor": "Fortinet",
    "device_version": "",
    "geo": "US",
    "hostname": "example3.com",
    "hostname_source": "ptr",
    "ip": "192.0.2.3",
    "naics": 517311,
    "port": 10443,
    "protocol": "tcp",
    "region": "NEW YORK",
    "sector": "Communications, Service Provider, and Hosting Service",
    "severity": "info",
    "tag": "fortinet",
    "timestamp": "2024-01-04 02:27:16Z"
  }
]
`

// TestShadowserver_ReportsAPIJSON: the Reports API's JSON (an array, and
// the same objects as JSON lines) reads as the CSV rows of the same
// columns, its "2024-01-04 00:43:10Z" timestamps as UTC times.
func TestShadowserver_ReportsAPIJSON(t *testing.T) {
	t.Parallel()
	var lines []string
	for _, obj := range strings.Split(strings.Trim(shadowserverAPIDeviceID, "[]\n "), "},") {
		obj = strings.TrimSuffix(strings.TrimSpace(obj), "}") + "}"
		lines = append(lines, strings.Join(strings.Fields(strings.ReplaceAll(obj, "\n", " ")), " "))
	}
	csvForm := "timestamp,ip,port,protocol,hostname,tag,device_vendor,device_type,device_model,device_version\n" +
		"2024-01-04 00:43:10,192.0.2.1,8080,tcp,example1.com,http;iot;CVE-2024-38063,Hikvision,video-system,,\n" +
		"2024-01-04 02:27:16,192.0.2.3,10443,tcp,example3.com,fortinet,Fortinet,vpn,FortiOS SSL-VPN,\n"
	want := shadowserverRun(t, csvForm)
	if len(want.obs) != 2 || len(want.bad) != 0 {
		t.Fatalf("csv: %d obs, bad %v", len(want.obs), want.bad)
	}
	for name, input := range map[string]string{"array": shadowserverAPIDeviceID, "json lines": strings.Join(lines, "\n") + "\n"} {
		r := shadowserverRun(t, input)
		if len(r.obs) != 2 || len(r.bad) != 0 || len(r.skipped) != 0 {
			t.Fatalf("%s: %d obs, bad %v, skipped %v", name, len(r.obs), r.bad, r.skipped)
		}
		for i, o := range r.obs {
			if got, w := mustJSON(t, o), mustJSON(t, want.obs[i]); got != w {
				t.Errorf("%s row %d:\n got %s\nwant %s", name, i+1, got, w)
			}
		}
		if r.obs[0].ObservedAt != "2024-01-04T00:43:10Z" || r.obs[1].Service.Detected.Product != "Fortinet FortiOS SSL-VPN" {
			t.Errorf("%s: %s", name, mustJSON(t, r.obs))
		}
		if name == "array" && (r.lines[0] != 2 || r.lines[1] != 22) {
			t.Errorf("lines %v", r.lines)
		}
	}
	// The same timestamp in a CSV report; the API's "https" protocol
	// (report_type_scan_ssl.json) read as tcp with a warning; an event
	// report's object (src_ip) skipped with the reason.
	r := shadowserverRun(t, "timestamp,ip,port\n2024-01-04 00:43:10Z,192.0.2.1,443\n")
	if len(r.obs) != 1 || r.obs[0].ObservedAt != "2024-01-04T00:43:10Z" {
		t.Errorf("csv Z: %s bad %v", mustJSON(t, r.obs), r.bad)
	}
	r = shadowserverRun(t, `[{"ip": "192.0.2.1", "port": 443, "protocol": "https", "timestamp": "2022-01-01 12:34:55Z", "handshake": "TLSv1.2"},`+"\n"+`{"src_ip": "192.0.2.2", "timestamp": "2022-01-01 12:34:55Z"}]`)
	if len(r.obs) != 1 || r.obs[0].Service.Transport != "tcp" || len(r.warnings) != 1 || len(r.skipped) != 1 || len(r.bad) != 0 {
		t.Errorf("https/src_ip: %s warnings %v skipped %v bad %v", mustJSON(t, r.obs), r.warnings, r.skipped, r.bad)
	}
}
