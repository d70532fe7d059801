package ingest

import (
	"fmt"
	"os"
	"testing"
)

func TestZZSmoke(t *testing.T) {
	for _, c := range [][2]string{{"httpx", "httpx.jsonl"}, {"naabu", "naabu.jsonl"}, {"nmap-grep", "nmap-grep.gnmap"}, {"zeek", "zeek-docs.ndjson"}, {"zeek", "zeek-6.2-x509.log"}, {"zeek", "zeek-conn.log"}, {"zeek", "zeek-json-streaming.ndjson"}, {"suricata-eve", "suricata-eve.json"}} {
		in := readFile(t, c[1])
		if c[1] == "zeek-6.2-x509.log" {
			in += readFile(t, "zeek-6.2-ssl.log")
		}
		r := runScan(t, c[0], in)
		fmt.Fprintf(os.Stderr, "== %s %s obs %d bad %v skipped %v\n", c[0], c[1], len(r.obs), r.bad, r.skipped)
		for _, o := range r.obs {
			fmt.Fprintln(os.Stderr, mustJSON(t, o))
		}
	}
}
