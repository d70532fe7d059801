package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/netintel/netintel/internal/ipmodel"
)

// DecodeOptions are how observations in JSON are read: unknown members
// refused, names matched case-insensitively, and strings that are not
// UTF-8 kept as their bytes, so that Normalize can keep a body's bytes
// exactly (as base64) instead of the replacement characters a strict
// decoder would put in their place.
var DecodeOptions = jsonv2.JoinOptions(jsonv2.RejectUnknownMembers(true), jsonv2.MatchCaseInsensitiveNames(true),
	jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

// Options are what an adapter needs besides its input.
type Options struct {
	// Source names the feed in observations; empty = the format name.
	Source string
	// Kind and Provider are the claims of a cidr-list.
	Kind     string
	Provider string
	// Confidence (0..1) of the feed's claims; 0 = the format's default.
	Confidence float64
	// Class is the data class the source declares (config class:):
	// written on every observation of the feed that does not carry a
	// more restricted one. "" = standard.
	Class string
	// ObservedAt is used when the feed carries no time (cidr-list): the
	// file's modification time or the response's Last-Modified, so an
	// unchanged file ingested again is recognised as the same observations.
	ObservedAt time.Time
	// ListedAt is when the feed was fetched or read (IngestFile sets it
	// to the time it opens the file or URL): Ingest writes it as
	// listed_at on every observation that does not carry its own, so
	// each fetch re-lists every entry of the feed (a new message id) and
	// keeps it fresh in the state, and a retry of the same fetch (same
	// ListedAt) is de-duplicated. Zero writes none.
	ListedAt time.Time
	// MaxLineBytes is the longest accepted line (default DefaultMaxLineBytes).
	MaxLineBytes int
	// Skipped, if set, is told of each record an adapter read and
	// deliberately did not store, with why (a zgrab2 module that failed,
	// a closed port): the record is well formed, so it is not reported
	// as malformed, and `netintel ingest` prints the counts.
	Skipped func(line int, reason string)
	// Warn, if set, is told of what a record had that was not kept while
	// the record itself was (a member the format does not know).
	Warn func(line int, msg string)
	// Progress, if set, is told how many bytes of the file or response
	// IngestFile has read (as stored: compressed when it is), and of how
	// many (-1 when unknown), at most once per 64 KiB and at the end.
	Progress func(read, total int64)
}

// DefaultMaxLineBytes is the longest line a feed may have unless
// configured: long enough for an observation that carries a scanner's
// 50 MB page, which Normalize then cuts to MaxBodyBytes.
const DefaultMaxLineBytes = 64 << 20

// LineError is one malformed record of a feed, skipped.
type LineError struct {
	Line int
	Err  error
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Emit receives each observation an adapter reads, with its line number.
type Emit func(line int, o Observation) error

// Adapter reads one feed format and emits observations. A malformed record
// is reported through bad and skipped; the returned error is fatal (the
// input cannot be read at all, or emit failed).
type Adapter func(r io.Reader, opt Options, emit Emit, bad func(LineError)) error

// Adapters maps each format name to its adapter; the names are
// config.IngestFormats (a test holds them equal).
func Adapters() map[string]Adapter {
	return map[string]Adapter{
		"tor-exits":          TorExits,
		"aws-ranges":         AWSRanges,
		"gcp-ranges":         GCPRanges,
		"azure-service-tags": AzureServiceTags,
		"oracle-ranges":      OracleRanges,
		"fastly-ranges":      FastlyRanges,
		"cidr-list":          CIDRList,
		"ip2proxy":           IP2Proxy,
		"maxmind-anonymous":  MaxMindAnonymous,
		"geofeed":            Geofeed,
		"private-relay":      PrivateRelay,
		"proxy-list":         ProxyList,
		"mullvad-relays":     MullvadRelays,
		"observations":       NDJSON,
		"zgrab2":             ZGrab2,
		"http-transcript":    Transcript,
		"ike-scan":           IKEScan,
		"masscan":            Masscan,
		"nmap-xml":           NmapXML,
		"nmap-normal":        NmapNormal,
		"shodan":             Shodan,
		"censys":             Censys,
		"shadowserver":       Shadowserver,
		"sonar-http":         SonarHTTP,
		"goflow2":            Goflow2,
		"nfdump-csv":         NfdumpCSV,
		"nfdump":             NfdumpCSV,
		"pmacct":             Pmacct,
		"aws-vpc-flow":       AWSVPCFlow,
		"gcp-vpc-flow":       GCPVPCFlow,
		"azure-flow":         AzureFlow,
		"httpx":              HTTPX,
		"naabu":              Naabu,
		"fingerprintx":       Fingerprintx,
		"whatweb":            WhatWeb,
		"nmap-grep":          NmapGrep,
		"zeek":               Zeek,
		"suricata-eve":       Suricata,
		"nuclei":             Nuclei,
		"har":                HAR,
		"burp":               Burp,
		"nikto":              Nikto,
		"zap":                ZAP,
		"tlsx":               TLSX,
		"leakix":             LeakIX,
		"onyphe":             Onyphe,
		"zoomeye":            ZoomEye,
		"fofa":               FOFA,
		"netlas":             Netlas,
		"testssl":            TestSSL,
		"sslyze":             SSLyze,
		"sslscan":            SSLScan,
		"ssh-audit":          SSHAudit,
		"nessus":             Nessus,
		"openvas":            OpenVAS,
		"nexpose":            Nexpose,
		"qualys":             Qualys,
		"pcap":               Pcap,
	}
}

func (o Options) source(def string) string {
	if o.Source != "" {
		return o.Source
	}
	return def
}

func (o Options) conf(def float64) float64 {
	if o.Confidence > 0 {
		return o.Confidence
	}
	return def
}

func (o Options) maxLine() int {
	if o.MaxLineBytes <= 0 {
		return DefaultMaxLineBytes
	}
	return o.MaxLineBytes
}

// nonBlankLines is lines for formats where a blank line means nothing
// (JSON lines): fn gets each line with its surrounding white space
// trimmed, and blank lines are passed over.
func (o Options) nonBlankLines(r io.Reader, what string, bad func(LineError), fn func(n int, line []byte) error) error {
	return o.lines(r, what, bad, func(n int, b []byte) error {
		line := bytes.TrimSpace(b)
		if len(line) == 0 {
			return nil
		}
		return fn(n, line)
	})
}

// lines calls fn with each line of r (without its line ending) and its
// number. A line longer than MaxLineBytes is reported through bad with its
// number and skipped; the lines after it are still read. The returned error
// is fn's, or a read error of r ("read WHAT: ...").
func (o Options) lines(r io.Reader, what string, bad func(LineError), fn func(n int, line []byte) error) error {
	max := o.maxLine()
	br := bufio.NewReaderSize(r, 64*1024)
	var buf []byte
	for n := 1; ; n++ {
		buf = buf[:0]
		tooLong := false
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			if !tooLong {
				// +2 leaves room for the line ending before judging the length.
				if len(buf)+len(frag) > max+2 {
					tooLong, buf = true, buf[:0]
				} else {
					buf = append(buf, frag...)
				}
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read %s: %w", what, err)
		}
		line := bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte{'\n'}), []byte{'\r'})
		switch {
		case tooLong || len(line) > max:
			bad(LineError{n, fmt.Errorf("line longer than %d bytes (ingest.max_line_bytes)", max)})
		case err == nil || len(line) > 0:
			if ferr := fn(n, line); ferr != nil {
				return ferr
			}
		}
		if err != nil {
			return nil // io.EOF
		}
	}
}

