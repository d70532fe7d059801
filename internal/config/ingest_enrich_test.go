package config

import (
	"strings"
	"testing"
)

func TestParse_IngestEnrich(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		wantErr []string // substrings, each must appear; none = valid
	}{
		{"defaults", "", nil},
		{"good source", `
ingest:
  sources:
    - {name: tor, format: tor-exits, url: "https://check.torproject.org/exit-addresses", schedule: "@every 1h"}
    - {name: cf, format: cidr-list, path: samples/cloudflare-ips-v4.txt, kind: cdn, provider: Cloudflare}
    - {name: geo, format: geofeed, url: "https://geoip.linode.com/", kind: hosting, provider: Akamai}
    - {name: proxies, format: proxy-list, path: p.txt.gz, kind: socks5}
    - {name: relay, format: private-relay, url: "https://mask-api.icloud.com/egress-ip-ranges.csv"}
    - {name: sightings, format: observations, path: s.ndjson, class: residential}
    - {name: edge, format: goflow2, path: f.json, class: netflow}
    - {name: feed, format: tor-exits, path: t.txt, class: standard}
`, nil},
		{"bad sources", `
ingest:
  max_in_flight: 5000
  sources:
    - {name: "bad name", format: csv, schedule: "never"}
    - {name: cf, format: cidr-list, path: a, url: "http://x", confidence: 2}
    - {name: cf, format: tor-exits, path: a, kind: vpn}
    - {name: geo, format: geofeed, path: a, kind: vpn}
    - {name: proxies, format: proxy-list, path: a, kind: vpn}
    - {name: aws, format: aws-ranges, path: a, provider: AWS}
    - {name: resi, format: observations, path: a, class: residental}
`, []string{"ingest.sources[6].class: must be one of standard, residential, netflow, got \"residental\"", "ingest.sources[3].provider: geofeed needs a provider", "ingest.sources[4].kind: a proxy-list kind is its protocol",
			"ingest.sources[5].provider: only a cidr-list or geofeed takes a provider", "ingest.max_in_flight", "ingest.sources[0].name", "ingest.sources[0].format", "ingest.sources[0].url: set exactly one",
			"ingest.sources[0].schedule", "ingest.sources[1].kind: cidr-list needs a kind", "ingest.sources[1].url", "ingest.sources[1].confidence",
			"ingest.sources[2].name: duplicate", "ingest.sources[2].kind: only a cidr-list, geofeed, ip2proxy or proxy-list takes a kind"}},
		{"bad enrich", `
enrich:
  workers: 0
  batch_size: 0
  max_failures: 0
  bucket: ""
  retention_days: 0
  age_schedule: "every day"
  catalog: {schedule: "x y", fetch_timeout: 0s}
`, []string{"enrich.workers", "enrich.batch_size", "enrich.max_failures", "enrich.bucket", "enrich.retention_days",
			"enrich.age_schedule", "enrich.catalog.schedule", "enrich.catalog.fetch_timeout"}},
		{"unknown key", "enrich:\n  catalog:\n    nvd_dir: x\n", []string{"enrich.catalog.nvd_dir", "unknown key"}},
		{"good cve sources", `
enrich:
  catalog:
    euvd: ["https://euvdservices.enisa.europa.eu/api/dump/cve-euvd-mapping"]
    jvn: ["https://jvndb.jvn.jp/en/rss/years/jvndb_2024.rdf"]
    endoflife: [samples/cve/endoflife, "https://endoflife.date/api/fortios.json"]
    endoflife_cpe: {cisco-ios-xe: ["cpe:2.3:o:cisco:ios_xe"]}
    nvd_api: {modified_within: 168h, query: {noRejected: ""}}
`, nil},
		{"bad cve sources", `
enrich:
  catalog:
    endoflife_cpe: {fortios: ["fortios"]}
    nvd_api: {url: "ftp://x", results_per_page: 5000, delay: -1s, modified_within: 3000h, retries: 11}
`, []string{"enrich.catalog.endoflife_cpe.fortios[0]: want cpe:2.3", "enrich.catalog.nvd_api.url", "enrich.catalog.nvd_api.results_per_page",
			"enrich.catalog.nvd_api.delay", "enrich.catalog.nvd_api.modified_within", "enrich.catalog.nvd_api.retries"}},
		{"unknown nvd_api key", "enrich:\n  catalog:\n    nvd_api: {api_key: x}\n", []string{"enrich.catalog.nvd_api.api_key", "unknown key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "p.yaml")
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestLoad_ShippedPipelineYAML(t *testing.T) {
	cfg, err := Load("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Ingest.Sources) == 0 || len(cfg.Enrich.Catalog.NVD) == 0 || cfg.Enrich.Bucket != "ipstate" {
		t.Errorf("ingest/enrich sections not loaded: %+v %+v", cfg.Ingest, cfg.Enrich)
	}
}
