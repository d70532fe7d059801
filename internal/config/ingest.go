package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
	"github.com/netintel/netintel/internal/schedule"
)

// IngestFormat describes one feed format that `netintel ingest --format`
// and ingest.sources[].format accept. IngestFormatTable is the one list of
// them: the names, the help lines and the list/kind/provider sets below
// are derived from it, and a test in package ingest holds its adapters to
// the same names.
type IngestFormat struct {
	Name string
	Help string // one line for `netintel ingest --help`
	// List marks a list that says what is so now (an exit list, a cloud's
	// ranges, a proxy list): an entry listed again is seen again, at the
	// fetch (the observation's listed_at). Scanner output, flow records
	// and observation files carry their own times instead.
	List bool
	// Kind: the format takes --kind (a classification or proxy protocol);
	// Provider: it takes --provider.
	Kind, Provider bool
}

// IngestFormatTable lists the formats in the order help lists them.
var IngestFormatTable = []IngestFormat{
	{Name: "tor-exits", List: true, Help: "Tor exit-addresses or the bulk exit list (check.torproject.org): tor_exit signals"},
	{Name: "aws-ranges", List: true, Help: "AWS ip-ranges.json: hosting/cdn ranges of Amazon Web Services"},
	{Name: "gcp-ranges", List: true, Help: "Google Cloud cloud.json: hosting ranges of Google Cloud"},
	{Name: "azure-service-tags", List: true, Help: "Azure ServiceTags_Public_*.json: hosting ranges (AzureFrontDoor.* cdn) of Microsoft Azure, each prefix once"},
	{Name: "oracle-ranges", List: true, Help: "Oracle Cloud public_ip_ranges.json: hosting ranges of Oracle Cloud"},
	{Name: "fastly-ranges", List: true, Help: "Fastly public-ip-list JSON: cdn ranges of Fastly"},
	{Name: "cidr-list", List: true, Kind: true, Provider: true, Help: "address lists as published: an IP, CIDR or range a line (comments, counts, CSV columns, ipset add lines, JSON lines as in Spamhaus DROP, IPsum, abuse.ch; the header's Last updated or Last-Modified date as the entries' time); needs --kind, optional --provider"},
	{Name: "geofeed", List: true, Kind: true, Provider: true, Help: "RFC 8805 geofeed CSV: ranges with country/region/city; needs --kind and --provider"},
	{Name: "private-relay", List: true, Help: "Apple iCloud Private Relay egress-ip-ranges.csv: relay ranges with country/region/city"},
	{Name: "ip2proxy", List: true, Kind: true, Help: "IP2Location IP2Proxy CSV (LITE or commercial, PX1-PX12, IPv4/IPv6, decimal or .cidr.csv rows): vpn, proxy, tor, relay, hosting, cdn and residential_proxy ranges and signals by proxy type, with the provider; --kind only for PX1"},
	{Name: "maxmind-anonymous", List: true, Help: "MaxMind GeoIP2 Anonymous IP or GeoIP Anonymous Plus (.mmdb or CSV): vpn, proxy, tor, residential_proxy and hosting ranges and signals, with Anonymous Plus's provider, confidence and last-seen date"},
	{Name: "proxy-list", List: true, Kind: true, Help: "open proxies: ip:port or scheme://ip:port lines, or JSON lists (monosans, fate0, proxifly, geonode): open_proxy signals, with the measured exit address; optional --kind http|https|socks4|socks5"},
	{Name: "mullvad-relays", List: true, Help: "Mullvad relay list JSON (api.mullvad.net/www/relays/all/): vpn_exit signals with the host name"},
	{Name: "observations", Help: "netintel's own NDJSON observations"},
	{Name: "http-transcript", Help: "what HTTP clients print, as pasted into issues and tickets: curl -v (-i, -I), wget -S, openconnect -v --dump-http-traffic (also behind a syslog/journal/logread prefix; its answer to CONNECT /CSCOSSLC/tunnel from Got CONNECT response and CSTP connected. DPD n, Keepalive n), openfortivpn -v (its lines of the gateway's answers kept as an openfortivpn banner probe): each connection to an IP a service with its TLS certificate lines and each exchange as a probe; a paste that shows no address is skipped with its reason"},
	{Name: "ike-scan", Help: "ike-scan output (what it prints; -M or not; --showbackoff): each IKE responder a UDP service on 500 with its lines (vendor IDs with their names, notify messages, the implementation guess) as a banner"},
	{Name: "zgrab2", Help: "zgrab2 JSON lines: each successful module's port a service with its HTTP, TLS and banner probes"},
	{Name: "masscan", Help: "masscan -oJ, -oL, -oX or -oG (with --banners): open ports, HTTP/TLS/X509 and raw banners"},
	{Name: "nmap-xml", Help: "nmap -oX: open ports with -sV detection, ssl-cert, http-* and banner scripts, service fingerprints"},
	{Name: "nmap-grep", Help: "nmap -oG: open ports with the -sV service name and version column, the host's OS guess"},
	{Name: "nmap-normal", Help: "nmap -oN (and what nmap prints on a terminal): open ports with the -sV version column, the scripts' output (ssl-cert, http-title, ...), service fingerprints, Service Info"},
	{Name: "naabu", Help: "naabu -json: open ports (nmap's service fields with -nmap-cli)"},
	{Name: "fingerprintx", Help: "praetorian fingerprintx --json: the service per port with its HTTP status and headers, banner and plugin metadata"},
	{Name: "whatweb", Help: "WhatWeb --log-json, its brief text (--log-brief, what it prints) or its verbose report (-v): each URL fetched a probe with the status, the headers its plugins report, title, cookie names; the products recognised as detected"},
	{Name: "httpx", Help: "ProjectDiscovery httpx -json (-irh/-irr/-irrb, -tls-grab, -favicon, -jarm, -td, -asn): HTTP response, TLS certificate, favicon hash"},
	{Name: "nuclei", Help: "ProjectDiscovery nuclei -jsonl/-json (-json-export array): HTTP/network/SSL results as services with the raw response and request, the template as detected"},
	{Name: "har", Help: "HTTP Archive 1.2 (DevTools, Burp, ZAP, Charles, mitmproxy, Fiddler): each entry an HTTP probe of its serverIPAddress (or IP-literal URL host) with the request, response headers in order, body, Chrome's TLS details"},
	{Name: "burp", Help: "Burp Suite XML: Save items (<items>) or the scanner's issue report (<issues>): each raw request/response an HTTP probe of the host's ip"},
	{Name: "nikto", Help: "Nikto -Format xml, json, csv or txt (and what it prints): per target IP and port the Server banner and the headers its findings quote as an HTTP probe, the certificate, the findings with their URIs as detected"},
	{Name: "zap", Help: "OWASP ZAP traditional-xml-plus or traditional-json-plus report: each instance's response an HTTP probe of its site when the site's host is an address (ZAP records no address for a name)"},
	{Name: "tlsx", Help: "ProjectDiscovery tlsx -json: the TLS handshake and certificate per host and port (version, cipher, subject, issuer, SANs, serial, jarm, ja3s)"},
	{Name: "testssl", Help: "testssl.sh --jsonfile, --jsonfile-pretty, --csvfile or what it prints on a terminal: per address and port the certificates (PEM or the cert_* findings), negotiated protocol and cipher, the HTTP status, Server and application banners"},
	{Name: "sslyze", Help: "sslyze --json_out (3.x to 6.x): per server location the certificate deployments' leaf certificates, highest TLS version and cipher (a PEM that is not a certificate is dropped with a warning, the server kept)"},
	{Name: "sslscan", Help: "sslscan --xml (1.x, 2.x): per ssltest the certificate (subject, issuer, SANs, serial, validity, PEM with --show-certificate), preferred protocol and cipher"},
	{Name: "ssh-audit", Help: "ssh-audit -j/-jj (one target or -T's array): the SSH identification line as a banner probe, host key fingerprints"},
	{Name: "leakix", Help: "LeakIX l9format events (leakix -j lines, search arrays, host answers): HTTP, TLS, banner, software, network claim"},
	{Name: "onyphe", Help: "ONYPHE datascan/synscan JSON (API results v1/v2, export lines): raw data as HTTP or banner, certificate, product, favicon, organization claim"},
	{Name: "zoomeye", Help: "ZoomEye answers (v1 host search matches, v2 search data, zoomeye search -save arrays, JSON lines): raw banner as HTTP or banner, header and body, certificate text, product and version, organization claim"},
	{Name: "fofa", Help: "FOFA answers (API results rows in the order of a \"fields\" member, or of ip/port/host/protocol by their content), CSV exports with a header row, JSON lines with named fields: header, banner, body and cert as probes, certs_* fields, product, AS organization claim"},
	{Name: "netlas", Help: "Netlas responses (API items, netlas download JSON lines, bare data objects): HTTP status, headers, title, body, the certificate, jarm, protocol banners, ISP claim"},
	{Name: "nessus", Help: "Nessus .nessus (v2) export, or a Tenable CSV export (Nessus, Tenable.io, Tenable.sc: Plugin ID/Plugin, Host/IP Address, Port, Protocol, Plugin Output columns): a service per host port; HTTP Information, the certificate, detection plugins' output and installed versions as probes; CPEs, OS as detected"},
	{Name: "openvas", Help: "Greenbone/OpenVAS XML report (or get_reports_response) or its CSV export: a service per host port; detection results' text and installed versions as probes; CPEs, host OS as detected"},
	{Name: "nexpose", Help: "Rapid7 Nexpose/InsightVM XML Export 2.0: each open endpoint with its HTTP Server banner, certificate, other banners and the service and OS fingerprints"},
	{Name: "qualys", Help: "Qualys VM asset data report XML, or a CSV report with IP, QID, Port, Protocol and Results columns: each port's default web page exchange, Server banner, SSH banner, certificate and detections"},
	{Name: "shodan", Help: "Shodan banners (download/stream JSON lines, an array of banners, host API answers with their data array, search answers with matches; pretty-printed or not): raw banner, HTTP, TLS, favicon, product, org claim"},
	{Name: "censys", Help: "Censys host JSON (Search API v2 host view, Platform host asset, the 2015-2021 IPv4 dataset of Search API v1 and BigQuery; one document, JSON lines or an array): services with HTTP, TLS, banner, software or the dataset's metadata"},
	{Name: "shadowserver", Help: "Shadowserver report CSV or the Reports API's JSON (array or JSON lines of the same columns) (scan_http, scan_ssl, scan_snmp, scan_ssh, scan_telnet, device_id, ...; known by its columns): HTTP answer, certificate, banners, sysDescr, device identification as detected"},
	{Name: "sonar-http", Help: "Rapid7 Project Sonar HTTP/HTTPS JSON lines: the base64 response as status, headers and body"},
	{Name: "goflow2", Help: "goflow2 JSON flow lines: the remote-access protocol inferred per flow (port, IP protocol, sizes)"},
	{Name: "nfdump", Help: "nfdump output (1.6 to 1.7.x): -o csv, csv-fast, line, long, extended or json: the remote-access protocol inferred per flow"},
	{Name: "nfdump-csv", Help: "the same as nfdump (the name it had when it read csv only)"},
	{Name: "pmacct", Help: "pmacct's print plugin output (nfacctd, sfacctd, pmacctd): json, csv or formatted: the remote-access protocol inferred per flow"},
	{Name: "aws-vpc-flow", Help: "Amazon VPC Flow Logs: default or custom-format records (S3 files with their header line, .log.gz), CloudWatch Logs JSON (filter-log-events, get-log-events) and S3 exports: the remote-access protocol inferred per accepted flow"},
	{Name: "gcp-vpc-flow", Help: "Google Cloud VPC Flow Logs as Cloud Logging entries (gcloud logging read --format=json, JSON lines sink files): the remote-access protocol inferred per flow"},
	{Name: "azure-flow", Help: "Azure Network Watcher flow logs (PT1H.json): NSG flow logs v1/v2 and virtual network flow logs v4: the remote-access protocol inferred per allowed flow tuple"},
	{Name: "zeek", Help: "Zeek logs, TSV or JSON: conn.log flows (protocol inferred), ssl.log with x509.log certificates, http.log, ssh.log services"},
	{Name: "suricata-eve", Help: "Suricata eve.json: flow/netflow events (protocol inferred), tls, http and ssh events as services"},
	{Name: "pcap", Help: "packet captures, pcap or pcapng (gzip'd too): per server its HTTP exchanges, TLS handshake and certificate, SSH and other banners, IKE vendor IDs, SNMP sysDescr; WireGuard and OpenVPN recognised by their packets on any port, other remote-access protocols inferred per flow"},
}

