package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/testutil"
)

type result struct {
	obs []Observation
	bad []LineError
}

func runAdapter(t *testing.T, ad Adapter, input string, opt Options) result {
	t.Helper()
	var r result
	err := ad(strings.NewReader(input), opt, func(_ int, o Observation) error {
		r.obs = append(r.obs, o)
		return nil
	}, func(le LineError) { r.bad = append(r.bad, le) })
	if err != nil {
		t.Fatalf("adapter: %v", err)
	}
	return r
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func badLines(bad []LineError) []int {
	var out []int
	for _, b := range bad {
		out = append(out, b.Line)
	}
	return out
}

func TestTorExits_RealSample(t *testing.T) {
	t.Parallel()
	in := readFile(t, "exit-addresses")
	r := runAdapter(t, TorExits, in, Options{})
	if want := strings.Count(in, "\nExitAddress "); len(r.obs) != want || len(r.bad) != 0 {
		t.Fatalf("got %d observations, %d bad; want %d, 0", len(r.obs), len(r.bad), want)
	}
	o := r.obs[0]
	if o.IP != "185.241.208.232" || o.ObservedAt != "2024-03-12T08:10:51Z" || o.Type != TypeSignal ||
		o.Signal.Kind != "tor_exit" || o.Signal.Ref != "FE39F07EBE7870DCE124AB30DF3ABD0700A43F75" || o.Source != "tor-exits" {
		t.Errorf("first observation = %+v %+v", o, o.Signal)
	}
}

func TestTorExits_Malformed(t *testing.T) {
	t.Parallel()
	in := "ExitNode FE39F07EBE7870DCE124AB30DF3ABD0700A43F75\n" +
		"Published 2024-03-11 13:07:19\n" +
		"ExitAddress 999.1.1.1 2024-03-12 08:10:51\n" + // line 3: bad address
		"ExitAddress 10.0.0.1 yesterday\n" + // line 4: wrong field count
		"ExitAddress 10.0.0.2 2024-03-12 08:10:51\n" +
		"Bogus line\n" + // line 6
		"ExitNode short\n" + // line 7
		"ExitAddress 10.0.0.3 2024-03-12 08:10:51\n" // line 8: outside a valid block
	r := runAdapter(t, TorExits, in, Options{})
	if len(r.obs) != 1 || r.obs[0].IP != "10.0.0.2" {
		t.Errorf("observations = %+v, want only 10.0.0.2", r.obs)
	}
	if got, want := badLines(r.bad), []int{3, 4, 6, 7, 8}; !slices.Equal(got, want) {
		t.Errorf("bad lines = %v, want %v (%v)", got, want, r.bad)
	}
}

func TestAWSRanges_RealSample(t *testing.T) {
	t.Parallel()
	in := readFile(t, "aws-ip-ranges.json")
	var raw struct {
		Prefixes []struct {
			Service string `json:"service"`
		} `json:"prefixes"`
		IPv6 []json.RawMessage `json:"ipv6_prefixes"`
	}
	if err := json.Unmarshal([]byte(in), &raw); err != nil {
		t.Fatal(err)
	}
	cf := 0
	for _, p := range raw.Prefixes {
		if p.Service == "CLOUDFRONT" {
			cf++
		}
	}
	r := runAdapter(t, AWSRanges, in, Options{})
	if len(r.obs) != len(raw.Prefixes)+len(raw.IPv6) || len(r.bad) != 0 {
		t.Fatalf("got %d observations, %d bad; want %d", len(r.obs), len(r.bad), len(raw.Prefixes)+len(raw.IPv6))
	}
	cdn, v6 := 0, 0
	for _, o := range r.obs {
		if o.ObservedAt != "2025-07-24T20:23:14Z" || o.Range.Provider != "Amazon Web Services" {
			t.Fatalf("observation %+v", o)
		}
		if o.Range.Kind == "cdn" {
			cdn++
		}
		if strings.Contains(o.Network, ":") {
			v6++
		}
	}
	if cdn < cf || cf == 0 || v6 != len(raw.IPv6) {
		t.Errorf("cdn=%d (CLOUDFRONT %d), v6=%d (want %d)", cdn, cf, v6, len(raw.IPv6))
	}
	if r.obs[0].Network != "3.4.12.4/32" || r.obs[0].Range.Region != "eu-west-1" {
		t.Errorf("first = %+v %+v", r.obs[0], r.obs[0].Range)
	}
}

func TestAWSRanges_MalformedPrefix(t *testing.T) {
	t.Parallel()
	in := `{
  "createDate": "2025-07-24-20-23-14",
  "prefixes": [
    {"ip_prefix": "3.4.12.4/32", "region": "eu-west-1", "service": "AMAZON"},
    {"ip_prefix": "3.4.12.999/32", "region": "eu-west-1", "service": "AMAZON"},
    {"ip_prefix": "3.5.140.0/22", "region": "ap-northeast-2", "service": "EC2"}
  ]
}`
	r := runAdapter(t, AWSRanges, in, Options{})
	if len(r.obs) != 2 || !slices.Equal(badLines(r.bad), []int{5}) {
		t.Errorf("obs=%d bad=%v, want 2 and line 5", len(r.obs), r.bad)
	}
}

func TestGCPRanges_RealSample(t *testing.T) {
	t.Parallel()
	in := readFile(t, "gcp-cloud.json")
	r := runAdapter(t, GCPRanges, in, Options{})
	if want := strings.Count(in, "Prefix\""); len(r.obs) != want || len(r.bad) != 0 {
		t.Fatalf("got %d observations, %d bad; want %d", len(r.obs), len(r.bad), want)
	}
	o := r.obs[0]
	if o.Network != "34.1.208.0/20" || o.Range.Region != "africa-south1" || o.ObservedAt != "2025-07-24T19:16:28Z" || o.Range.Kind != "hosting" {
		t.Errorf("first = %+v %+v", o, o.Range)
	}
}

func TestCIDRList_RealSamples(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name, file, kind, provider string
		wantRanges, wantSignals    int
		wantSignal                 string
	}{
		{"cloudflare v4", "cloudflare-ips-v4.txt", "cdn", "Cloudflare", 15, 0, ""},
		{"cloudflare v6 no final newline", "cloudflare-ips-v6.txt", "cdn", "Cloudflare", 7, 0, ""},
		{"mullvad /32s", "mullvad.txt", "vpn", "Mullvad", 0, 120, "vpn_exit"},
		{"proton mixed", "protonvpn.txt", "vpn", "Proton VPN", -1, -1, "vpn_exit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAdapter(t, CIDRList, readFile(t, tt.file), Options{Kind: tt.kind, Provider: tt.provider, ObservedAt: at})
			ranges, signals := 0, 0
			for _, o := range r.obs {
				if o.ObservedAt != "2026-11-01T00:00:00Z" || len(o.Claims) != 1 || o.Claims[0].OrgName != tt.provider {
					t.Fatalf("observation %+v", o)
				}
				switch o.Type {
				case TypeRange:
					ranges++
					if o.Range.Kind != tt.kind {
						t.Fatalf("range kind %q", o.Range.Kind)
					}
				case TypeSignal:
					signals++
					if o.Signal.Kind != tt.wantSignal {
						t.Fatalf("signal kind %q", o.Signal.Kind)
					}
				}
			}
			if len(r.bad) != 0 {
				t.Errorf("bad = %v", r.bad)
			}
			if tt.wantRanges >= 0 && (ranges != tt.wantRanges || signals != tt.wantSignals) {
				t.Errorf("ranges=%d signals=%d, want %d %d", ranges, signals, tt.wantRanges, tt.wantSignals)
			}
			if tt.wantRanges < 0 && (ranges == 0 || signals == 0) {
				t.Errorf("ranges=%d signals=%d, want both", ranges, signals)
			}
		})
	}
}