// emitBuilt is emitChecked for an observation a record was turned into,
// or the error that kept it from being one (reported, and reading goes on).
func emitBuilt(line int, o Observation, err error, emit Emit, bad func(LineError)) error {
	if err != nil {
		bad(LineError{Line: line, Err: err})
		return nil
	}
	return emitChecked(line, o, emit, bad)
}

// emitChecked normalizes o and emits it, or reports it as bad.
func emitChecked(line int, o Observation, emit Emit, bad func(LineError)) error {
	if err := o.Normalize(); err != nil {
		bad(LineError{Line: line, Err: err})
		return nil
	}
	return emit(line, o)
}

// TorExits reads the Tor exit-addresses format: blocks of ExitNode,
// Published, LastStatus and one or more ExitAddress lines. Each ExitAddress
// becomes a tor_exit signal observed at the address's own test time. The
// bulk exit list (one address a line) is read too, each address a
// tor_exit signal observed when the list was read.
func TorExits(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("tor-exits")
	var node string
	return opt.lines(r, "tor exits", bad, func(n int, b []byte) error {
		line := strings.TrimSpace(string(b))
		if line == "" || strings.HasPrefix(line, "#") {
			return nil
		}
		f := strings.Fields(line)
		switch f[0] {
		case "ExitNode":
			if len(f) != 2 || len(f[1]) != 40 {
				bad(LineError{n, errors.New("ExitNode: want a 40-hex-digit fingerprint")})
				node = ""
				return nil
			}
			node = f[1]
		case "Published", "LastStatus":
		case "ExitAddress":
			if node == "" {
				bad(LineError{n, errors.New("ExitAddress outside an ExitNode block")})
				return nil
			}
			if len(f) != 4 {
				bad(LineError{n, errors.New("ExitAddress: want ADDRESS DATE TIME")})
				return nil
			}
			t, err := time.Parse("2006-01-02 15:04:05", f[2]+" "+f[3])
			if err != nil {
				bad(LineError{n, fmt.Errorf("ExitAddress: bad time %q", f[2]+" "+f[3])})
				return nil
			}
			o := Observation{Type: TypeSignal, IP: f[1], Source: src, ObservedAt: ipmodel.FormatTime(t),
				Signal: &Signal{Kind: "tor_exit", Provider: "Tor", Confidence: opt.conf(0.99), Ref: node}}
			if err := emitChecked(n, o, emit, bad); err != nil {
				return err
			}
		default:
			// The bulk exit list (check.torproject.org/torbulkexitlist):
			// one address a line, observed when the list was fetched.
			if a, err := netip.ParseAddr(f[0]); err == nil && len(f) == 1 {
				o := Observation{Type: TypeSignal, IP: a.String(), Source: src, ObservedAt: opt.observedAt(),
					Signal: &Signal{Kind: "tor_exit", Provider: "Tor", Confidence: opt.conf(0.99)}}
				return emitChecked(n, o, emit, bad)
			}
			bad(LineError{n, fmt.Errorf("unknown keyword %q (want an exit-addresses block or one address a line)", f[0])})
		}
		return nil
	})
}

