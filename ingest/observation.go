// Package ingest turns feeds and files into observations on the
// OBSERVATIONS JetStream stream: one adapter per public feed format, one
// NDJSON format of our own, and a publisher that gives every observation a
// message id so the same observation sent twice is stored once.
package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/ipmodel"
)

// Version is the observation format version this code writes
// (docs/observation.schema.json, docs/observation.md). Version 1 is still
// read: Normalize turns its http, tls and banner members into probes.
const Version = 2

// Observation types.
const (
	TypeService = "service" // a service seen on a port, with fingerprint evidence
	TypeSignal  = "signal"  // an anonymity signal about one address
	TypeRange   = "range"   // a network range with its hosting/CDN/VPN provider
	TypeFlow    = "flow"    // a protocol seen on a port in flow records (NetFlow)
)

// Signal kinds of a TypeSignal observation.
var SignalKinds = []string{"vpn_exit", "open_proxy", "tor_exit", "tor_relay", "residential_proxy", "private_relay", "hosting", "cdn"}

// RangeKinds are the classifications a range may claim.
var RangeKinds = []string{"vpn", "proxy", "tor", "relay", "hosting", "cdn", "residential_proxy"}

// Observation is one thing the pipeline learned about an address or range.
type Observation struct {
	// V is the format version (2; 1 is read and upgraded).
	V    int    `json:"v"`
	Type string `json:"type"`
	// IP is the address (service, signal, flow).
	IP string `json:"ip,omitempty"`
	// Network is the CIDR (range).
	Network string `json:"network,omitempty"`
	// Source names the feed or sensor (lower case letters, digits, - _ .).
	Source string `json:"source"`
	// ObservedAt is RFC 3339; stored in UTC with second precision.
	ObservedAt string `json:"observed_at"`
	// ListedAt (RFC 3339, optional) is when the feed that carries the
	// observation was fetched or read: a list feed states at that time
	// that the entry holds, whatever its own observed_at says. The enrich
	// state counts an entry as seen at the later of the two, so a feed
	// that keeps listing an entry keeps it from ageing out; and since it
	// is part of the message id, every fetch of an unchanged feed is
	// stored, while a retry of one fetch is not.
	ListedAt string `json:"listed_at,omitempty"`
	// Class (optional) is the data class the source declares for
	// everything it brings (ipmodel.DataClasses; absent = standard). The
	// enrich state keeps the more restricted of it and the class the
	// observation's content implies (DataClass).
	Class string `json:"class,omitempty"`
	// Claims are optional attribution claims.
	Claims []Claim `json:"claims,omitempty"`
	// Hostnames are the names the source knew the address by (a scan's
	// target name or virtual host, Shodan's hostnames and domains, nmap's
	// hostnames): lower case, at most MaxHostnames.
	Hostnames []string `json:"hostnames,omitempty"`
	Service   *Service `json:"service,omitempty"`
	Signal    *Signal  `json:"signal,omitempty"`
	Range     *Range   `json:"range,omitempty"`
	Flow      *Flow    `json:"flow,omitempty"`
}

// Claim is an attribution claim: who operates the address, per whom.
type Claim struct {
	OrgName          string  `json:"org_name"`
	SignalSource     string  `json:"signal_source,omitempty"`
	SignalConfidence float64 `json:"signal_confidence"`
	// ASN is the autonomous system the source says announces the address,
	// where it says one (Shodan's asn).
	ASN int64 `json:"asn,omitempty"`
}

// MaxHostnames is the most host names an observation keeps.
const MaxHostnames = 64

// Service is a service seen on a port with the evidence to fingerprint it.
type Service struct {
	Port int `json:"port"`
	// Transport is tcp or udp.
	Transport string `json:"transport"`
	// ProtocolFamily is the scanner's own guess; a matching rule overrides it.
	ProtocolFamily string `json:"protocol_family,omitempty"`
	// Probes are what each request or packet to the service showed (v2).
	Probes []Probe `json:"probes,omitempty"`
	// Detected is the scanner's own identification, if it made one.
	Detected *Detected `json:"detected,omitempty"`

	// HTTP, TLS and Banner are version 1's evidence; Normalize turns them
	// into Probes and clears them.
	HTTP   *HTTPEvidence `json:"http,omitempty"`
	TLS    *TLSEvidence  `json:"tls,omitempty"`
	Banner string        `json:"banner,omitempty"`
}