func TestCIDRList_CommentsAndMalformed(t *testing.T) {
	t.Parallel()
	in := "# Cloudflare\n\n173.245.48.0/20 # edge\n10.0.0.300\n2001:db8::/32\nnot-an-ip\n  192.0.2.7  \n"
	r := runAdapter(t, CIDRList, in, Options{Kind: "cdn", Provider: "X"})
	if got := badLines(r.bad); !slices.Equal(got, []int{4, 6}) {
		t.Errorf("bad lines = %v, want [4 6]", got)
	}
	var keys []string
	for _, o := range r.obs {
		keys = append(keys, o.Key())
	}
	if want := []string{"173.245.48.0/20", "2001:db8::/32", "192.0.2.7"}; !slices.Equal(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
	if err := CIDRList(strings.NewReader("1.2.3.4\n"), Options{Kind: "bogus"}, nil, nil); err == nil {
		t.Error("a bad kind must fail the whole run")
	}
}

func TestNDJSON_Sample(t *testing.T) {
	t.Parallel()
	in := readFile(t, "observations.ndjson")
	r := runAdapter(t, NDJSON, in, Options{})
	if want := strings.Count(in, "\n"); len(r.obs) != want || len(r.bad) != 0 {
		t.Fatalf("got %d observations, %d bad (%v); want %d", len(r.obs), len(r.bad), r.bad, want)
	}
	types := map[string]int{}
	for _, o := range r.obs {
		types[o.Type]++
	}
	for _, ty := range []string{TypeService, TypeSignal, TypeRange, TypeFlow} {
		if types[ty] == 0 {
			t.Errorf("no %s observation in the sample", ty)
		}
	}
}

func TestNDJSON_Malformed(t *testing.T) {
	t.Parallel()
	good := `{"v":1,"type":"signal","ip":"192.0.2.9","source":"s","observed_at":"2026-11-20T10:00:00+01:00","signal":{"kind":"tor_exit"}}`
	tests := []struct {
		name, line, wantErr string
	}{
		{"not json", `{"v":1,`, "json"},
		{"bad ip", strings.Replace(good, "192.0.2.9", "192.0.2", 1), "ip:"},
		{"bad time", strings.Replace(good, "2026-11-20T10:00:00+01:00", "yesterday", 1), "observed_at"},
		{"bad kind", strings.Replace(good, "tor_exit", "teleport", 1), "signal.kind"},
		{"two payloads", strings.Replace(good, `"signal":`, `"flow":{"port":1,"transport":"udp","protocol":"wireguard"},"signal":`, 1), "exactly one"},
		{"bad version", strings.Replace(good, `"v":1`, `"v":3`, 1), "version"},
		{"bad confidence", strings.Replace(good, `"kind":"tor_exit"`, `"kind":"tor_exit","confidence":1.5`, 1), "confidence"},
		{"service without port", `{"type":"service","ip":"192.0.2.1","source":"s","observed_at":"2026-11-20T10:00:00Z","service":{"transport":"tcp"}}`, "service.port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAdapter(t, NDJSON, good+"\n"+tt.line+"\n"+good+"\n", Options{})
			if len(r.obs) != 2 || len(r.bad) != 1 || r.bad[0].Line != 2 || !strings.Contains(r.bad[0].Error(), tt.wantErr) {
				t.Fatalf("obs=%d bad=%v, want 2 and line 2 with %q", len(r.obs), r.bad, tt.wantErr)
			}
			if r.obs[0].ObservedAt != "2026-11-20T09:00:00Z" {
				t.Errorf("observed_at not normalized to UTC: %s", r.obs[0].ObservedAt)
			}
		})
	}
}