// maxJSONFeed bounds a JSON feed read whole into memory (readJSONFeed; AWS's ranges are ~2 MB).
const maxJSONFeed = 256 << 20

// jsonRanges decodes a JSON object whose named array members hold one
// prefix object each, calling each(line, raw) per element.
func jsonRanges(r io.Reader, arrays []string, header func(key string, raw json.RawMessage) error, each func(line int, raw json.RawMessage), what string) error {
	data, err := readJSONFeed(r, what)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	lineAt := lineCounter(data, 1)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("parse %s: not a JSON object", what)
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return fmt.Errorf("parse %s: %w", what, err)
		}
		key, _ := kt.(string)
		isArray := false
		for _, a := range arrays {
			isArray = isArray || a == key
		}
		if !isArray {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fmt.Errorf("parse %s: %s: %w", what, key, err)
			}
			if err := header(key, raw); err != nil {
				return err
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return fmt.Errorf("parse %s: %s: not an array", what, key)
		}
		for dec.More() {
			var raw json.RawMessage
			// Skip whitespace so the offset points at the element itself.
			start := dec.InputOffset()
			for start < int64(len(data)) && strings.ContainsRune(" \t\r\n,", rune(data[start])) {
				start++
			}
			if err := dec.Decode(&raw); err != nil {
				return fmt.Errorf("parse %s: line %d: %w", what, lineAt(start), err)
			}
			each(lineAt(start), raw)
		}
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("parse %s: %w", what, err)
		}
	}
	return nil
}