// Derived from IngestFormatTable: the names of all formats, of the list
// formats, of those that take a kind and of those that take a provider,
// and each format's help line. Read-only.
var (
	IngestFormats         = ingestFormatNames(func(IngestFormat) bool { return true })
	IngestListFormats     = ingestFormatNames(func(f IngestFormat) bool { return f.List })
	IngestKindFormats     = ingestFormatNames(func(f IngestFormat) bool { return f.Kind })
	IngestProviderFormats = ingestFormatNames(func(f IngestFormat) bool { return f.Provider })
	IngestFormatHelp      = ingestFormatHelp()
)

func ingestFormatNames(keep func(IngestFormat) bool) []string {
	var out []string
	for _, f := range IngestFormatTable {
		if keep(f) {
			out = append(out, f.Name)
		}
	}
	return out
}

func ingestFormatHelp() map[string]string {
	m := make(map[string]string, len(IngestFormatTable))
	for _, f := range IngestFormatTable {
		m[f.Name] = f.Help
	}
	return m
}

// IngestProxyKinds are the kinds a proxy-list takes: its proxies' protocol.
var IngestProxyKinds = []string{"http", "https", "socks4", "socks5"}

// IngestKinds are the classifications a cidr-list source may claim.
var IngestKinds = []string{"vpn", "proxy", "tor", "relay", "hosting", "cdn", "residential_proxy"}