// A member the format does not know loses the record nothing: the record
// goes in, and the member is named in a warning with its line.
func TestNDJSON_UnknownMembersWarn(t *testing.T) {
	t.Parallel()
	in := `{"v":1,"type":"signal","ip":"192.0.2.9","source":"s","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"tor_exit","why":"a"},"extra":1}` + "\n" +
		`{"v":1,"type":"signal","ip":"192.0.2.8","source":"s","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"tor_exit"}}` + "\n"
	var warnings []LineError
	r := runAdapter(t, NDJSON, in, Options{Warn: func(line int, msg string) { warnings = append(warnings, LineError{line, errors.New(msg)}) }})
	if len(r.obs) != 2 || len(r.bad) != 0 || r.obs[0].Signal.Kind != "tor_exit" {
		t.Fatalf("obs %d bad %v", len(r.obs), r.bad)
	}
	if len(warnings) != 1 || warnings[0].Line != 1 || !strings.Contains(warnings[0].Error(), "/signal/why, /extra") {
		t.Errorf("warnings %v, want line 1 naming /signal/why and /extra", warnings)
	}
}

func TestIngester_DedupAndMalformed(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	n.Ensure(t)
	in := New(n.JS, testutil.Logger(t), nil, 16, time.Minute)
	ctx := t.Context()
	fetch1 := Options{ListedAt: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)}
	st, err := in.IngestFile(ctx, "observations", "testdata/observations.ndjson", fetch1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Read != 20 || st.Published != 20 || st.Duplicates != 0 {
		t.Fatalf("first run: %v", st)
	}
	// The same fetch published again (a retry): every observation is
	// already stored.
	st, err = in.IngestFile(ctx, "observations", "testdata/observations.ndjson", fetch1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Published != 0 || st.Duplicates != 20 {
		t.Fatalf("second run: %v", st)
	}
	// A malformed line is skipped, the rest goes in.
	bad := readFile(t, "observations.ndjson")
	lines := strings.Split(bad, "\n")
	lines[3] = `{"v":1,"type":"service"` // line 4
	lines = append([]string{`{"v":1,"type":"signal","ip":"192.0.2.200","source":"t","observed_at":"2026-11-22T00:00:00Z","signal":{"kind":"vpn_exit"}}`}, lines...)
	st, err = in.Ingest(ctx, "observations", strings.NewReader(strings.Join(lines, "\n")), fetch1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Published != 1 || st.Duplicates != 19 || len(st.Malformed) != 1 || st.Malformed[0].Line != 5 {
		t.Fatalf("third run: %v %v", st, st.Malformed)
	}
	// A later fetch of the unchanged file lists every entry again: stored,
	// so that the state sees the feed still lists them.
	st, err = in.IngestFile(ctx, "observations", "testdata/observations.ndjson", Options{ListedAt: fetch1.ListedAt.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if st.Published != 20 || st.Duplicates != 0 {
		t.Fatalf("second fetch: %v", st)
	}
	s, err := n.JS.Stream(ctx, "OBSERVATIONS")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 41 {
		t.Errorf("stream holds %d messages, want 41", info.State.Msgs)
	}
	if _, err := in.IngestFile(ctx, "nope", "testdata/observations.ndjson", Options{}); err == nil {
		t.Error("unknown format accepted")
	}
	if _, err := in.IngestFile(ctx, "tor-exits", "testdata/missing", Options{}); err == nil {
		t.Error("missing file accepted")
	}
}

// A publish the stream does not answer (no stream yet, as while a leader
// is elected) is sent again with its message id until stored: every
// observation ends up in the stream exactly once.
func TestPublisher_ResendsUntilStored(t *testing.T) {
	t.Parallel()
	nt := testutil.StartNATS(t)
	ctx := context.Background()
	pub := NewPublisher(nt.JS, 64)
	pub.AckWait = 500 * time.Millisecond
	const n = 300
	created := make(chan error, 1)
	// The stream appears only while publishes are failing.
	go func() {
		time.Sleep(700 * time.Millisecond)
		_, err := nt.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "RESEND", Subjects: []string{"resend.>"}, Duplicates: time.Hour})
		created <- err
	}()
	for i := 0; i < n; i++ {
		if err := pub.PublishRaw(ctx, "resend.x", fmt.Sprintf("id-%d", i), []byte("x")); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	if pub.Resent == 0 {
		t.Fatal("nothing was resent, though the stream was missing at first")
	}
	st, err := nt.JS.Stream(ctx, "RESEND")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != n || pub.Published+pub.Duplicates != n {
		t.Fatalf("stream holds %d, published %d + duplicates %d; want %d stored once", info.State.Msgs, pub.Published, pub.Duplicates, n)
	}
}

// Past RetryFor, Flush gives up with an error that counts what is missing.
func TestPublisher_GivesUpAfterRetryFor(t *testing.T) {
	t.Parallel()
	nt := testutil.StartNATS(t)
	pub := NewPublisher(nt.JS, 16)
	pub.AckWait, pub.RetryFor = 200*time.Millisecond, time.Second
	for i := 0; i < 5; i++ {
		if err := pub.PublishRaw(context.Background(), "nowhere.x", fmt.Sprintf("id-%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	err := pub.Flush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "5 not stored") {
		t.Fatalf("flush = %v, want 5 not stored", err)
	}
}

// A line longer than MaxLineBytes is reported with its number and skipped;
// the lines after it still go in (every line-based format).
func TestLineAdapters_OverlongLineSkipped(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3000)
	good := `{"type":"signal","ip":"192.0.2.9","source":"s","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"tor_exit"}}`
	tests := []struct {
		name    string
		ad      Adapter
		opt     Options
		in      string
		wantIPs []string
		badAt   []int
	}{
		{"observations", NDJSON, Options{}, good + "\n" + `{"note":"` + long + `"}` + "\r\n" + strings.Replace(good, "192.0.2.9", "192.0.2.10", 1) + "\n",
			[]string{"192.0.2.9", "192.0.2.10"}, []int{2}},
		{"cidr-list, overlong last line without newline", CIDRList, Options{Kind: "vpn"}, "192.0.2.1\n" + long + "\n192.0.2.2\r\n# " + long,
			[]string{"192.0.2.1", "192.0.2.2"}, []int{2, 4}},
		{"tor-exits", TorExits, Options{},
			"ExitNode FE39F07EBE7870DCE124AB30DF3ABD0700A43F75\nPublished " + long + "\nExitAddress 192.0.2.3 2024-03-12 08:10:51\n",
			[]string{"192.0.2.3"}, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opt.MaxLineBytes = 1024
			r := runAdapter(t, tt.ad, tt.in, tt.opt)
			var ips []string
			for _, o := range r.obs {
				ips = append(ips, o.IP)
			}
			if !slices.Equal(ips, tt.wantIPs) {
				t.Errorf("observations %v, want %v", ips, tt.wantIPs)
			}
			if got := badLines(r.bad); !slices.Equal(got, tt.badAt) {
				t.Fatalf("bad lines %v, want %v", r.bad, tt.badAt)
			}
			if !strings.Contains(r.bad[0].Error(), "longer than 1024 bytes") {
				t.Errorf("error %q", r.bad[0].Error())
			}
		})
	}
	// A line of exactly MaxLineBytes (plus CRLF) is accepted.
	exact := "192.0.2.4" + strings.Repeat(" ", 1024-len("192.0.2.4"))
	r := runAdapter(t, CIDRList, exact+"\r\n", Options{Kind: "vpn", MaxLineBytes: 1024})
	if len(r.obs) != 1 || len(r.bad) != 0 {
		t.Errorf("line of exactly the limit: obs %d bad %v", len(r.obs), r.bad)
	}
}

// Every observation of one address or range goes to one partition, and
// addresses spread evenly over the partitions.
func TestObservation_Partition(t *testing.T) {
	t.Parallel()
	svc := Observation{Type: TypeService, Source: "scan.a:1", IP: "198.51.100.7", Service: &Service{Port: 443}}
	sig := Observation{Type: TypeSignal, Source: "tor-exits", IP: "198.51.100.7"}
	if svc.Partition() != sig.Partition() {
		t.Errorf("one address, two partitions: %d and %d", svc.Partition(), sig.Partition())
	}
	want := fmt.Sprintf("obs.service.scan_a_1.%02d", svc.Partition())
	if got := svc.Subject(); got != want {
		t.Errorf("Subject() = %q, want %q", got, want)
	}
	rng := Observation{Type: TypeRange, Network: "203.0.113.0/24", IP: ""}
	rng2 := Observation{Type: TypeRange, Network: "203.0.114.0/24"}
	counts := make([]int, config.ObservationPartitions)
	const n = 64000
	for i := range n {
		o := Observation{Type: TypeService, IP: netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String()}
		if i%2 == 1 {
			o.IP = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 14: byte(i >> 8), 15: byte(i)}).String()
		}
		counts[o.Partition()]++
	}
	for p, c := range counts {
		if share, even := float64(c)/n, 1.0/config.ObservationPartitions; share < even*0.9 || share > even*1.1 {
			t.Errorf("partition %d has %.1f%% of the addresses, want near %.1f%%", p, 100*share, 100.0/config.ObservationPartitions)
		}
	}
	if rng.Partition() == rng2.Partition() && rng.Partition() == (&Observation{Type: TypeRange, Network: "203.0.115.0/24"}).Partition() {
		t.Errorf("three ranges all in partition %d: the range's network is not what is hashed", rng.Partition())
	}
}

// Normalize keeps observed_at as written when it is already canonical and
// rewrites every other RFC 3339 form (and the forms with a space for the
// T or without a zone), so both give ipmodel.TimeFormat.
func TestNormalize_ObservedAtCanonical(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"2026-11-20T10:00:00Z":           "2026-11-20T10:00:00Z",
		"2026-11-20T10:00:00.5Z":         "2026-11-20T10:00:00Z",
		"2026-11-20T12:00:00+02:00":      "2026-11-20T10:00:00Z",
		"2026-11-20T10:00:00.999999999Z": "2026-11-20T10:00:00Z",
		// as SQL and logs print times: a space for the T; no zone is UTC
		"2026-11-20 10:00:00Z":      "2026-11-20T10:00:00Z",
		"2026-11-20 12:00:00+02:00": "2026-11-20T10:00:00Z",
		"2026-11-20 10:00:00":       "2026-11-20T10:00:00Z",
		"2026-11-20T10:00:00.25":    "2026-11-20T10:00:00Z",
	} {
		o := Observation{Type: TypeFlow, IP: "192.0.2.1", Source: "s", ObservedAt: in,
			Flow: &Flow{Port: 1, Transport: "udp", Protocol: "tor"}}
		if err := o.Normalize(); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if o.ObservedAt != want {
			t.Errorf("%s: observed_at %s, want %s", in, o.ObservedAt, want)
		}
	}
	for _, bad := range []string{"2026-11-20t10:00:00Z", "2026-11-20T10:00:00z", "2026-11-20  10:00:00", "2026-11-20 24:00:00", "2026-11-20T24:00:00Z", "2026-11-20T10:00:60Z", "2026-13-20T10:00:00Z"} {
		o := Observation{Type: TypeFlow, IP: "192.0.2.1", Source: "s", ObservedAt: bad,
			Flow: &Flow{Port: 1, Transport: "udp", Protocol: "tor"}}
		if err := o.Normalize(); err == nil {
			t.Errorf("%s: accepted as %s", bad, o.ObservedAt)
		}
	}
}