// HTTPEvidence is what an HTTP(S) request to the service showed (version 1).
type HTTPEvidence struct {
	Status  int               `json:"status,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Cookies are the names of cookies the service set.
	Cookies []string `json:"cookies,omitempty"`
	Title   string   `json:"title,omitempty"`
	// Bodies maps a known path to a snippet of its response body.
	Bodies map[string]string `json:"bodies,omitempty"`
	// FaviconHash is the MurmurHash3 of the base64 favicon (Shodan style), as a decimal string.
	FaviconHash string `json:"favicon_hash,omitempty"`
}

// TLSEvidence is the service's certificate (version 1).
type TLSEvidence struct {
	Subject string `json:"subject,omitempty"`
	Issuer  string `json:"issuer,omitempty"`
	Serial  string `json:"serial,omitempty"`
}

// Signal is an anonymity signal about an address.
type Signal struct {
	// Kind is one of SignalKinds.
	Kind     string `json:"kind"`
	Provider string `json:"provider,omitempty"`
	// Confidence (0..1) of the signal; 0 = the source's default.
	Confidence float64 `json:"confidence,omitempty"`
	// Ref is the feed's own identifier (e.g. a Tor relay fingerprint).
	Ref string `json:"ref,omitempty"`
	// Port and ProtocolFamily, when the signal concerns one service (e.g. an open proxy port).
	Port           int    `json:"port,omitempty"`
	ProtocolFamily string `json:"protocol_family,omitempty"`
}

// Range is a network range with the provider that operates it.
type Range struct {
	// Kind is one of RangeKinds.
	Kind     string `json:"kind"`
	Provider string `json:"provider,omitempty"`
	// Region is a cloud's region (eastus, us-phoenix-1) or, from a
	// geofeed or the Private Relay list, an ISO 3166-2 code (US-TX).
	Region  string `json:"region,omitempty"`
	Service string `json:"service,omitempty"`
	// Country (ISO 3166-1 alpha-2) and City are where the range is used,
	// as a geofeed (RFC 8805) or the Private Relay list states it.
	Country    string  `json:"country,omitempty"`
	City       string  `json:"city,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
}

// Flow is a protocol attribution from flow records.
type Flow struct {
	Port      int    `json:"port"`
	Transport string `json:"transport"`
	// Protocol is wireguard, openvpn, ipsec, ikev2, l2tp, pptp, sstp, ssh or tor.
	Protocol string `json:"protocol"`
	Packets  int64  `json:"packets,omitempty"`
	Bytes    int64  `json:"bytes,omitempty"`
	// IPProtocol is the IP protocol number when it is not TCP or UDP
	// (50 for ESP, 47 for GRE); Transport is then the one the port is
	// filed under.
	IPProtocol int `json:"ip_protocol,omitempty"`
	// Basis says how Protocol was known: "label" (the source named it),
	// or what it was inferred from: "ip_protocol", "port", "size" (packet
	// sizes of the protocol's handshake), "port+size". Empty means label.
	Basis string `json:"basis,omitempty"`
	// Confidence (0..1) of the protocol; 0 = the basis's default.
	Confidence float64 `json:"confidence,omitempty"`
}

// FlowBases are the values Flow.Basis may take.
var FlowBases = []string{"label", "ip_protocol", "port", "size", "port+size"}

// ProtocolConfidence is how sure the flow is of its Protocol: its
// Confidence, else the default of its basis (the inference's: ip_protocol
// 0.9, port+size 0.85, size 0.7, port 0.5), and 1 for a protocol the
// source named (basis label or empty).
func (f *Flow) ProtocolConfidence() float64 {
	if f.Confidence > 0 {
		return f.Confidence
	}
	switch f.Basis {
	case "ip_protocol":
		return confIPProtocol
	case "port+size":
		return confPortSize
	case "size":
		return confSize
	case "port":
		return confPort
	}
	return 1
}

// FlowProtocols are the protocols a flow may name.
var FlowProtocols = []string{"wireguard", "openvpn", "ipsec", "ikev2", "l2tp", "pptp", "sstp", "ssh", "tor"}