// AWSRanges reads AWS ip-ranges.json. CLOUDFRONT prefixes are cdn, every
// other service hosting; observed_at is the file's createDate.
func AWSRanges(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("aws-ranges")
	var created time.Time
	var emitErr error
	err := jsonRanges(r, []string{"prefixes", "ipv6_prefixes"}, func(key string, raw json.RawMessage) error {
		if key != "createDate" {
			return nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("parse aws ranges: createDate: %w", err)
		}
		t, err := time.Parse("2006-01-02-15-04-05", s)
		if err != nil {
			return fmt.Errorf("parse aws ranges: createDate %q: %w", s, err)
		}
		created = t
		return nil
	}, func(line int, raw json.RawMessage) {
		if emitErr != nil {
			return
		}
		var p struct {
			IPPrefix   string `json:"ip_prefix"`
			IPv6Prefix string `json:"ipv6_prefix"`
			Region     string `json:"region"`
			Service    string `json:"service"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			bad(LineError{line, fmt.Errorf("prefix: %w", err)})
			return
		}
		if created.IsZero() {
			bad(LineError{line, errors.New("prefix before createDate")})
			return
		}
		kind := "hosting"
		if p.Service == "CLOUDFRONT" || p.Service == "CLOUDFRONT_ORIGIN_FACING" {
			kind = "cdn"
		}
		o := Observation{Type: TypeRange, Network: p.IPPrefix + p.IPv6Prefix, Source: src, ObservedAt: ipmodel.FormatTime(created),
			Range:  &Range{Kind: kind, Provider: "Amazon Web Services", Region: p.Region, Service: p.Service, Confidence: opt.conf(0.95)},
			Claims: []Claim{{OrgName: "Amazon.com, Inc.", SignalConfidence: opt.conf(0.95)}}}
		emitErr = emitChecked(line, o, emit, bad)
	}, "aws ranges")
	return errors.Join(err, emitErr)
}

// jsonTime reads a feed's time stamp member: a JSON string in RFC 3339,
// or without a zone (UTC), as Google's and Oracle's files write it.
func jsonTime(raw json.RawMessage, what, key string) (time.Time, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}, fmt.Errorf("parse %s: %s: %w", what, key, err)
	}
	t, err := time.Parse("2006-01-02T15:04:05.999999999", s)
	if err != nil {
		if t, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return time.Time{}, fmt.Errorf("parse %s: %s %q: %w", what, key, s, err)
		}
	}
	return t, nil
}

// timedRanges is jsonRanges over the one array member of a feed whose
// time stamp member timeKey (read into *at before the array, as the
// feeds order them) is all its header says.
func timedRanges(r io.Reader, array, timeKey, what string, at *time.Time, each func(line int, raw json.RawMessage)) error {
	return jsonRanges(r, []string{array}, func(key string, raw json.RawMessage) (err error) {
		if key == timeKey {
			*at, err = jsonTime(raw, what, key)
		}
		return err
	}, each, what)
}

// GCPRanges reads Google Cloud's cloud.json; observed_at is its creationTime.
func GCPRanges(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("gcp-ranges")
	var created time.Time
	var emitErr error
	err := timedRanges(r, "prefixes", "creationTime", "gcp ranges", &created, func(line int, raw json.RawMessage) {
		if emitErr != nil {
			return
		}
		var p struct {
			IPv4Prefix string `json:"ipv4Prefix"`
			IPv6Prefix string `json:"ipv6Prefix"`
			Service    string `json:"service"`
			Scope      string `json:"scope"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			bad(LineError{line, fmt.Errorf("prefix: %w", err)})
			return
		}
		if created.IsZero() {
			bad(LineError{line, errors.New("prefix before creationTime")})
			return
		}
		o := Observation{Type: TypeRange, Network: p.IPv4Prefix + p.IPv6Prefix, Source: src, ObservedAt: ipmodel.FormatTime(created),
			Range:  &Range{Kind: "hosting", Provider: "Google Cloud", Region: p.Scope, Service: p.Service, Confidence: opt.conf(0.95)},
			Claims: []Claim{{OrgName: "Google LLC", SignalConfidence: opt.conf(0.95)}}}
		emitErr = emitChecked(line, o, emit, bad)
	})
	return errors.Join(err, emitErr)
}

