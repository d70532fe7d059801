package ingest

import (
	"strings"
	"testing"
)

// TestTranscript_ClientLogs reads real openconnect and openfortivpn
// pastes (testdata/SOURCES.md, "Round AT group AT9"): openconnect behind a
// syslog or journal prefix, its answer to CONNECT /CSCOSSLC/tunnel (the
// status line, and the CSTP timers as the X-CSTP-DPD/X-CSTP-Keepalive the
// server sent), openfortivpn placed by gateway_ip with the lines of the
// gateway's answers kept; and pastes that show no address, skipped with
// their reason.
func TestTranscript_ClientLogs(t *testing.T) {
	t.Parallel()
	type probe struct {
		method, path string
		status       int
		reason       string
		headers      []string // "Name: value", in order
	}
	tests := []struct {
		file   string
		ip     string
		port   int
		tlsVer string
		probes []probe
		banner string // the openfortivpn probe's text ("" = none)
		skip   string // a skip reason that must be given ("" = none)
	}{
		// syslog prefix; openconnect before 4.07's "Attempting to connect to IP:PORT"
		{file: "openconnect-nm-syslog-asa-tuebingen.txt", ip: "198.51.100.141", port: 443,
			probes: []probe{{"CONNECT", "/CSCOSSLC/tunnel", 200, "OK", []string{"X-CSTP-DPD: 30", "X-CSTP-Keepalive: 20"}}}},
		// journal prefix; the refused CONNECT
		{file: "openconnect-journal-ocserv-401-streisand.txt", ip: "198.51.100.70", port: 4443,
			probes: []probe{{"CONNECT", "/CSCOSSLC/tunnel", 401, "Unauthorized", nil}}},
		{file: "openconnect-ocserv-8443-connected-guide.txt", ip: "198.51.100.10", port: 8443,
			probes: []probe{{"CONNECT", "/CSCOSSLC/tunnel", 200, "CONNECTED", []string{"X-CSTP-DPD: 90", "X-CSTP-Keepalive: 32400"}}}},
		{file: "openconnect-asa-connect-sydney.txt", ip: "198.51.100.42", port: 443, tlsVer: "TLSv1.2",
			probes: []probe{{"CONNECT", "/CSCOSSLC/tunnel", 200, "OK", []string{"X-CSTP-DPD: 30", "X-CSTP-Keepalive: 20"}}}},
		// openfortivpn 1.21's gateway_ip, its levels squeezed to one space
		{file: "openfortivpn-1-21-debug-pastebin.txt", ip: "203.0.113.196", port: 443,
			probes: []probe{{"POST", "/remote/logincheck", 0, "", nil}},
			banner: "DEBUG: Gateway certificate validation failed.\nDEBUG: Gateway certificate digest found in white list.\nINFO: Connected to gateway.\n"},
		{file: "openfortivpn-1-22-cert-valid-1251.txt", ip: "203.0.113.151", port: 443,
			banner: "DEBUG:  Gateway certificate validation succeeded.\n"},
		// no address shown: nothing placed, the reason said
		{file: "openfortivpn-no-address-350.txt", skip: "openfortivpn's lines name no gateway address"},
		{file: "openconnect-connect-no-address-rwth.txt", skip: "an exchange on no connection the transcript shows"},
	}
	for _, tt := range tests {
		obs, bad, skipped := readTranscript(t, tt.file)
		if len(bad) != 0 {
			t.Errorf("%s: bad records %v", tt.file, bad)
		}
		if tt.skip != "" {
			if len(obs) != 0 {
				t.Errorf("%s: %d observations, want none", tt.file, len(obs))
			}
			if !strings.Contains(strings.Join(skipped, "\n"), tt.skip) {
				t.Errorf("%s: skipped %q, want a reason with %q", tt.file, skipped, tt.skip)
			}
			continue
		}
		if len(obs) != 1 {
			t.Errorf("%s: %d observations, want 1 (skipped %q)", tt.file, len(obs), skipped)
			continue
		}
		o := obs[0]
		if o.IP != tt.ip || o.Service.Port != tt.port {
			t.Errorf("%s: %s:%d, want %s:%d", tt.file, o.IP, o.Service.Port, tt.ip, tt.port)
		}
		var https []Probe
		var tlsVer, banner string
		for _, p := range o.Service.Probes {
			switch {
			case p.TLS != nil:
				tlsVer = p.TLS.Version
			case p.Banner != nil:
				if p.Name != "openfortivpn" {
					t.Errorf("%s: banner probe named %q", tt.file, p.Name)
				}
				banner = p.Banner.Received.Data
			default:
				https = append(https, p)
			}
		}
		if tlsVer != tt.tlsVer {
			t.Errorf("%s: TLS version %q, want %q", tt.file, tlsVer, tt.tlsVer)
		}
		if banner != tt.banner {
			t.Errorf("%s: banner %q, want %q", tt.file, banner, tt.banner)
		}
		if len(https) != len(tt.probes) {
			t.Errorf("%s: %d HTTP probes, want %d: %+v", tt.file, len(https), len(tt.probes), https)
			continue
		}
		for i, want := range tt.probes {
			p := https[i]
			if p.Request == nil || p.Request.Method != want.method || p.Request.Path != want.path {
				t.Errorf("%s probe %d: request %+v, want %s %s", tt.file, i, p.Request, want.method, want.path)
			}
			if want.status == 0 {
				if p.Response != nil {
					t.Errorf("%s probe %d: response %+v, want none", tt.file, i, p.Response)
				}
				continue
			}
			r := p.Response
			if r == nil || r.Status != want.status || r.Reason != want.reason || r.Protocol != "HTTP/1.1" {
				t.Errorf("%s probe %d: response %+v, want HTTP/1.1 %d %s", tt.file, i, r, want.status, want.reason)
				continue
			}
			var hs []string
			for _, h := range r.Headers {
				hs = append(hs, h.Name+": "+h.Value)
			}
			if strings.Join(hs, "\n") != strings.Join(want.headers, "\n") {
				t.Errorf("%s probe %d: headers %q, want %q", tt.file, i, hs, want.headers)
			}
		}
	}
}

