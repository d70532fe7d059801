package ingest

import (
	"slices"
	"strings"
	"testing"
)

func TestTLSX_RealSample(t *testing.T) {
	t.Parallel()
	r := runScan(t, "tlsx", readFile(t, "tlsx.jsonl"))
	if len(r.obs) != 4 || len(r.bad) != 0 || len(r.skipped) != 0 {
		t.Fatalf("obs %d bad %v skipped %v", len(r.obs), r.bad, r.skipped)
	}
	// The current README's subject_org has no-break spaces between its words (both READMEs).
	const readmeOrg = "Internet\u00a0Corporation\u00a0for\u00a0Assigned\u00a0Names\u00a0and\u00a0Numbers"
	tests := []struct {
		line                      int
		ip, at, hosts             string
		port                      int
		version, cipher           string
		subjectCN, issuerCN, issO string
		subjectO                  []string
		sans                      int
		serial, sha256, notAfter  string
		selfSigned                bool
	}{
		// tlsx README @26e1c30 (2022-08-22): the underscore names.
		{1, "93.184.216.34", "2022-08-22T15:52:59Z", "example.com", 443, "TLSv1.3", "TLS_AES_256_GCM_SHA384", "www.example.org", "DigiCert TLS RSA SHA256 2020 CA1", "DigiCert Inc",
			[]string{readmeOrg}, 8, "", "7f2fe8d6b18e9a47839256cd97938daa70e8515750298ddba2f3f4b8440113fc", "2023-03-14T23:59:59Z", false},
		// tlsx v0.0.1's README (2022-06-21): the hyphenated names.
		{2, "93.184.216.34", "2022-06-21T11:33:22Z", "example.com", 443, "TLSv1.3", "TLS_AES_256_GCM_SHA384", "www.example.org", "DigiCert TLS RSA SHA256 2020 CA1", "DigiCert Inc",
			[]string{readmeOrg}, 8, "", "7f2fe8d6b18e9a47839256cd97938daa70e8515750298ddba2f3f4b8440113fc", "2023-03-14T23:59:59Z", false},
		// 2026: serial in colon hex, sni.
		{3, "3.160.77.103", "2026-08-27T15:12:32Z", "samaa.tv", 443, "TLSv1.3", "TLS_AES_128_GCM_SHA256", "samaa.tv", "Amazon RSA 2048 M01", "Amazon",
			nil, 2, "d54c61b485eb6a664498b0d0ce01dcf", "0e5c21353545b09e9ec0f25c953ab7208f5ba66a68d6e2475a997224d16116ce", "2027-02-21T23:59:59Z", false},
		// httpx's tls member: no ip (host is the address), no timestamp, self-signed.
		{4, "127.0.0.1", "2026-11-01T00:00:00Z", "", 443, "TLSv1.3", "TLS_AES_128_GCM_SHA256", "127.0.0.1", "127.0.0.1", "",
			nil, 1, "", "963f7bc86b3b7a87c7fd26f018cbdc9471a56992dee76f259097a2547e581c2d", "2034-05-27T02:32:47Z", true},
	}
	for _, tt := range tests {
		o := r.obs[tt.line-1]
		s := o.Service
		if o.IP != tt.ip || o.ObservedAt != tt.at || strings.Join(o.Hostnames, ",") != tt.hosts || s.Port != tt.port || s.Transport != "tcp" || len(s.Probes) != 1 {
			t.Errorf("line %d = %s", tt.line, mustJSON(t, o))
			continue
		}
		x := s.Probes[0].TLS
		issO := ""
		if x.Issuer != nil && len(x.Issuer.O) > 0 {
			issO = x.Issuer.O[0]
		}
		if x.Version != tt.version || x.Cipher != tt.cipher || x.Subject.CN != tt.subjectCN || x.Issuer.CN != tt.issuerCN || issO != tt.issO ||
			!slices.Equal(x.Subject.O, tt.subjectO) || len(x.SANs) != tt.sans || x.Serial != tt.serial || x.SHA256 != tt.sha256 || x.NotAfter != tt.notAfter ||
			x.SelfSigned != tt.selfSigned {
			t.Errorf("line %d tls = %s; want %+v", tt.line, mustJSON(t, x), tt)
		}
	}
	// The subject DN is parsed: its locality and country.
	if d := r.obs[0].Service.Probes[0].TLS.Subject; d.L != "Los Angeles" || d.C != "US" {
		t.Errorf("subject = %+v", d)
	}
}