// Ingest writes the fetch time as listed_at on every observation without
// one; a line that carries its own keeps it (normalized to UTC seconds).
func TestIngester_ListedAt(t *testing.T) {
	t.Parallel()
	n := testutil.StartNATS(t)
	n.Ensure(t)
	in := New(n.JS, testutil.Logger(t), nil, 16, time.Minute)
	at := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	in.SetClock(func() time.Time { return at.Add(400 * time.Millisecond) })
	dir := t.TempDir()
	p := dir + "/obs.ndjson"
	lines := `{"type":"signal","ip":"192.0.2.1","source":"s","observed_at":"2026-11-20T10:00:00Z","signal":{"kind":"vpn_exit"}}
{"type":"signal","ip":"192.0.2.2","source":"s","observed_at":"2026-11-20T10:00:00Z","listed_at":"2026-11-21T12:00:00.5+02:00","signal":{"kind":"vpn_exit"}}
`
	if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := in.IngestFile(t.Context(), "observations", p, Options{}); err != nil {
		t.Fatal(err)
	}
	cons, err := n.JS.OrderedConsumer(t.Context(), "OBSERVATIONS", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for range 2 {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var o Observation
		if !DecodeCanonical(m.Data(), &o) {
			t.Fatalf("not canonical: %s", m.Data())
		}
		got[o.IP] = o.ListedAt
	}
	// An observations file says when it saw things: no fetch time is
	// added, a line's own listed_at is kept.
	if got["192.0.2.1"] != "" || got["192.0.2.2"] != "2026-11-21T10:00:00Z" {
		t.Errorf("listed_at = %v", got)
	}
	// A list feed is listed at its fetch.
	list := dir + "/list.txt"
	if err := os.WriteFile(list, []byte("192.0.2.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := in.IngestFile(t.Context(), "cidr-list", list, Options{Kind: "vpn"}); err != nil {
		t.Fatal(err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var o Observation
	if !DecodeCanonical(m.Data(), &o) || o.IP != "192.0.2.3" || o.ListedAt != "2026-11-26T10:30:00Z" {
		t.Errorf("cidr-list observation %s", m.Data())
	}
}