// Normalize checks o and rewrites it canonically: addresses and networks
// in their canonical form, observed_at in UTC seconds, version set. The
// error names the first bad field.
func (o *Observation) Normalize() error {
	if err := o.normalizeHeader(); err != nil {
		return err
	}
	if err := o.normalizeClaims(); err != nil {
		return err
	}
	o.Hostnames = normalizeHostnames(o.Hostnames)
	n := 0
	for _, set := range []bool{o.Service != nil, o.Signal != nil, o.Range != nil, o.Flow != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("type: exactly one of service, signal, range, flow must be set")
	}
	if o.Type == "" {
		// Left out: the one payload says it.
		switch {
		case o.Service != nil:
			o.Type = TypeService
		case o.Signal != nil:
			o.Type = TypeSignal
		case o.Range != nil:
			o.Type = TypeRange
		default:
			o.Type = TypeFlow
		}
	}
	if o.Type == TypeRange {
		return o.normalizeRange()
	}
	a, err := netip.ParseAddr(o.IP)
	if err != nil {
		return fmt.Errorf("ip: not an IP address: %q", o.IP)
	}
	o.IP = a.Unmap().WithZone("").String()
	o.Network = ""
	switch o.Type {
	case TypeService:
		return o.normalizeService()
	case TypeSignal:
		return o.normalizeSignal()
	case TypeFlow:
		return o.normalizeFlow()
	}
	return fmt.Errorf("type: must be service, signal, range or flow, got %q", o.Type)
}

// normalizeHeader checks what every observation carries: the version
// (1 is upgraded), the source, the times and the data class.
func (o *Observation) normalizeHeader() error {
	if o.V == 0 {
		o.V = Version
	}
	if o.V != 1 && o.V != Version {
		return fmt.Errorf("v: unsupported version %d (want 1 or %d)", o.V, Version)
	}
	o.V = Version
	if o.Source == "" || !validSource(o.Source) {
		return fmt.Errorf("source: must be 1..64 of a-z 0-9 - _ . :, got %q", o.Source)
	}
	t, err := parseObsTime(o.ObservedAt)
	if err != nil {
		return fmt.Errorf("observed_at: not RFC 3339: %q", o.ObservedAt)
	}
	if !canonicalTime(o.ObservedAt) {
		o.ObservedAt = ipmodel.FormatTime(t)
	}
	if o.ListedAt != "" && !canonicalTime(o.ListedAt) {
		lt, err := parseObsTime(o.ListedAt)
		if err != nil {
			return fmt.Errorf("listed_at: not RFC 3339: %q", o.ListedAt)
		}
		o.ListedAt = ipmodel.FormatTime(lt)
	}
	switch o.Class {
	case "", ipmodel.DataResidential, ipmodel.DataNetflow:
	case ipmodel.DataStandard:
		o.Class = "" // the default: one message id for one content
	default:
		return fmt.Errorf("class: must be one of %s, got %q", strings.Join(ipmodel.DataClasses, ", "), o.Class)
	}
	return nil
}

// parseObsTime reads an RFC 3339 time, or a bare RFC 3339 date
// (2026-11-20), which is midnight UTC of that day: sources that give only
// a day are written so.
//
// Also read, as people and tools write times: a space for the T
// ("2026-11-20 10:00:00Z", as SQL and many logs print them), and a date
// and time without a zone, which is UTC.
func parseObsTime(s string) (time.Time, error) {
	if len(s) == len(time.DateOnly) {
		return time.Parse(time.DateOnly, s)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err == nil || len(s) < len(time.DateTime) || (s[10] != ' ' && s[10] != 'T') {
		return t, err
	}
	u := s[:10] + "T" + s[11:]
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, e := time.Parse(layout, u); e == nil {
			return t.UTC(), nil
		}
	}
	return t, err
}

// normalizeClaims checks each ownership claim; a claim without its own
// signal source takes the observation's.
func (o *Observation) normalizeClaims() error {
	for i := range o.Claims {
		c := &o.Claims[i]
		if strings.TrimSpace(c.OrgName) == "" {
			return fmt.Errorf("claims[%d].org_name: required", i)
		}
		if c.SignalSource == "" {
			c.SignalSource = o.Source
		}
		if c.SignalConfidence < 0 || c.SignalConfidence > 1 {
			return fmt.Errorf("claims[%d].signal_confidence: must be 0..1, got %g", i, c.SignalConfidence)
		}
		if c.ASN < 0 || c.ASN > 1<<32-1 {
			return fmt.Errorf("claims[%d].asn: must be 0..4294967295, got %d", i, c.ASN)
		}
	}
	return nil
}