// signalKindOf maps a cidr-list kind to the signal kind of a single address.
var signalKindOf = map[string]string{
	"vpn": "vpn_exit", "proxy": "open_proxy", "tor": "tor_exit", "relay": "private_relay",
	"residential_proxy": "residential_proxy", "hosting": "hosting", "cdn": "cdn",
}

// NDJSON reads observations in our own format, one JSON object per line,
// in the shapes docs/observation.md lists; or as JSON documents: an array
// of observations, or objects printed over several lines, and the
// accuracy harness's capture files, whose observation is read. A member the format does not
// know does not lose the record: the record goes in without it and the
// member is reported, by its path, through opt.Warn (a typo is named, not
// silently dropped).
func NDJSON(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	br := bufio.NewReaderSize(r, 64*1024)
	if ok, err := eachJSONDocument(br, "observations", bad, func(n int, v []byte) error {
		return readObservationJSON(n, v, true, opt, emit, bad)
	}); ok {
		return err
	}
	return opt.lines(br, "observations", bad, func(n int, b []byte) error {
		line := bytes.TrimSpace(b)
		if len(line) == 0 || line[0] == '#' {
			return nil
		}
		return readObservationJSON(n, line, false, opt, emit, bad)
	})
}

// jsonDocuments tells observations written as JSON documents (an array,
// or objects printed over several lines, as the accuracy harness's
// capture files are) from JSON lines: the first line is not a whole JSON
// value.
func jsonDocuments(br *bufio.Reader) bool {
	head, _ := br.Peek(64 * 1024)
	head = bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("\ufeff")), " \t\r\n")
	if len(head) == 0 || (head[0] != '[' && head[0] != '{') {
		return false
	}
	first, _, _ := bytes.Cut(head, []byte{'\n'})
	return head[0] == '[' || !json.Valid(bytes.TrimSpace(first))
}

// eachJSONDocument calls each with every record of br when it holds JSON
// documents (jsonDocuments: an array, objects over several lines) rather
// than JSON lines, and says whether it did; a reader of lines reads br
// when it did not.
func eachJSONDocument(br *bufio.Reader, what string, bad func(LineError), each func(n int, v []byte) error) (bool, error) {
	if !jsonDocuments(br) {
		return false, nil
	}
	data, err := readJSONFeed(br, what)
	if err != nil {
		return true, err
	}
	return true, jsonValues(data, bad, func(n int, v json.RawMessage, _ bool) error { return each(n, v) })
}

// readObservationJSON reads one observation, or the observation of a capture
// of the accuracy harness ({"provenance", "expect", "observation"}: the
// rest of the capture is the harness's, not the observation's).
func readObservationJSON(n int, b []byte, captures bool, opt Options, emit Emit, bad func(LineError)) error {
	if captures {
		var c struct {
			Observation json.RawMessage `json:"observation"`
		}
		if json.Unmarshal(b, &c) == nil && len(c.Observation) > 0 {
			b = c.Observation
		}
	}
	var o Observation
	dropped, err := DecodeKeepingKnown(b, &o)
	if err != nil {
		fixed, ok := repairObservation(b)
		if !ok {
			bad(LineError{n, err})
			return nil
		}
		if dropped, err = DecodeKeepingKnown(fixed, &o); err != nil {
			bad(LineError{n, err}) // what is wrong beside what was read
			return nil
		}
	}
	if len(dropped) > 0 {
		opt.warn(n, UnknownMembersWarning(dropped))
	}
	if o.Source == "" {
		o.Source = opt.source("observations")
	}
	return emitChecked(n, o, emit, bad)
}