// TestTranscript_CSTPHeadersPrinted: openconnect -v prints the X-CSTP-
// headers it kept of the CONNECT answer before "CSTP connected."; the
// timers are then not added a second time, and --force-dpd on the pasted
// command line makes the printed DPD the user's, not the server's.
// Constructed from cstp.c's format strings (no real -v paste of a CONNECT
// answer was found in the corpus).
func TestTranscript_CSTPHeadersPrinted(t *testing.T) {
	t.Parallel()
	in := "$ openconnect --force-dpd=10 198.51.100.9\n" +
		"Connected to 198.51.100.9:443\n" +
		"Got CONNECT response: HTTP/1.1 200 OK\n" +
		"X-CSTP-Version: 1\n" +
		"X-CSTP-Keepalive: 20\n" +
		"X-CSTP-Post-Auth-XML: <elided>\n" +
		"CSTP connected. DPD 10, Keepalive 20\n"
	var obs []Observation
	err := Transcript(strings.NewReader(in), Options{}, func(_ int, o Observation) error {
		obs = append(obs, o)
		return nil
	}, func(e LineError) { t.Errorf("bad: %v", e) })
	if err != nil || len(obs) != 1 {
		t.Fatalf("err %v, %d observations", err, len(obs))
	}
	var hs []string
	for _, h := range obs[0].Service.Probes[0].Response.Headers {
		hs = append(hs, h.Name+": "+h.Value)
	}
	if got, want := strings.Join(hs, "|"), "X-CSTP-Version: 1|X-CSTP-Keepalive: 20"; got != want {
		t.Errorf("headers %q, want %q", got, want)
	}
}