// normalizeRange checks a range observation; its network is masked.
func (o *Observation) normalizeRange() error {
	if o.Range == nil {
		return fmt.Errorf("range: required for type range")
	}
	p, err := netip.ParsePrefix(o.Network)
	if err != nil {
		return fmt.Errorf("network: not a CIDR: %q", o.Network)
	}
	o.Network = p.Masked().String()
	o.IP = ""
	if !slices.Contains(RangeKinds, o.Range.Kind) {
		return fmt.Errorf("range.kind: must be one of %s, got %q", strings.Join(RangeKinds, ", "), o.Range.Kind)
	}
	if o.Range.Country != "" && !isAlpha2(o.Range.Country) {
		return fmt.Errorf("range.country: must be an ISO 3166-1 alpha-2 code (2 capital letters), got %q", o.Range.Country)
	}
	return checkConf("range.confidence", o.Range.Confidence)
}

// normalizeService checks a service observation and brings its evidence
// to format 2 (probes).
func (o *Observation) normalizeService() error {
	if o.Service == nil {
		return fmt.Errorf("service: required for type service")
	}
	if err := checkPort("service.port", o.Service.Port, true); err != nil {
		return err
	}
	if o.Service.Transport == "" {
		o.Service.Transport = o.Service.impliedTransport()
	}
	if err := checkTransport("service.transport", &o.Service.Transport); err != nil {
		return err
	}
	o.Service.upgradeV1()
	o.Service.nmapFromBanners()
	o.Service.tlsFromBanners()
	return o.Service.normalizeProbes()
}

// impliedTransport is the transport of a service whose observation left
// it out, where its evidence or port says it: HTTP and TLS run over TCP;
// SNMP, IKE, NTP and WireGuard's ports are UDP; any other port with a
// banner is TCP, except those served over both (DNS's 53, OpenVPN's 1194),
// which stay unknown and are refused naming the field.
func (s *Service) impliedTransport() string {
	switch {
	case s.overTCP():
		return "tcp"
	case udpOnlyPorts[s.Port]:
		return "udp"
	case s.Port == 53 || s.Port == 1194:
		return ""
	}
	return "tcp"
}

// udpOnlyPorts are the well-known ports of the families' UDP protocols.
var udpOnlyPorts = map[int]bool{123: true, 161: true, 162: true, 500: true, 4500: true, 51820: true}

// overTCP reports whether the service's evidence is of a TCP service: an
// HTTP exchange or a TLS handshake (v1's or a probe's).
func (s *Service) overTCP() bool {
	if s.HTTP != nil || s.TLS != nil {
		return true
	}
	for _, p := range s.Probes {
		if p.Request != nil || p.Response != nil || p.TLS != nil {
			return true
		}
	}
	return false
}

// normalizeSignal checks a signal observation.
func (o *Observation) normalizeSignal() error {
	if o.Signal == nil {
		return fmt.Errorf("signal: required for type signal")
	}
	if !slices.Contains(SignalKinds, o.Signal.Kind) {
		return fmt.Errorf("signal.kind: must be one of %s, got %q", strings.Join(SignalKinds, ", "), o.Signal.Kind)
	}
	if err := checkPort("signal.port", o.Signal.Port, false); err != nil {
		return err
	}
	return checkConf("signal.confidence", o.Signal.Confidence)
}

// normalizeFlow checks a flow observation; "label", the default basis,
// is stored as empty.
func (o *Observation) normalizeFlow() error {
	if o.Flow == nil {
		return fmt.Errorf("flow: required for type flow")
	}
	if err := checkPort("flow.port", o.Flow.Port, true); err != nil {
		return err
	}
	if err := checkTransport("flow.transport", &o.Flow.Transport); err != nil {
		return err
	}
	o.Flow.Protocol = strings.ToLower(o.Flow.Protocol)
	if !slices.Contains(FlowProtocols, o.Flow.Protocol) {
		return fmt.Errorf("flow.protocol: must be one of %s, got %q", strings.Join(FlowProtocols, ", "), o.Flow.Protocol)
	}
	if o.Flow.Basis == "label" {
		o.Flow.Basis = ""
	}
	if o.Flow.Basis != "" && !slices.Contains(FlowBases, o.Flow.Basis) {
		return fmt.Errorf("flow.basis: must be one of %s, got %q", strings.Join(FlowBases, ", "), o.Flow.Basis)
	}
	if o.Flow.IPProtocol < 0 || o.Flow.IPProtocol > 255 {
		return fmt.Errorf("flow.ip_protocol: must be 0..255, got %d", o.Flow.IPProtocol)
	}
	return checkConf("flow.confidence", o.Flow.Confidence)
}