func TestTLSX_Shapes(t *testing.T) {
	t.Parallel()
	// A PEM block cut short (tlsx -cert writes the leaf in PEM): it does
	// not parse as a certificate, so the listed fields are kept.
	const pemCert = `-----BEGIN CERTIFICATE-----\nMIIBnjCCAUSgAwIBAgIUBvS4pZ3rNqsvJn6X3mb8K6mM4XwwCgYIKoZIzj0EAwIw\nJDEPMA0GA1UECgwGRm9ydGluZXQxETAPBgNVBAMMCEZHVDYwRjAwMB4XDTI0MDEw\nMTAwMDAwMFoXDTM0MDEwMTAwMDAwMFowJDEPMA0GA1UECgwGRm9ydGluZXQxETAP\nBgNVBAMMCEZHVDYwRjAwMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END CERTIFICATE-----`
	tests := []struct {
		name, in string
		obs      int
		bad      []int
		skipped  string
		check    func(t *testing.T, r scanResult)
	}{
		{"jarm, ja3s, numeric port", `{"host":"192.0.2.1","port":8443,"probe_status":true,"tls_version":"tls12","cipher":"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384","jarm_hash":"07d14d16d21d21d07c42d41d00041d24a458a375eef0c576d23a7bab9a9fb1","ja3s_hash":"ccc514751b175866924439bdbb5bba34","ja3_hash":"client"}`,
			1, nil, "", func(t *testing.T, r scanResult) {
				x := r.obs[0].Service.Probes[0].TLS
				if r.obs[0].Service.Port != 8443 || x.JARM != "07d14d16d21d21d07c42d41d00041d24a458a375eef0c576d23a7bab9a9fb1" || x.JA3S != "ccc514751b175866924439bdbb5bba34" || x.Version != "TLSv1.2" {
					t.Errorf("tls = %s", mustJSON(t, r.obs[0]))
				}
			}},
		{"a -cert PEM that does not parse keeps the listed fields", `{"host":"fw.example","ip":"192.0.2.2","port":"443","subject_cn":"FGT60F","subject_org":["Fortinet"],"certificate":"` + pemCert + `"}`,
			1, nil, "", func(t *testing.T, r scanResult) {
				x := r.obs[0].Service.Probes[0].TLS
				if x.Subject.CN != "FGT60F" || x.Subject.O[0] != "Fortinet" || r.obs[0].Hostnames[0] != "fw.example" {
					t.Errorf("tls = %s", mustJSON(t, r.obs[0]))
				}
			}},
		{"failed probes and CT entries skipped, bad lines reported", strings.Join([]string{
			`{"host":"a.example","ip":"192.0.2.3","port":"443","probe_status":false,"error":"no address found for host"}`,
			`{"host":"a.example","port":"443","probe_status":true,"tls_version":"tls13"}`,
			`{"host":"192.0.2.3","port":"70000","tls_version":"tls13"}`,
			`{"host":"192.0.2.3","tls_version":"tls13"}`,
			`{"timestamp":"2025-07-14T10:00:00Z","subject_cn":"x.example","ctl_source":"Google 'Argon2025h2' log"}`,
			`not json`,
			`{"ip":"192.0.2.3","port":"443","probe_status":true}`,
			`{"ip":"192.0.2.4","port":"443","probe_status":true,"tls_version":"tls10","cipher":"TLS_RSA_WITH_AES_128_CBC_SHA"}`,
		}, "\n"), 1, []int{2, 3, 4, 6, 7}, "tlsx probe failed,tlsx certificate transparency entry (no service)", func(t *testing.T, r scanResult) {
			if !strings.Contains(r.bad[0].Error(), `line 2: host: not an IP address: "a.example" (and no ip)`) || !strings.Contains(r.bad[1].Error(), "port: must be 1..65535") ||
				!strings.Contains(r.bad[2].Error(), `not a tlsx result`) || !strings.Contains(r.bad[4].Error(), "no version, cipher or certificate") {
				t.Errorf("errors %v", r.bad)
			}
			if r.obs[0].Service.Probes[0].TLS.Version != "TLSv1.0" {
				t.Errorf("obs %s", mustJSON(t, r.obs))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runScan(t, "tlsx", tt.in)
			if len(r.obs) != tt.obs || !slices.Equal(badLines(r.bad), tt.bad) || strings.Join(r.skipped, ",") != tt.skipped {
				t.Fatalf("obs %s bad %v skipped %v", mustJSON(t, r.obs), r.bad, r.skipped)
			}
			tt.check(t, r)
		})
	}
}
