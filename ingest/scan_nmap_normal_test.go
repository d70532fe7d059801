package ingest

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// One real nmap 7.93 run (-sV -sC -oA, loopback services answering as a
// FortiGate's do: testdata/SOURCES.md) written three ways: the normal
// output gives the same services, scanner identification and probes as
// the XML, and the grepable output the same identification.
func TestNmapNormal_SameScanAsXML(t *testing.T) {
	t.Parallel()
	normal := runScan(t, "nmap-normal", readFile(t, "nmap-loopback.nmap"))
	xml := runScan(t, "nmap-xml", readFile(t, "nmap-loopback.xml"))
	grep := runScan(t, "nmap-grep", readFile(t, "nmap-loopback.gnmap"))
	if len(normal.obs) != 4 || len(normal.bad) != 0 || len(xml.obs) != 4 || len(grep.obs) != 4 {
		t.Fatalf("normal %d (bad %v), xml %d, grep %d services", len(normal.obs), normal.bad, len(xml.obs), len(grep.obs))
	}
	if c := normal.obs[2].Service.Probes; len(c) == 0 || c[0].TLS == nil || c[0].TLS.Subject.CN != "FGT60E4Q16000000" || !slices.Equal(c[0].TLS.Subject.O, []string{"Fortinet"}) {
		t.Errorf("ssl-cert: %s", mustJSON(t, c))
	}
	for i := range normal.obs {
		n, x, g := normal.obs[i], xml.obs[i], grep.obs[i]
		if n.IP != x.IP || n.Service.Port != x.Service.Port || n.Service.Transport != x.Service.Transport || n.ObservedAt != "2026-11-27T16:03:38Z" ||
			!slices.Equal(n.Hostnames, []string{"localhost"}) {
			t.Errorf("%d: %s\nxml %s", i, mustJSON(t, n), mustJSON(t, x))
		}
		nd, xd, gd := *n.Service.Detected, *x.Service.Detected, *g.Service.Detected
		if nd.Service != xd.Service || nd.Product != xd.Product || nd.Version != xd.Version || !slices.Equal(nd.CPE, xd.CPE) ||
			gd.Product != xd.Product || gd.Version != xd.Version {
			t.Errorf("port %d detected: normal %+v grep %+v xml %+v", n.Service.Port, nd, gd, xd)
		}
		// the XML carries the whole certificate (its PEM); the normal output only the
		// ssl-cert lines: the subject's attributes it prints must agree
		np, xp := n.Service.Probes, x.Service.Probes
		if len(np) == len(xp) {
			for j := range np {
				if np[j].TLS != nil && xp[j].TLS != nil {
					if s, xs := np[j].TLS.Subject, xp[j].TLS.Subject; s.CN != xs.CN || !slices.Equal(s.O, xs.O) || s.C != xs.C || s.ST != xs.ST {
						t.Errorf("port %d subject: %+v, xml %+v", n.Service.Port, s, xs)
					}
					np[j].TLS, xp[j].TLS = nil, nil
				}
			}
		}
		if !reflect.DeepEqual(np, xp) {
			t.Errorf("port %d probes:\nnormal %s\nxml    %s", n.Service.Port, mustJSON(t, n.Service.Probes), mustJSON(t, x.Service.Probes))
		}
	}
	if d := normal.obs[0].Service.Detected; d.Product != "FortiSSH" || d.Version != "1.0" || d.Info != "FortiSSH 1.0 (protocol 2.0); protocol 2.0" {
		t.Errorf("the version column split: %+v", d)
	}
}