// normalizeHostnames lower-cases and trims the names, drops empty ones and
// repeats, and keeps at most MaxHostnames, each cut at MaxFieldBytes.
func normalizeHostnames(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	out := names[:0]
	for _, n := range names {
		n = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(n)), ".")
		cutField(&n)
		if n == "" || slices.Contains(out, n) {
			continue
		}
		if out = append(out, n); len(out) == MaxHostnames {
			break
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// canonicalTime reports whether s, which parses as RFC 3339, is already
// in ipmodel.TimeFormat (UTC, whole seconds), as the publisher writes it,
// so that formatting it again would give s.
func canonicalTime(s string) bool {
	return len(s) == len(ipmodel.TimeFormat) && s[10] == 'T' && s[len(s)-1] == 'Z'
}

func checkPort(field string, p int, required bool) error {
	if p < 0 || p > 65535 || (required && p == 0) {
		return fmt.Errorf("%s: must be 1..65535, got %d", field, p)
	}
	return nil
}

func checkTransport(field string, t *string) error {
	*t = strings.ToLower(*t)
	if *t != "tcp" && *t != "udp" {
		return fmt.Errorf("%s: must be tcp or udp, got %q", field, *t)
	}
	return nil
}

func checkConf(field string, c float64) error {
	if c < 0 || c > 1 {
		return fmt.Errorf("%s: must be 0..1, got %g", field, c)
	}
	return nil
}

func validSource(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == ':') {
			return false
		}
	}
	return true
}

// DataClass is the data class of what the observation says: netflow for
// a flow record, residential for a residential-proxy signal or range,
// else standard; or the class its source declares (Class) when that is
// more restricted. It follows the content, never the source's name.
func (o *Observation) DataClass() string {
	c := ipmodel.DataStandard
	switch {
	case o.Type == TypeFlow:
		c = ipmodel.DataNetflow
	case o.Signal != nil && o.Signal.Kind == "residential_proxy", o.Range != nil && o.Range.Kind == "residential_proxy":
		c = ipmodel.DataResidential
	}
	return ipmodel.MoreRestricted(c, o.Class)
}

// SeenAt is when the observation counts as seen: the later of
// observed_at and listed_at (both canonical after Normalize, so the
// strings compare as times).
func (o *Observation) SeenAt() string {
	if o.ListedAt > o.ObservedAt {
		return o.ListedAt
	}
	return o.ObservedAt
}

// Key is the state key the observation updates: the address, or the range.
func (o *Observation) Key() string {
	if o.Type == TypeRange {
		return o.Network
	}
	return o.IP
}

// Encode returns the canonical JSON of a normalized observation and its
// message id: a hash of that JSON, so the same source, content and time
// give the same id.
//
// HTML's <, > and & are written as they are, not as \u003c and the like:
// evidence is mostly HTML, and every escape costs the worker's decoder
// (DecodeCanonical) an unescaping copy.
func (o *Observation) Encode() (data []byte, id string, err error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		return nil, "", fmt.Errorf("encode observation: %w", err)
	}
	data = bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:16]), nil
}

// subjectToken makes a source name one subject token.
var subjectToken = strings.NewReplacer(".", "_", ":", "_")

// Subject is the stream subject of o: obs.<type>.<source>.<partition>.
func (o *Observation) Subject() string {
	return "obs." + o.Type + "." + subjectToken.Replace(o.Source) + "." + config.PartitionToken(o.Partition())
}

// Partition is the partition of o's address or range, 0 to
// config.ObservationPartitions-1: FNV-1a of the normalized address or
// CIDR, so every observation of one address (or range) has the same one.
func (o *Observation) Partition() int {
	key := o.IP
	if o.Type == TypeRange {
		key = o.Network
	}
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % config.ObservationPartitions)
}
