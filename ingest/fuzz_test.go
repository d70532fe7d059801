package ingest

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzAdapters feeds arbitrary bytes to every feed adapter. No input may
// panic; every observation an adapter emits must be valid (Normalize
// leaves it as it is and it encodes), with a line number inside the input;
// every skipped record names a line inside the input.
func FuzzAdapters(f *testing.F) {
	for _, name := range []string{"aws-ip-ranges.json", "gcp-cloud.json", "exit-addresses", "observations.ndjson", "mullvad.txt", "cloudflare-ips-v6.txt",
		"azure-service-tags.json", "oracle-public-ip-ranges.json", "fastly-ip-ranges.json", "geofeed-linode.csv",
		"private-relay-egress.csv", "proxy-list-http.txt", "mullvad-relays.json",
		"zgrab2.jsonl", "zgrab2-constructed.jsonl", "masscan.json", "masscan.txt", "masscan-constructed.json", "masscan-sec560.xml", "masscan-sec560.gnmap",
		"nmap-complex.xml", "nmap-scripts.xml", "shodan.jsonl", "sonar-http.jsonl",
		"goflow2-v2.2.6.ndjson", "goflow2-docs.ndjson", "nfdump-1.7.1.csv", "nfdump-1.7.8.csv", "nfdump-1.7.8-fast.csv", "nfdump-1.7.1-line.txt", "nfdump-1.7.1.json", "pmacct-1.7.7.json", "pmacct-1.7.7-formatted.txt",
		"httpx.jsonl", "naabu.jsonl", "nmap-grep.gnmap", "zeek-docs.ndjson", "zeek-6.2-ssl.log", "zeek-6.2-x509.log", "zeek-conn.log",
		"zeek-json-streaming.ndjson", "zeek-6.2-software.log", "zeek-6.2-known_certs.log", "suricata-eve.json", "censys-v2-host.json", "censys-platform-host.json", "fingerprintx.jsonl",
		"nuclei.jsonl", "nuclei-appliance.jsonl", "tlsx.jsonl", "leakix-ip4scout.jsonl", "leakix-l9event.json", "onyphe-api-v1.json",
		"zoomeye-v1-uncover.json", "zoomeye-v2-api.json", "netlas-cookbook-response.json", "fofa-api-gofofa.jsonl", "fofa-gofofa-guide.jsonl", "fofa-gofofa-guide.csv",
		"nmap-loopback.nmap", "whatweb.json", "whatweb-brief.txt", "nmap-fingerprint-strings.nmap",
		"ip2proxy-px11.ipv4.csv", "ip2proxy-px11.ipv4.cidr.csv", "list-dshield-block.txt", "list-csirtg.csv", "tor-bulk-exit-list.txt", "proxy-monosans.json", "proxy-fate0.jsonl", "proxy-spys.txt", "GeoIP2-Anonymous-IP-Test.mmdb",
		"testssl-3.0.8.json", "testssl-3.0.8-pretty.json", "testssl-3.0.8.csv", "testssl-3.0.8-terminal.txt", "sslyze-5.0.1.json", "sslyze-3.0.7.json",
		"sslscan-2.0.7-full.xml", "sslscan-1.11.13.xml", "ssh-audit-targets.json", "ssh-audit-2.5.0.json",
		"shadowserver-scan_ssl.csv", "shadowserver-scan_snmp.csv", "shadowserver-scan_http_vulnerable.csv", "shadowserver-scan_telnet.csv",
		"nessus-dd-many-vuln.xml", "nessus-goad-mini-corrupted.nessus", "openvas-dradis-v24.xml", "openvas-dd-one-vuln.xml", "openvas-dd-one-vuln.csv", "openvas-dd-report-detail-v2.csv", "nexpose-dd-dns.xml", "nexpose-dd-many-vulns.xml", "qualys-dd-sample-report.xml",
		"nessus-dd-sc-issue-9612.csv", "nessus-dd-io-new.csv", "qualys-dd-monthly-pci.csv",
		"transcript/curl-Iv-lab-rzd-https.txt", "transcript/openfortivpn-untrusted-replay.txt", "transcript/openconnect-fortinet-replay.txt", "transcript/wget-S-replay.txt",
		"ikescan/netscreen-aggressive-multiline.txt", "ikescan/readme-examples.txt",
		"har/mitmproxy-charles.har", "har/mitmproxy-with-bom.har", "burp/nuclei-burp-items.xml", "burp/dd-one_finding_with_blank_response.xml",
		"nikto/dd-tdh.xml", "nikto/dd-tdh.json", "nikto/nikto-2.5.0.csv", "nikto/nikto-2.1.6-vulnos2.txt", "nikto/nikto-2.1.6-output.txt",
		"zap/dd-zap-xml-plus-format.xml", "zap/zap-reports-basic-traditional-json-plus.json", "nuclei/nuclei-text-htb.txt", "nuclei/nuclei-text-timestamps.txt",
		"httpx/httpx-1.1.5-text.txt",
		"pcap/ssh.pcap", "pcap/wireguard.pcap", "pcap/zeek-snmpwalk-short.pcap", "pcap/openvpn_nohmac_tcp.pcapng",
		"cloudflow/aws-default.log", "cloudflow/aws-v5-traffic-path.log", "cloudflow/aws-default-duckdb.parquet", "cloudflow/aws-cli-get-log-events.json", "cloudflow/gcp-vpc-flows.jsonl", "cloudflow/azure-nsg-v2.json", "cloudflow/azure-vnet-v4.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 512 {
			b = b[:512]
		}
		f.Add(b)
	}
	f.Add([]byte(gvmDetectionReport))
	for _, name := range []string{"pcap/http.pcapng", "pcap/mullvad_wireguard.pcap", "pcap/suricata-ikev1-isakmp-main-mode.pcap", "pcap/forticlient-one-handshake.pcap",
		"pcap/dtls_certificate_fragments.pcap", "pcap/zeek-smtp-starttls.pcap", "pcap/openvpn_nohmac_tcp.pcapng", "suricata-alerts-wrccdc2018.json"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(b) // whole: a capture's first 512 bytes hold a packet or two
		}
	}
	f.Add([]byte(`<NessusClientData_v2><Report><ReportHost name="192.0.2.1"><HostProperties><tag name="HOST_END">Thu Mar 16 10:44:23 2023</tag>` +
		`<tag name="cpe-0">cpe:/o:fortinet:fortios:7.2.4 -&gt; Fortinet FortiOS</tag></HostProperties><ReportItem port="443" protocol="tcp" svc_name="www" severity="0" pluginID="10863">` +
		`<plugin_output>Subject Name: \n\nCommon Name: FGT\n\nSerial Number: 01 02\n</plugin_output><cpe>cpe:/o:fortinet:fortios</cpe></ReportItem></ReportHost></Report></NessusClientData_v2>`))
	f.Add([]byte("ExitNode X\nExitAddress 10.0.0.1 2026-11-01 00:00:00\n"))
	f.Add([]byte(`{"prefixes":[{"ip_prefix":"10.0.0.0/8","region":"x","service":"EC2"}]}`))
	f.Add([]byte("# c\n10.0.0.0/33\n::1\n\x00\n"))
	f.Add([]byte("socks5://[2001:db8::1]:1080\nhttps://u:p@1.2.3.4:8443/\n1.2.3.4:80:u:p\n"))
	f.Add([]byte("192.0.2.0/24,US,US-CA,\"San Jose, CA\",95141\n198.51.100.7,de,,,\n"))
	f.Add([]byte(`[{"hostname":"x","type":"wireguard","ipv4_addr_in":"1.2.3.4","ipv6_addr_in":null}]`))
	f.Add([]byte(`{"values":[{"name":"AzureFrontDoor.Backend","properties":{"addressPrefixes":["10.0.0.0/8"]}}]}`))
	f.Add([]byte("banner tcp 80 192.0.2.1 1700000000 http HTTP/1.1 200 OK\\x0d\\x0aA: b\\x0d\\x0a\\x0d\\x0abody\n"))
	f.Add([]byte(`<nmaprun><host><address addr="192.0.2.1" addrtype="ipv4"/><ports><port protocol="tcp" portid="1"><state state="open"/><service servicefp="SF:r(NULL,4,&quot;ab\x&quot;)"/></port></ports></host></nmaprun>`))
	f.Add([]byte(`{"time_received_ns":"2026-11-20T10:00:00Z","bytes":176,"packets":1,"src_addr":"::ffff:192.0.2.1","dst_addr":"192.0.2.2","proto":50}` + "\n"))
	f.Add([]byte("ts,te,sa,da,pr,ipkt,ibyt\n1,2,192.0.2.1,192.0.2.2,GRE,1,1\n\nSummary\nx\n"))
	f.Add([]byte("#separator \\x09\n#fields\tts\tid.resp_h\tid.resp_p\tcert_chain_fps\n#types\ttime\taddr\tport\tvector[string]\n#path\tssl\n1\t192.0.2.1\t443\ta,b\n"))
	f.Add([]byte(`{"event_type":"flow","src_ip":"192.0.2.1","dest_ip":"192.0.2.2","proto":"UDP","src_port":1,"dest_port":51820,"flow":{"pkts_toserver":1,"bytes_toserver":190,"end":"2026-11-20T10:00:00.000000+0000"}}` + "\n"))
	f.Add([]byte(`{"url":"http://192.0.2.1","host_ip":"192.0.2.1","raw_header":"SFRUUC8xLjEgMjAwIE9LDQoNCg==","chain":[{"response":"HTTP/1.1 302 Found\r\nLocation: /x\r\n\r\n"}],"tls":{"certificate":"x"}}` + "\n"))
	// cloud flow logs: an S3 header and a CloudWatch export line, events JSON, NSG v2 and VNet tuples, a Cloud Logging entry
	f.Add([]byte("version srcaddr dstaddr srcport dstport protocol packets bytes end action log-status pkt-srcaddr\n2 192.0.2.1 192.0.2.2 1 4500 17 1 176 1 ACCEPT OK -\n2026-11-20T10:00:00.000Z 2 1 eni-1 192.0.2.1 192.0.2.2 5 500 17 1 60 1 2 ACCEPT OK\n"))
	f.Add([]byte(`{"events":[{"timestamp":1,"message":"2 1 eni-1 192.0.2.1 192.0.2.2 5 1194 17 1 70 1 2 ACCEPT OK"},{"message":3}],"logEvents":[{}]}`))
	f.Add([]byte(`{"records":[{"properties":{"Version":2,"flows":[{"flows":[{"flowTuples":["1542110379,10.5.16.4,203.0.113.117,59932,4500,U,O,A,E,1,176,1,120","1,2"]}]}]}},{"flowLogVersion":4,"flowRecords":{"flows":[{"flowGroups":[{"flowTuples":["1663146003606,10.0.0.6,192.0.2.1,23956,51820,17,O,E,NX,1,176,1,120",""]}]}]}},{"records":[]}]}`))
	f.Add([]byte(`{"entries":[{"logName":"x/vpc_flows","jsonPayload":{"connection":{"src_ip":"192.0.2.1","dest_ip":"192.0.2.2","src_port":1,"dest_port":51820,"protocol":17},"bytes_sent":"176","packets_sent":"1","end_time":"2026-11-20T10:00:00Z"}},{"jsonPayload":{}}]}` + "\n"))
	// the shapes people write observations in (docs/observation.md, "Other shapes read")
	f.Add([]byte(`{"ip":"192.0.2.1","source":"s","observed_at":1795168800,"service":{"port":"443","probes":{"request":"GET https://h/x HTTP/1.1","response":"HTTP/1.1 200 OK\r\nServer: x\r\n\r\nb","tls":{"subject":{"common_name":["a"]},"sans":"DNS:a, IP Address:192.0.2.1"}}}}` + "\n"))
	f.Add([]byte(`{"ip":"192.0.2.1","source":"s","observed_at":"2026-11-20 10:00:00","service":{"port":443,"probes":[{"banner":"> GET / HTTP/1.1\n>\n< HTTP/1.1 302 Found\n< Location: /x\n<\n"},{"banner":"PORT STATE SERVICE\n443/tcp open ssl/http X\n| ssl-cert: Subject: commonName=a/organizationName=b\n"},{"banner":"subject=C = US, O = x, CN = y\n"},{"response":{"headers":"HTTP/2 200\r\n:status: 200\r\nx: y"}}]}}` + "\n"))
	// the auditors' shapes whole (the files' first 512 bytes hold no record)
	f.Add([]byte(`[{"id":"cert <cert#1>","ip":"a/192.0.2.1","port":"443","severity":"INFO","finding":"-----BEGIN CERTIFICATE----- MIIB -----END CERTIFICATE-----"},{"id":"cert_serialNumber","ip":"a/192.0.2.1","port":"443","finding":"0A"}]`))
	f.Add([]byte(`{"server_scan_results":[{"server_location":{"hostname":"h","ip_address":"192.0.2.1","port":443},"connectivity_status":"COMPLETED","scan_result":{"certificate_info":{"status":"COMPLETED","result":{"certificate_deployments":[{"received_certificate_chain":[{"as_pem":"","serial_number":12,"fingerprint_sha256":"KwG0Z1HDB82pOFTWhqIV16g847zx7YAOlRP8sDGRgvc=","not_valid_after":"2022-03-15T23:59:59"}]}]}}}}]}`))
	f.Add([]byte(`<document><ssltest host="192.0.2.1" port="443"><cipher status="preferred" sslversion="TLSv1.2" cipher="X" id="0xC030"/><certificates><certificate type="full"><serial>10 (0xa)</serial><subject>/CN=x</subject><not-valid-after>Jan 2 03:04:05 2030 GMT</not-valid-after></certificate></certificates></ssltest></document>`))
	f.Add([]byte("\"timestamp\",\"ip\",\"port\",\"banner\"\n\"2026-11-20 10:00:00\",\"192.0.2.1\",23,\"a\nb\"\n,\"::1\",x,\"c\\\"d\"\n\"timestamp\",\"src_ip\"\n1,2\n"))
	f.Add([]byte(`[{"banner":{"raw":"SSH-2.0-x","protocol":"2.0"},"target":"2001:db8::1:22"},{"banner":{"raw":"SSH-2.0-y","protocol":[2,0]},"target":"localhost"}]`))
	for _, seed := range toolOutputSeeds {
		f.Add([]byte(seed))
	}
	// client transcripts: masked and impossible addresses, an echo, a certificate block
	f.Add([]byte("* Connected to h (x.x.x.x) port 443 (#0)\n> GET / HTTP/1.1\n>\n< HTTP/2 200\n< a: b\n<\nHTTP/2 200\na: b\n\nbody\n* Connected to h ([::1]) port 0\n"))
	f.Add([]byte("DEBUG:  gateway_addr: 192.0.2.1\nDEBUG:  gateway_port: 0\nERROR:  Gateway certificate:\nERROR:      issuer:\nERROR:          CN=x\nDEBUG:  http_receive:\nHTTP/1.1 200 OK\nContent-Length: 99\n\nx\n"))
	names := slices.Sorted(maps.Keys(Adapters()))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for _, name := range names {
			lines := lines
			if name == "pcap" {
				lines = max(lines, len(data)/12+1) // a capture's records are numbered by packet; a packet takes 12 bytes at least
			}
			kind := "vpn"
			if name == "proxy-list" {
				kind = "socks5"
			}
			opt := Options{Kind: kind, Provider: "fuzz", ObservedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), MaxLineBytes: 1 << 12,
				Skipped: func(line int, reason string) {
					if line < 0 || line > lines || reason == "" {
						t.Fatalf("%s: skipped line %d of %d (%q)", name, line, lines, reason)
					}
				}}
			emit := func(line int, o Observation) error {
				if line < 1 || line > lines {
					t.Fatalf("%s: observation on line %d of %d", name, line, lines)
				}
				before := o
				if err := o.Normalize(); err != nil {
					t.Fatalf("%s: emitted an invalid observation: %v", name, err)
				}
				if _, _, err := before.Encode(); err != nil {
					t.Fatalf("%s: emitted an observation that does not encode: %v", name, err)
				}
				return nil
			}
			bad := func(e LineError) {
				if e.Line < 0 || e.Line > lines {
					t.Fatalf("%s: error on line %d of %d: %v", name, e.Line, lines, e.Err)
				}
				if strings.TrimSpace(e.Error()) == "" {
					t.Fatalf("%s: empty error", name)
				}
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = Adapters()[name](bytes.NewReader(data), opt, emit, bad)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: no return within 10 s on %d bytes", name, len(data))
			}
		}
	})
}

