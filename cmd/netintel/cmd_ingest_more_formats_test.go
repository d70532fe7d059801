package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/netintel/netintel/internal/testutil"
)

// The formats added in the seventh session go in through `netintel
// ingest` from their real samples (ingest/testdata/SOURCES.md), with what
// each read, stored and skipped counted.
func TestIngestCommand_ListScannerAndReportFormats(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	n.Ensure(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "cidr-list", "--kind", "hosting", "list-spamhaus-drop.txt"}, "12 observations read, 12 stored"},
		{[]string{"--format", "cidr-list", "--kind", "proxy", "list-dshield-block.txt"}, "9 observations read, 9 stored"},
		{[]string{"--format", "ip2proxy", "ip2proxy-px11.ipv4.csv"}, "14 observations read, 14 stored, 0 duplicates, 0 malformed; skipped 2 records (search-engine robot (SES): 2)"},
		{[]string{"--format", "tor-exits", "tor-bulk-exit-list.txt"}, "25 observations read, 25 stored"},
		{[]string{"--format", "proxy-list", "proxy-monosans.json"}, "5 observations read, 5 stored"},
		{[]string{"--format", "nfdump", "nfdump-1.7.1.json"}, "0 malformed"},
		{[]string{"--format", "nfdump", "nfdump-1.7.1-line.txt"}, "0 malformed"},
		{[]string{"--format", "masscan", "masscan-sec560.xml"}, "5 observations read, 5 stored"},
		{[]string{"--format", "nexpose", "nexpose-dd-many-vulns.xml"}, "19 observations read, 19 stored"},
		{[]string{"--format", "zeek", "zeek-6.2-software.log"}, "10 observations read, 10 stored"},
		{[]string{"--format", "pmacct", "pmacct-1.7.7.json"}, "0 malformed"},
		{[]string{"--format", "maxmind-anonymous", "GeoIP2-Anonymous-IP-Test.mmdb"}, "0 malformed"},
		{[]string{"--format", "qualys", "qualys-dd-sample-report.xml"}, "13 observations read, 13 stored"},
		{[]string{"--format", "shadowserver", "shadowserver-scan_ssl.csv"}, "0 malformed"},
		{[]string{"--format", "nessus", "nessus-dd-many-vuln.xml"}, "0 malformed"},
		{[]string{"--format", "openvas", "openvas-dradis-v24.xml"}, "0 malformed"},
		{[]string{"--format", "testssl", "testssl-3.0.8.json"}, "0 malformed"},
		{[]string{"--format", "ssh-audit", "ssh-audit-2.5.0.json"}, "0 malformed"},
		{[]string{"--format", "zoomeye", "zoomeye-v1-uncover.json"}, "0 malformed"},
		{[]string{"--format", "netlas", "netlas-cookbook-response.json"}, "0 malformed"},
		{[]string{"--format", "pcap", "pcap/wireguard.pcap"}, "3 observations read, 3 stored, 0 duplicates, 0 malformed"},
	} {
		var o, e bytes.Buffer
		env := &Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
		args := append([]string{"ingest", "--nats", n.URL}, c.args[:len(c.args)-1]...)
		args = append(args, "../../ingest/testdata/"+c.args[len(c.args)-1])
		err := run(t.Context(), env, args)
		if err != nil || !strings.Contains(o.String(), c.want) || strings.Contains(o.String(), " 0 observations read") {
			t.Errorf("%v: %v, stdout %q, stderr %q, want %q", c.args, err, o.String(), e.String(), c.want)
		}
	}
}

// Several files of one format go in one after the other, each counted; a
// file that does not read as the format is said, the others still go in,
// and the command fails.
func TestIngestCommand_SeveralFiles(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	n.Ensure(t)
	var o, e bytes.Buffer
	env := &Env{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
	err := run(t.Context(), env, []string{"ingest", "--nats", n.URL, "--format", "cidr-list", "--kind", "proxy",
		"../../ingest/testdata/list-ipsum.txt", "../../ingest/testdata/zeek-conn.log", "../../ingest/testdata/list-spamhaus-drop.txt"})
	if err == nil || !strings.Contains(err.Error(), "nothing in ../../ingest/testdata/zeek-conn.log reads as cidr-list") {
		t.Errorf("err = %v, want the zeek file named", err)
	}
	out := o.String()
	if !strings.Contains(out, "list-ipsum.txt: cidr-list: 23 observations read, 23 stored") || !strings.Contains(out, "list-spamhaus-drop.txt: cidr-list: 12 observations read, 12 stored") {
		t.Errorf("stdout %q", out)
	}
}
