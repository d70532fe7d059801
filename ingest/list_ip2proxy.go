package ingest

import (
	"encoding/csv"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
)

// ip2proxyKinds maps IP2Proxy's proxy_type to a classification: VPN
// (anonymizing VPN services), TOR (Tor exits), PUB and WEB (public and
// web proxies), RES (residential proxies), DCH (hosting, data centres),
// CPN and EPN (consumer and enterprise privacy networks: many users
// behind a shared egress, as iCloud Private Relay). SES (search-engine
// robots) is no classification of ours and is skipped.
var ip2proxyKinds = map[string]string{
	"VPN": "vpn", "TOR": "tor", "PUB": "proxy", "WEB": "proxy", "RES": "residential_proxy",
	"DCH": "hosting", "CPN": "relay", "EPN": "relay",
}

// ip2proxyLayouts are the PX1..PX12 rows' field counts (in the decimal
// `ip_from,ip_to` layout; the .cidr.csv layout has one fewer): 4 PX1
// (country only, no proxy type), 5 PX2 (+ proxy_type), 7 PX3 (+ region,
// city), 8 PX4 (+ isp), 9 PX5 (+ domain), 10 PX6 (+ usage_type), 12 PX7
// (+ asn, as), 13 PX8 (+ last_seen), 14 PX9 and PX10 (+ threat), 15 PX11
// (+ provider), 16 PX12 (+ fraud_score).
var ip2proxyLayouts = map[int]bool{4: true, 5: true, 7: true, 8: true, 9: true, 10: true, 12: true, 13: true, 14: true, 15: true, 16: true}

// IP2Proxy reads IP2Location's IP2Proxy CSV databases, LITE and
// commercial, PX1 to PX12, the IPv4 and IPv6 files in either layout:
// `"ip_from","ip_to",...` as decimal numbers (a range that is not one CIDR
// becomes the CIDRs that cover it) or the .cidr.csv files' `CIDR,...`.
// Each row is classified by its proxy type (ip2proxyKinds; PX1 rows carry
// none and take --kind); a single address becomes a signal, a wider range
// a range with its country and city. The provider is the row's VPN or
// proxy provider (PX11 and up), Tor for Tor exits, and the ISP for a
// hosting range (a DCH row whose usage type says CDN is a cdn range); a
// provider is also the row's claim. A row's last_seen (days before the
// database was built) moves its observed time back that many days from
// the file's time.
func IP2Proxy(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	if opt.Kind != "" && signalKindOf[opt.Kind] == "" {
		return fmt.Errorf("ip2proxy: --kind must be one of %s, got %q", strings.Join(RangeKinds, ", "), opt.Kind)
	}
	src := opt.source("ip2proxy")
	at := opt.ObservedAt
	if at.IsZero() {
		at = time.Now()
	}
	conf := opt.conf(0.8)
	return opt.lines(r, "ip2proxy", bad, func(n int, b []byte) error {
		line := strings.TrimSpace(string(b))
		if line == "" {
			return nil
		}
		cr := csv.NewReader(strings.NewReader(line))
		cr.FieldsPerRecord = -1
		f, err := cr.Read()
		if err != nil {
			bad(LineError{n, fmt.Errorf("CSV: %w", err)})
			return nil
		}
		var ps []netip.Prefix
		if p, perr := netip.ParsePrefix(f[0]); perr == nil {
			ps = []netip.Prefix{p.Masked()}
			f = append([]string{"", ""}, f[1:]...) // the decimal layout's indexes
		} else if len(f) >= 2 {
			if ps, err = decimalRange(f[0], f[1]); err != nil {
				bad(LineError{n, fmt.Errorf("ip_from/ip_to: %w", err)})
				return nil
			}
		}
		if !ip2proxyLayouts[len(f)] {
			bad(LineError{n, fmt.Errorf("%d fields: not an IP2Proxy PX1-PX12 row", len(f))})
			return nil
		}
		col := func(i int) string {
			if i < len(f) && f[i] != "-" {
				return strings.TrimSpace(f[i])
			}
			return ""
		}
		kind, country, city, isp, usage, provider := opt.Kind, "", "", "", "", ""
		if len(f) == 4 { // PX1
			country = col(2)
			if kind == "" {
				return fmt.Errorf("ip2proxy: line %d: a PX1 row carries no proxy type: give --kind", n)
			}
		} else {
			typ := strings.ToUpper(col(2))
			if typ == "SES" {
				if opt.Skipped != nil {
					opt.Skipped(n, "search-engine robot (SES)")
				}
				return nil
			}
			if kind = ip2proxyKinds[typ]; kind == "" {
				bad(LineError{n, fmt.Errorf("proxy_type: unknown %q", f[2])})
				return nil
			}
			country, city, isp, usage, provider = col(3), col(6), col(7), col(9), col(14)
		}
		if kind == "hosting" && strings.Contains(usage, "CDN") {
			kind = "cdn"
		}
		switch {
		case provider != "":
		case kind == "tor":
			provider = "Tor"
		case kind == "hosting" || kind == "cdn":
			provider = isp
		}
		when := at
		if ls := col(12); len(f) >= 13 && ls != "" {
			days, err := strconv.Atoi(ls)
			if err != nil || days < 0 {
				bad(LineError{n, fmt.Errorf("last_seen: not a number of days: %q", ls)})
				return nil
			}
			when = at.AddDate(0, 0, -days)
		}
		var claims []Claim
		if provider != "" {
			claims = []Claim{{OrgName: provider, SignalConfidence: conf}}
		}
		for _, p := range ps {
			o := Observation{Source: src, ObservedAt: ipmodel.FormatTime(when), Claims: claims}
			if p.Bits() < p.Addr().BitLen() {
				o.Type, o.Network = TypeRange, p.String()
				o.Range = &Range{Kind: kind, Provider: provider, Country: strings.ToUpper(country), City: city, Confidence: conf}
			} else {
				o.Type, o.IP = TypeSignal, p.Addr().String()
				o.Signal = &Signal{Kind: signalKindOf[kind], Provider: provider, Confidence: conf}
			}
			if err := emitChecked(n, o, emit, bad); err != nil {
				return err
			}
		}
		return nil
	})
}