// What nmap prints beside the port table: several hosts, script blocks
// (a host's own results not given to a port), Service Info's OS and CPEs
// for every port, ports not open counted as skipped, a VERSION column's
// parts; and a file with no scan report is refused.
func TestNmapNormal_Forms(t *testing.T) {
	t.Parallel()
	in := `Starting Nmap 7.94SVN ( https://nmap.org ) at 2025-03-02 10:15 UTC
Nmap scan report for vpn.example.com (198.51.100.7)
Host is up (0.021s latency).
Not shown: 996 filtered tcp ports (no-response)
PORT     STATE  SERVICE  VERSION
22/tcp   open   ssh      Cisco SSH 1.25 (protocol 2.0)
| ssh-hostkey: 
|_  2048 aa:bb:cc (RSA)
80/tcp   closed http
443/tcp  open   ssl/http Cisco ASA SSL VPN
|_http-title: Did not follow redirect to https://vpn.example.com/+CSCOE+/logon.html
| ssl-cert: Subject: commonName=vpn.example.com/organizationName=Example
| Subject Alternative Name: DNS:vpn.example.com
| Issuer: commonName=R3/organizationName=Let's Encrypt/countryName=US
| Not valid before: 2025-01-01T00:00:00
|_Not valid after:  2025-04-01T00:00:00
|_http-server-header: Cisco ASA
8443/tcp open   https-alt?
Service Info: OS: Cisco ASA; Device: firewall; CPE: cpe:/o:cisco:adaptive_security_appliance_software

Host script results:
|_clock-skew: 0s

Nmap scan report for 203.0.113.9
Host is up.
PORT    STATE SERVICE  VERSION
21/tcp  open  ftp      MikroTik router ftpd 6.49.7
| ftp-syst: 
|_  SYST: UNIX Type: L8
161/udp open  snmp     SNMPv1 server; SNMPv3 server (public)
| snmp-sysdescr: RouterOS RB4011iGS+
|_  System uptime: 12d03h

Nmap scan report for 192.0.2.44
PORT     STATE SERVICE VERSION
1723/tcp open  pptp    YAMAHA Corporation (Firmware: 32838)
| pptp-version: Firmware: 32838
|_  Vendor: YAMAHA Corporation
Service Info: Host: RT57i

Nmap done: 2 IP addresses (2 hosts up) scanned in 31.02 seconds
`
	r := runScan(t, "nmap-normal", in)
	if len(r.obs) != 6 || len(r.bad) != 0 || !slices.Equal(r.skipped, []string{"nmap: port closed"}) {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	ssh, web, alt, ftp, snmp, pptp := r.obs[0], r.obs[1], r.obs[2], r.obs[3], r.obs[4], r.obs[5]
	if d := ssh.Service.Detected; ssh.IP != "198.51.100.7" || d.Product != "Cisco SSH" || d.Version != "1.25" || !strings.Contains(d.Info, "ostype: Cisco ASA") ||
		!strings.Contains(d.Info, "devicetype: firewall") || strings.Contains(d.Info, "hostname:") ||
		!slices.Equal(d.CPE, []string{"cpe:/o:cisco:adaptive_security_appliance_software"}) || len(ssh.Service.Probes) != 0 {
		t.Errorf("ssh: %s", mustJSON(t, ssh))
	}
	hp := web.Service.Probes
	if d := web.Service.Detected; d.Service != "ssl/http" || d.Product != "Cisco ASA SSL VPN" || len(hp) != 1 || hp[0].TLS == nil || hp[0].TLS.Issuer.CN != "R3" ||
		!slices.Equal(hp[0].TLS.SANs, []string{"vpn.example.com"}) || !slices.Equal(headerValues(hp[0].Response.Headers, "Location"), []string{"https://vpn.example.com/+CSCOE+/logon.html"}) ||
		!slices.Equal(headerValues(hp[0].Response.Headers, "Server"), []string{"Cisco ASA"}) {
		t.Errorf("https: %s", mustJSON(t, web))
	}
	if d := alt.Service.Detected; alt.Service.Port != 8443 || d.Service != "https-alt" || len(alt.Service.Probes) != 0 {
		t.Errorf("8443 (the host's clock-skew is not its script): %s", mustJSON(t, alt))
	}
	if d := ftp.Service.Detected; ftp.IP != "203.0.113.9" || d.Product != "MikroTik router ftpd" || d.Version != "6.49.7" || len(ftp.Hostnames) != 0 {
		t.Errorf("ftp: %s", mustJSON(t, ftp))
	}
	if p := snmp.Service.Probes; snmp.Service.Transport != "udp" || len(p) != 1 || p[0].Name != "nmap:snmp-sysdescr" ||
		p[0].Banner.Received.Data != "RouterOS RB4011iGS+\n  System uptime: 12d03h" {
		t.Errorf("snmp: %s", mustJSON(t, snmp))
	}
	// Service Info's Host: is the host name the service gave (nmap's
	// pptp-version documentation: a Yamaha router's model), and the
	// pptp-version script's vendor and firmware are kept as its banner
	if d, p := pptp.Service.Detected, pptp.Service.Probes; !strings.Contains(d.Info, "hostname: RT57i") || len(p) != 1 || p[0].Name != "nmap:pptp-version" ||
		!strings.Contains(p[0].Banner.Received.Data, "Vendor: YAMAHA Corporation") {
		t.Errorf("pptp: %s", mustJSON(t, pptp))
	}
	bad := runScan(t, "nmap-normal", "PORT STATE SERVICE\n22/tcp open ssh\n")
	if len(bad.obs) != 0 || len(bad.bad) != 1 || bad.bad[0].Line != 1 || !strings.Contains(bad.bad[0].Err.Error(), "not nmap normal output") {
		t.Errorf("no scan report: %v", bad.bad)
	}
	bad = runScan(t, "nmap-normal", "Nmap scan report for 10.0.0.300\n22/tcp open ssh\nNmap scan report for 192.0.2.1\n22/tcp open ssh OpenSSH 9.6\n")
	if len(bad.obs) != 1 || len(bad.bad) != 1 || bad.bad[0].Line != 1 || !strings.Contains(bad.bad[0].Err.Error(), `not an IP address: "10.0.0.300"`) {
		t.Errorf("bad address: obs %d bad %v", len(bad.obs), bad.bad)
	}
}

// splitNmapVersion undoes nmap's joining of product, version and extra
// information in the VERSION column.
func TestSplitNmapVersion(t *testing.T) {
	t.Parallel()
	for col, want := range map[string][3]string{
		"Fortinet FortiGate SSL VPN":                                   {"Fortinet FortiGate SSL VPN", "", ""},
		"Cisco SSH 1.25 (protocol 2.0)":                                {"Cisco SSH", "1.25", "protocol 2.0"},
		"Apache httpd 2.4.41 ((Ubuntu))":                               {"Apache httpd", "2.4.41", "(Ubuntu)"},
		"OpenSSH 8.9p1 Ubuntu 3ubuntu0.1 (Ubuntu Linux; protocol 2.0)": {"OpenSSH", "8.9p1 Ubuntu 3ubuntu0.1", "Ubuntu Linux; protocol 2.0"},
		"3Com switch httpd":                                            {"3Com switch httpd", "", ""},
		"":                                                             {"", "", ""},
	} {
		p, v, e := splitNmapVersion(col)
		if [3]string{p, v, e} != want {
			t.Errorf("%q: %q %q %q, want %q", col, p, v, e, want)
		}
	}
}

// nmap's normal output pasted as a service's banner is read as the
// adapter reads it, for that service's own port: its identification (when
// the service has none) and its scripts' probes beside the banner; a
// script block alone gives its probes; another port's line gives nothing;
// normalizing again changes nothing.
func TestNormalize_NmapPastedInABanner(t *testing.T) {
	t.Parallel()
	paste := "PORT    STATE SERVICE  VERSION\n22/tcp  open  ssh      FortiSSH 1.0 (protocol 2.0)\n443/tcp open  ssl/http Fortinet FortiGate SSL VPN\n| ssl-cert: Subject: commonName=FGT60E4Q16000000/organizationName=Fortinet/countryName=US\n|_Not valid after:  2036-11-24T16:00:45\n"
	svc := func(port int, text string) Observation {
		return Observation{Type: TypeService, IP: "192.0.2.1", Source: "s", ObservedAt: "2026-11-20T10:00:00Z",
			Service: &Service{Port: port, Transport: "tcp", Probes: []Probe{{Banner: &Banner{Received: TextBody(text)}}}}}
	}
	o := svc(443, paste)
	if err := o.Normalize(); err != nil {
		t.Fatal(err)
	}
	p := o.Service.Probes
	if d := o.Service.Detected; d == nil || d.Product != "Fortinet FortiGate SSL VPN" || d.Service != "ssl/http" || len(p) != 2 || p[0].Banner == nil ||
		p[1].TLS == nil || p[1].TLS.Subject.CN != "FGT60E4Q16000000" {
		t.Fatalf("443: %s", mustJSON(t, o))
	}
	before := mustJSON(t, o)
	if err := o.Normalize(); err != nil || mustJSON(t, o) != before {
		t.Errorf("normalizing again changed it: %v\n%s\n%s", err, before, mustJSON(t, o))
	}
	o = svc(22, paste)
	if err := o.Normalize(); err != nil || o.Service.Detected == nil || o.Service.Detected.Product != "FortiSSH" || len(o.Service.Probes) != 1 {
		t.Errorf("22: %v %s", err, mustJSON(t, o))
	}
	o = svc(8443, paste)
	if err := o.Normalize(); err != nil || o.Service.Detected != nil || len(o.Service.Probes) != 1 {
		t.Errorf("another port: %v %s", err, mustJSON(t, o))
	}
	o = svc(443, "| ssl-cert: Subject: commonName=FGT60E4Q16000000/organizationName=Fortinet\n|_Not valid after:  2036-11-24T16:00:45\n")
	if err := o.Normalize(); err != nil || o.Service.Detected != nil || len(o.Service.Probes) != 2 || o.Service.Probes[1].TLS == nil {
		t.Errorf("script block alone: %v %s", err, mustJSON(t, o))
	}
	before = mustJSON(t, o)
	if err := o.Normalize(); err != nil || mustJSON(t, o) != before {
		t.Errorf("script block normalized again changed: %s", mustJSON(t, o))
	}
}

// The port table's REASON column (--reason, or -v) sits between SERVICE
// and VERSION: it is not read as the product; a VERSION after it still is.
// A vulnerability script's report (nmap's vulns library) is kept whatever
// the script's id; another script's analysis is not.
func TestNmapNormal_ReasonColumnAndVulnsReports(t *testing.T) {
	t.Parallel()
	in := `Nmap scan report for 192.0.2.52
PORT     STATE SERVICE REASON          VERSION
80/tcp   open  http    syn-ack
| http-enum:
|   /sw/auth/login.aspx: Citrix WebTop
|_  /images/outlook.jpg: Outlook Web Access
443/tcp  open  https   syn-ack ttl 63  nginx 1.24.0
| tls-ticketbleed:
|   VULNERABLE:
|   Ticketbleed is a serious issue in products manufactured by F5
|     State: VULNERABLE (Exploitable)
|_      https://support.f5.com/csp/article/K05121675
8000/tcp open  http    syn-ack         Barracuda Spam firewall http config

Nmap scan report for 192.0.2.53
PORT   STATE SERVICE VERSION
80/tcp open  http    syn-ack httpd
`
	r := runScan(t, "nmap-normal", in)
	if len(r.obs) != 4 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	if d := r.obs[0].Service.Detected; d.Product != "" || d.Info != "" || len(r.obs[0].Service.Probes) != 0 {
		t.Errorf("80 (the reason is no product; http-enum not kept): %s", mustJSON(t, r.obs[0]))
	}
	p := r.obs[1].Service.Probes
	if d := r.obs[1].Service.Detected; d.Product != "nginx" || d.Version != "1.24.0" || len(p) != 1 || p[0].Name != "nmap:tls-ticketbleed" ||
		!strings.Contains(p[0].Banner.Received.Data, "manufactured by F5") {
		t.Errorf("443: %s", mustJSON(t, r.obs[1]))
	}
	if d := r.obs[2].Service.Detected; d.Product != "Barracuda Spam firewall http config" {
		t.Errorf("8000: %s", mustJSON(t, r.obs[2]))
	}
	if d := r.obs[3].Service.Detected; d.Product != "syn-ack httpd" {
		t.Errorf("a table without REASON reads its VERSION column whole: %s", mustJSON(t, r.obs[3]))
	}
}

// A multi-line script block pasted alone whose first line ends at the id's
// colon (the trailing space nmap prints dropped, as pages print it) is read
// as a script block too.
func TestNormalize_NmapScriptBlockWithoutTrailingSpace(t *testing.T) {
	t.Parallel()
	o := Observation{Type: TypeService, IP: "192.0.2.21", Source: "s", ObservedAt: "2026-11-20T10:00:00Z",
		Service: &Service{Port: 21, Transport: "tcp", Probes: []Probe{{Banner: &Banner{Received: TextBody(
			"| ftp-syst:\n|   SYST: UNIX MikroTik 6.34.3\n|   STAT:\n|_End of status\n")}}}}}
	if err := o.Normalize(); err != nil {
		t.Fatal(err)
	}
	if p := o.Service.Probes; len(p) != 2 || p[1].Name != "nmap:ftp-syst" || !strings.HasPrefix(p[1].Banner.Received.Data, "SYST: UNIX MikroTik 6.34.3") || o.Service.Detected != nil {
		t.Errorf("%s", mustJSON(t, o))
	}
}

// The discovery scripts that decode what the device answered
// (ubiquiti-discovery's model, firmware and release) are kept as probes;
// a brute-force script's block (credentials) is still dropped.
func TestNmapNormal_DiscoveryScriptsKept(t *testing.T) {
	t.Parallel()
	in := `Nmap scan report for 192.0.2.201
PORT      STATE SERVICE            VERSION
10001/udp open  ubiquiti-discovery Ubiquiti Discovery Service (v2 protocol, UCK-v2 software ver. 5.9.29)
| ubiquiti-discovery:
|   protocol: v2
|   firmware: UCK.mtk7623.v0.12.0.29a26c9.181001.1444
|   version: 5.9.29
|_  model: UCK-v2

Nmap scan report for 192.0.2.203
PORT     STATE SERVICE REASON
8728/tcp open  unknown syn-ack
| mikrotik-routeros-brute:
|   Accounts
|_    admin:secret - Valid credentials
`
	r := runScan(t, "nmap-normal", in)
	if len(r.obs) != 2 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	p := r.obs[0].Service.Probes
	if len(p) != 1 || p[0].Name != "nmap:ubiquiti-discovery" || !strings.Contains(p[0].Banner.Received.Data, "model: UCK-v2") {
		t.Errorf("10001/udp: %s", mustJSON(t, r.obs[0]))
	}
	if d := r.obs[0].Service.Detected; d == nil || d.Product != "Ubiquiti Discovery Service" {
		t.Errorf("10001/udp detected: %s", mustJSON(t, r.obs[0]))
	}
	if p := r.obs[1].Service.Probes; len(p) != 0 || strings.Contains(mustJSON(t, r.obs[1]), "secret") {
		t.Errorf("8728 (brute-force output not kept): %s", mustJSON(t, r.obs[1]))
	}
}

// The fingerprint-strings script's output, as a real nmap 7.93 run printed
// it for services it did not recognise (testdata/SOURCES.md): each group's
// answer becomes the banner probe the service fingerprint would have given,
// its line ends and the empty line before an HTTP body written back.
func TestNmapNormal_FingerprintStrings(t *testing.T) {
	r := runScan(t, "nmap-normal", readFile(t, "nmap-fingerprint-strings.nmap"))
	if len(r.bad) != 0 || len(r.obs) != 4 {
		t.Fatalf("%d services, bad %v", len(r.obs), r.bad)
	}
	banners := func(s *Service) map[string]string {
		m := map[string]string{}
		for _, p := range s.Probes {
			if p.Banner != nil && p.Banner.Received != nil {
				m[p.Name] = p.Banner.Received.Text()
			}
		}
		return m
	}
	got := banners(r.obs[1].Service)
	if want := "HTTP/1.1 200 OK\r\nContent-Length: 47\r\nConnection: close\r\n\r\n<p>Redirecting you to Barracuda Web Filter.</p>"; got["nmap:GetRequest"] != want {
		t.Errorf("port %d GetRequest banner %q, want %q", r.obs[1].Service.Port, got["nmap:GetRequest"], want)
	}
	if want := "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close"; got["nmap:FourOhFourRequest"] != want {
		t.Errorf("FourOhFourRequest banner %q, want %q", got["nmap:FourOhFourRequest"], want)
	}
	// a header-only answer gets no empty line; a body of two strings keeps both
	if b := banners(r.obs[2].Service)["nmap:GetRequest"]; !strings.HasSuffix(b, "Content-Length: 0\r\nConnection: close") || !strings.Contains(b, `WWW-Authenticate: Basic realm="FW-1.`) {
		t.Errorf("FW-1 banner %q", b)
	}
	if b := banners(r.obs[3].Service)["nmap:GetRequest"]; !strings.HasSuffix(b, "close\r\n\r\nrequested URL was rejected. Please consult with your administrador.\r\nYour support ID is: <14171762189802438057>") {
		t.Errorf("ASM banner %q", b)
	}
}

// An SSH script's report of the server's identification string (the
// ssh-hassh script of hassh-utils, whose README shows it against a
// MikroTik; nmap run without -sV names the port only "ssh") is kept as the
// banner the server sent, in the normal and the XML output; a line that
// only mentions the phrase, or names no SSH version, is not.
func TestNmapNormal_SSHIdentificationScript(t *testing.T) {
	t.Parallel()
	in := `Nmap scan report for 192.0.2.177
PORT   STATE SERVICE
22/tcp open  ssh
| ssh-hassh:
|   Server Identification String: SSH-2.0-ROSSSH
|   hasshServer: 592ac2fb1645c3dc26ede0a59cd46957
|_  hasshServer Guess: SSH-2.0-ROSSSH (100%)

Nmap scan report for 192.0.2.178
PORT   STATE SERVICE
22/tcp open  ssh
| ssh-hassh:
|   Server Identification String: unknown
|_  hasshServer: 592ac2fb1645c3dc26ede0a59cd46957
`
	r := runScan(t, "nmap-normal", in)
	if len(r.obs) != 2 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	p := r.obs[0].Service.Probes
	if len(p) != 1 || p[0].Name != "nmap:ssh-hassh" || p[0].Banner.Received.Data != "SSH-2.0-ROSSSH\r\n" {
		t.Errorf("22/tcp: %s", mustJSON(t, r.obs[0]))
	}
	if p := r.obs[1].Service.Probes; len(p) != 0 {
		t.Errorf("22/tcp without an identification: %s", mustJSON(t, r.obs[1]))
	}
	xml := `<?xml version="1.0"?><nmaprun><host><status state="up"/><address addr="192.0.2.177" addrtype="ipv4"/><ports>
<port protocol="tcp" portid="22"><state state="open"/><service name="ssh" method="table" conf="3"/>
<script id="ssh-hassh" output="&#xa;  Server Identification String: SSH-2.0-ROSSSH&#xa;  hasshServer: 592ac2fb1645c3dc26ede0a59cd46957"/></port>
</ports></host></nmaprun>`
	rx := runScan(t, "nmap-xml", xml)
	if len(rx.obs) != 1 {
		t.Fatalf("xml obs %d bad %v", len(rx.obs), rx.bad)
	}
	if p := rx.obs[0].Service.Probes; len(p) != 1 || p[0].Banner == nil || p[0].Banner.Received.Data != "SSH-2.0-ROSSSH\r\n" {
		t.Errorf("xml 22/tcp: %s", mustJSON(t, rx.obs[0]))
	}
}

// nmap 5.00 and older began a host's report with "Interesting ports on"
// (5.20 and later: "Nmap scan report for") and indented script output by
// one more space: a real terminal paste of that era (testdata/SOURCES.md,
// an ASA's sysDescr through snmp-sysdescr) is read, where it was refused
// as having no scan report.
func TestNmapNormal_InterestingPortsOn(t *testing.T) {
	t.Parallel()
	r := runScan(t, "nmap-normal", readFile(t, "nmap-5.00-interesting-ports.nmap"))
	if len(r.bad) != 0 || len(r.obs) != 3 || len(r.skipped) != 1 {
		t.Fatalf("bad %v, %d services, skipped %v", r.bad, len(r.obs), r.skipped)
	}
	snmp := r.obs[0]
	if snmp.IP != "192.0.2.250" || snmp.Service.Port != 161 || snmp.Service.Transport != "udp" || len(snmp.Service.Probes) != 1 ||
		snmp.Service.Probes[0].Name != "nmap:snmp-sysdescr" || snmp.Service.Probes[0].Banner == nil ||
		snmp.Service.Probes[0].Banner.Received.Data != "Cisco Adaptive Security Appliance Version 8.2(5)\nSystem uptime: 84 days, 18:39:55.00 (732479500 timeticks)" {
		t.Errorf("snmp-sysdescr: %s", mustJSON(t, snmp))
	}
	for i, ip := range []string{"192.0.2.250", "192.0.2.251"} {
		o := r.obs[i+1]
		if o.IP != ip || o.Service.Port != 22 || o.Service.Detected == nil || o.Service.Detected.Service != "ssh" {
			t.Errorf("ssh %d: %s", i, mustJSON(t, o))
		}
	}
}

// The terminal's "Starting Nmap ... at" line dates the hosts after it (a
// run pasted from a terminal has no "# Nmap ... scan initiated" header):
// UTC and numeric offsets give the instant, an abbreviation its clock
// time; a second run dates its own hosts.
func TestNmapNormal_StartingLineDatesTheHosts(t *testing.T) {
	t.Parallel()
	in := `Starting Nmap 7.95 ( https://nmap.org ) at 2025-02-09 17:24 UTC
Nmap scan report for 192.0.2.161
PORT   STATE SERVICE VERSION
22/tcp open  ssh     FortiSSH (protocol 2.0)

Starting Nmap 7.92 ( https://nmap.org ) at 2022-02-17 17:57 -03
Nmap scan report for 198.51.100.8
PORT   STATE SERVICE VERSION
21/tcp open  ftp     vsftpd 3.0.3

Starting Nmap 5.00 ( http://nmap.org ) at 2012-02-02 19:20 CST
Nmap scan report for 203.0.113.5
PORT   STATE SERVICE VERSION
80/tcp open  http    Apache httpd
`
	r := runScan(t, "nmap-normal", in)
	want := []string{"2025-02-09T17:24:00Z", "2022-02-17T20:57:00Z", "2012-02-02T19:20:00Z"}
	if len(r.obs) != len(want) || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	for i, w := range want {
		if r.obs[i].ObservedAt != w {
			t.Errorf("%s: observed_at %s, want %s", r.obs[i].IP, r.obs[i].ObservedAt, w)
		}
	}
	for _, z := range []string{"+0530", "+05:30"} {
		got, ok := nmapStarting("Starting Nmap 7.80 ( https://nmap.org ) at 2020-01-16 01:07 " + z)
		if !ok || !got.Equal(time.Date(2020, 1, 15, 19, 37, 0, 0, time.UTC)) {
			t.Errorf("%s: %v %v", z, got, ok)
		}
	}
}

// nmap 7.94SVN -oN with --reason -vv and ssl/rdp scripts (a public OSCP
// write-up's file): the ssl-cert PEM block is the certificate, the
// rdp-ntlm-info script the service's own NTLM target information, and the
// host's "Scanned at ... PDT" line its time (a zone abbreviation: clock
// time as it stands).
func TestNmapNormal_AT1RDPCertPEMAndNTLM(t *testing.T) {
	t.Parallel()
	r := runScan(t, "nmap-normal", readFile(t, "nmap-7.94-rdp-reason.nmap"))
	if len(r.obs) != 1 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	o := r.obs[0]
	s := o.Service
	if o.IP != "192.168.224.247" || s.Port != 3389 || o.ObservedAt != "2024-04-02T20:58:32Z" ||
		s.Detected.Service != "ms-wbt-server" || s.Detected.Product != "Microsoft Terminal Services" {
		t.Errorf("observation = %s", mustJSON(t, o))
	}
	var tls *TLS
	var ntlm string
	for _, p := range s.Probes {
		if p.TLS != nil {
			tls = p.TLS
		}
		if p.Name == "nmap:rdp-ntlm-info" {
			ntlm = p.Banner.Received.Text()
		}
	}
	// openssl x509 -fingerprint of the PEM block: SHA-1 832f:3545:..., as the file's own line says
	if tls == nil || tls.Serial != "301cea2b823f7586461f2019d47b1b10" ||
		tls.SHA256 != "c1e4010a31390c504a2c0e7aa1bccdbb541e56d2321df3694fb621585990965f" ||
		tls.Subject.CN != "WEB02" || tls.NotAfter != "2024-10-02T03:51:09Z" || !tls.SelfSigned {
		t.Errorf("tls = %s", mustJSON(t, tls))
	}
	if !strings.HasPrefix(ntlm, "Target_Name: WEB02\n") || !strings.Contains(ntlm, "Product_Version: 10.0.20348") {
		t.Errorf("rdp-ntlm-info = %q", ntlm)
	}
}

// nmap 7.94SVN -oA's .nmap of a -vv -sC -sV sweep (a public HTB
// write-up's file, its first four hosts): hosts with every port in
// ignored states give nothing; the pfSense's ssl-cert PEM gives the
// certificate's serial, SHA-256 and SANs; observed_at is the host's
// "Scanned at ... UTC" line, not the run's start a second before.
func TestNmapNormal_AT1ScannedAtAndPEM(t *testing.T) {
	t.Parallel()
	r := runScan(t, "nmap-normal", readFile(t, "nmap-7.94-vv-pfsense.nmap"))
	if len(r.obs) != 2 || len(r.bad) != 0 {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	for _, o := range r.obs {
		if o.IP != "10.10.110.1" || o.ObservedAt != "2024-06-04T17:03:18Z" {
			t.Errorf("%d: ip %s at %s", o.Service.Port, o.IP, o.ObservedAt)
		}
	}
	s := r.obs[1].Service
	if s.Port != 443 || len(s.Probes) == 0 || s.Probes[0].TLS == nil {
		t.Fatalf("443 = %s", mustJSON(t, s))
	}
	tls := s.Probes[0].TLS
	if tls.SHA256 != "004750dd41fe5699a0bcc67fade38b559da6ed9caad5b7fe999b601e4c2e19ca" || tls.Serial != "7f0856d37cbe5f02" ||
		len(tls.SANs) != 1 || tls.SANs[0] != "pfSense-646b882d43d57" || s.Probes[0].Response.Title != "pfSense - Login" {
		t.Errorf("443 probe = %s", mustJSON(t, s.Probes[0]))
	}
}

// http-auth prints the status line of its GET / and each challenge of the
// WWW-Authenticate header parsed ("Basic realm=WatchGuard SOHO"); the
// normal and XML outputs give the HTTP probe that status and the
// challenges as headers, values quoted as a server writes them. The output
// is the script's documented one (scripts/http-auth.nse, @output) with the
// realm of a unit. ssl-cert-intaddr's findings, the unit's own certificate
// fields, are kept as its banner.
func TestNmap_HTTPAuthAndIntAddr(t *testing.T) {
	t.Parallel()
	normal := `Nmap scan report for 192.0.2.10
PORT    STATE SERVICE  VERSION
80/tcp  open  http
| http-auth: 
| HTTP/1.1 401 Unauthorized\x0D
|   Negotiate
|   Digest charset=utf-8 nonce=+Upgraded+v1e4e256b qop=auth algorithm=MD5-sess realm=example.com
|_  Basic realm=WatchGuard SOHO
443/tcp open  ssl/http
| ssl-cert-intaddr: 
|   Subject commonName: 
|_    10.1.1.1
`
	xml := `<?xml version="1.0"?><nmaprun scanner="nmap" start="1709287200"><host><status state="up"/><address addr="192.0.2.10" addrtype="ipv4"/><ports>
<port protocol="tcp" portid="80"><state state="open"/><service name="http"/><script id="http-auth" output="&#xa;HTTP/1.1 401 Unauthorized&#xd;&#xa;  Negotiate&#xa;  Digest charset=utf-8 nonce=+Upgraded+v1e4e256b qop=auth algorithm=MD5-sess realm=example.com&#xa;  Basic realm=WatchGuard SOHO&#xa;"></script></port>
</ports></host></nmaprun>`
	want := []Header{{Name: "WWW-Authenticate", Value: "Negotiate"},
		{Name: "WWW-Authenticate", Value: `Digest charset="utf-8", nonce="+Upgraded+v1e4e256b", qop="auth", algorithm="MD5-sess", realm="example.com"`},
		{Name: "WWW-Authenticate", Value: `Basic realm="WatchGuard SOHO"`}}
	for _, tc := range []struct{ format, in string }{{"nmap-normal", normal}, {"nmap-xml", xml}} {
		r := runScan(t, tc.format, tc.in)
		if len(r.obs) == 0 || len(r.bad) != 0 {
			t.Fatalf("%s: obs %d bad %v", tc.format, len(r.obs), r.bad)
		}
		p := r.obs[0].Service.Probes
		if len(p) != 1 || p[0].Response == nil || p[0].Response.Status != 401 || p[0].Response.Reason != "Unauthorized" ||
			!slices.Equal(p[0].Response.Headers, want) {
			t.Errorf("%s 80/tcp: %s", tc.format, mustJSON(t, p))
		}
	}
	r := runScan(t, "nmap-normal", normal)
	if p := r.obs[1].Service.Probes; len(r.obs) != 2 || len(p) != 1 || p[0].Name != "nmap:ssl-cert-intaddr" || !strings.Contains(p[0].Banner.Received.Data, "10.1.1.1") {
		t.Errorf("443/tcp: %s", mustJSON(t, r.obs[1]))
	}
}