// Ingest configures the feed adapters. Its keys are described in
// pipeline.yaml and docs/config-ingest.md.
type Ingest struct {
	// Sources are the feeds fetched on their own cron schedule.
	Sources []IngestSource `yaml:"sources"`
	// FetchTimeout bounds one download of a feed URL.
	FetchTimeout time.Duration `yaml:"fetch_timeout"`
	// MaxLineBytes is the longest accepted line of a line-based feed.
	MaxLineBytes int `yaml:"max_line_bytes"`
	// MaxInFlight bounds unacknowledged asynchronous publishes.
	MaxInFlight int `yaml:"max_in_flight"`
}

// IngestSource is one scheduled feed.
type IngestSource struct {
	// Name identifies the source in job names and logs (letters, digits, - or _).
	Name string `yaml:"name"`
	// Format is one of IngestFormats.
	Format string `yaml:"format"`
	// URL (http or https) or Path (a local file): exactly one is set.
	URL  string `yaml:"url"`
	Path string `yaml:"path"`
	// Schedule is a cron expression; "" or "off" runs the source only by hand.
	Schedule string `yaml:"schedule"`
	// Kind is the classification a cidr-list or geofeed claims (one of
	// IngestKinds), or a proxy-list's protocol (one of IngestProxyKinds).
	Kind string `yaml:"kind"`
	// Provider is the provider name a cidr-list or geofeed claims (e.g.
	// Cloudflare); a geofeed requires one.
	Provider string `yaml:"provider"`
	// Confidence (0..1) of the source's claims; 0 = the format's default.
	Confidence float64 `yaml:"confidence"`
	// Class declares everything the source brings restricted: one of
	// ipmodel.DataClasses ("" = standard). Residential-proxy signals and
	// flow records are restricted whatever the source declares; a class
	// only ever makes the source's knowledge more restricted.
	Class string `yaml:"class"`
}

