package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// jsonArray decodes a top-level JSON array, calling each(line, raw) per
// element with the line the element starts on.
func jsonArray(r io.Reader, what string, each func(line int, raw json.RawMessage) error) error {
	data, err := readJSONFeed(r, what)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return fmt.Errorf("parse %s: not a JSON array", what)
	}
	lineAt := lineCounter(data, 1)
	for dec.More() {
		start := dec.InputOffset()
		for start < int64(len(data)) && strings.ContainsRune(" \t\r\n,", rune(data[start])) {
			start++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("parse %s: line %d: %w", what, lineAt(start), err)
		}
		if err := each(lineAt(start), raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("parse %s: %w", what, err)
	}
	return nil
}

// MullvadRelays reads Mullvad's relay list (api.mullvad.net/www/relays/all/:
// an array of relays with hostname, fqdn, type, active, provider,
// ipv4_addr_in, ipv6_addr_in, country_code, city_name). Each wireguard or
// openvpn relay gives a vpn_exit signal of Mullvad VPN for its IPv4 and
// for its IPv6 address, with the relay's host name kept in signal.ref
// (the fqdn, e.g. se-got-wg-001.relays.mullvad.net, else the hostname)
// and its type as protocol_family. Inactive relays are included (the
// address is still Mullvad's); bridge relays are skipped: they are entry
// points that forward to a relay, not exits. The list carries no time:
// observed_at is opt.ObservedAt.
func MullvadRelays(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("mullvad-relays")
	when := opt.observedAt()
	conf := opt.conf(0.95)
	return jsonArray(r, "mullvad relays", func(line int, raw json.RawMessage) error {
		var rel struct {
			Hostname string  `json:"hostname"`
			FQDN     string  `json:"fqdn"`
			Type     string  `json:"type"`
			IPv4     string  `json:"ipv4_addr_in"`
			IPv6     *string `json:"ipv6_addr_in"`
		}
		if err := json.Unmarshal(raw, &rel); err != nil {
			bad(LineError{line, fmt.Errorf("relay: %w", err)})
			return nil
		}
		ref := rel.FQDN
		if ref == "" {
			ref = rel.Hostname
		}
		if ref == "" {
			bad(LineError{line, fmt.Errorf("relay without a hostname")})
			return nil
		}
		switch rel.Type {
		case "bridge":
			return nil
		case "wireguard", "openvpn":
		default:
			bad(LineError{line, fmt.Errorf("relay %s: unknown type %q", ref, rel.Type)})
			return nil
		}
		addrs := []string{rel.IPv4}
		if rel.IPv6 != nil && *rel.IPv6 != "" {
			addrs = append(addrs, *rel.IPv6)
		}
		for _, a := range addrs {
			o := Observation{Type: TypeSignal, IP: a, Source: src, ObservedAt: when,
				Signal: &Signal{Kind: "vpn_exit", Provider: "Mullvad VPN", Confidence: conf, Ref: ref, ProtocolFamily: rel.Type}}
			if err := emitChecked(line, o, emit, bad); err != nil {
				return err
			}
		}
		return nil
	})
}