// toolOutputSeeds are whole records of the har, burp, zap, nikto and the
// nuclei and httpx text forms (their files' first 512 bytes hold none).
var toolOutputSeeds = []string{
	`{"log":{"entries":[{"startedDateTime":"2026-01-02T03:04:05Z","serverIPAddress":"[2001:db8::1]","request":{"method":"GET","url":"https://h/x?y","headers":[{"name":"Cookie","value":"s=1"}]},` +
		`"response":{"status":"200","headers":[{"name":"Set-Cookie","value":"a"}],"content":{"size":99,"text":"aGk=","encoding":"base64"}},"_securityDetails":{"protocol":"TLS 1.3","validFrom":1e12}},{"request":{"url":"http://192.0.2.1:0/"},"response":{"status":0}}]}}`,
	`<items burpVersion="x"><item><time>Sat Sep 30 20:11:32 IST 2023</time><url>http://192.0.2.1/</url><host ip="192.0.2.1">h</host><port>80</port>` +
		`<request base64="true">R0VUIC8gSFRUUC8xLjENCg0K</request><response base64="true">SFRUUC8xLjEgMjAwIE9LDQoNCg==</response></item></items>`,
	"<issues exportTime=\"Sat Sep 13 22:39:44 CEST 2014\"><issue><name>x</name><host ip=\"192.0.2.1\">https://h:8443</host><path>/</path><requestresponse><request>GET / HTTP/1.1\r\n\r\n</request><response>SSH-2.0-x</response></requestresponse></issue></issues>",
	`<OWASPZAPReport created="2025-10-22T16:09:39Z"><site host="192.0.2.1" port="443" ssl="true"><alerts><alertitem><instances><instance><uri>https://192.0.2.1/a</uri><method>GET</method>` +
		"<requestheader>  GET https://192.0.2.1/a HTTP/1.1\n  Authorization: x\n\n</requestheader><responseheader>\n  HTTP/1.1 200 OK\n  Server: x\n\n</responseheader><responsebody>b</responsebody></instance></instances></alertitem></alerts></site></OWASPZAPReport>",
	"- Nikto v2.5.0\n+ Target IP:          192.0.2.1\n+ Target Hostname:    h\n+ Target Port:        443\n+ SSL Info:        Subject:  /CN=h\n                   Ciphers:  X\n                   Issuer:   /O=y/CN=z\n" +
		"+ Start Time:         2021-06-14 09:07:03 (GMT-5)\n+ Server: x\n+ /: Retrieved x-powered-by header: PHP/7.\n+ 1 host(s) tested\n",
	`[2022-09-01 05:54:26] [t:m] [matched] [global] [info] [http] https://192.0.2.1:8443/p ["a"b","c"] [LN: 1,2] [k="v"]` + "\n[INF] x\n",
	"https://192.0.2.1:8443 [301,200] [t] [s] [x,y] [vhost] [192.0.2.1] [text/html] [12] [GET] [1.5ms] [https://192.0.2.1/x]\n",
}