// CheckIngestKind says what is wrong with the kind and provider given to a
// format ("" when nothing is): a cidr-list needs a kind, a geofeed a kind
// and a provider, a proxy-list may name its protocol, the other formats
// carry their own and take neither. An unknown format is not judged here.
func CheckIngestKind(format, kind, provider string) string {
	switch format {
	case "cidr-list", "geofeed":
		if !slices.Contains(IngestKinds, kind) {
			return fmt.Sprintf("%s needs a kind: one of %s, got %q", format, strings.Join(IngestKinds, ", "), kind)
		}
		if format == "geofeed" && strings.TrimSpace(provider) == "" {
			return "geofeed needs a provider: the operator that publishes it"
		}
	case "ip2proxy":
		if kind != "" && !slices.Contains(IngestKinds, kind) {
			return fmt.Sprintf("an ip2proxy kind (for PX1 rows, which carry no proxy type) is one of %s, got %q", strings.Join(IngestKinds, ", "), kind)
		}
		if provider != "" {
			return "only a " + orList(IngestProviderFormats) + " takes a provider"
		}
	case "proxy-list":
		if kind != "" && !slices.Contains(IngestProxyKinds, kind) {
			return fmt.Sprintf("a proxy-list kind is its protocol: one of %s, got %q", strings.Join(IngestProxyKinds, ", "), kind)
		}
		if provider != "" {
			return "only a " + orList(IngestProviderFormats) + " takes a provider"
		}
	default:
		if !slices.Contains(IngestFormats, format) {
			return ""
		}
		if kind != "" {
			return "only a " + orList(IngestKindFormats) + " takes a kind"
		}
		if provider != "" {
			return "only a " + orList(IngestProviderFormats) + " takes a provider"
		}
	}
	return ""
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func defaultIngest() Ingest {
	return Ingest{FetchTimeout: 2 * time.Minute, MaxLineBytes: 64 << 20, MaxInFlight: 1024}
}

func (c *Ingest) validate(path string) []error {
	var errs []error
	add := func(p, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", p, fmt.Sprintf(format, a...)))
	}
	if c.FetchTimeout <= 0 {
		add(path+".fetch_timeout", "must be > 0")
	}
	if c.MaxLineBytes < 1024 {
		add(path+".max_line_bytes", "must be >= 1024, got %d", c.MaxLineBytes)
	}
	if c.MaxInFlight < 1 || c.MaxInFlight > 2048 {
		add(path+".max_in_flight", "must be 1..2048, got %d", c.MaxInFlight)
	}
	names := map[string]bool{}
	for i, s := range c.Sources {
		p := fmt.Sprintf("%s.sources[%d]", path, i)
		if s.Name == "" || !nameRe.MatchString(s.Name) {
			add(p+".name", "must be letters, digits, - or _, got %q", s.Name)
		} else if names[s.Name] {
			add(p+".name", "duplicate source %q", s.Name)
		}
		names[s.Name] = true
		if !slices.Contains(IngestFormats, s.Format) {
			add(p+".format", "must be one of %s, got %q", strings.Join(IngestFormats, ", "), s.Format)
		}
		if (s.URL == "") == (s.Path == "") {
			add(p+".url", "set exactly one of url and path")
		}
		if s.Schedule != "" && s.Schedule != "off" {
			if _, err := schedule.Parse(s.Schedule); err != nil {
				add(p+".schedule", "bad cron expression %q: %v", s.Schedule, err)
			}
		}
		if msg := CheckIngestKind(s.Format, s.Kind, s.Provider); msg != "" {
			field := ".kind"
			if strings.Contains(msg, "provider") {
				field = ".provider"
			}
			add(p+field, "%s", msg)
		}
		if s.Confidence < 0 || s.Confidence > 1 {
			add(p+".confidence", "must be 0..1, got %g", s.Confidence)
		}
		if s.Class != "" && !slices.Contains(ipmodel.DataClasses, s.Class) {
			add(p+".class", "must be one of %s, got %q", strings.Join(ipmodel.DataClasses, ", "), s.Class)
		}
	}
	return errs
}
