package ingest

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/oschwald/maxminddb-golang/v2"

	"github.com/netintel/netintel/internal/ipmodel"
)

// maxMindMaxBytes bounds a MaxMind database read into memory.
const maxMindMaxBytes = 2 << 30

// maxMindFlags are the anonymizer flags MaxMind's Anonymous IP databases
// set on a network, and the classification each is.
var maxMindFlags = []struct{ name, kind string }{
	{"is_anonymous_vpn", "vpn"}, {"is_public_proxy", "proxy"}, {"is_tor_exit_node", "tor"},
	{"is_residential_proxy", "residential_proxy"}, {"is_hosting_provider", "hosting"},
}

// maxMindRecord is one network's record in GeoIP2 Anonymous IP and GeoIP
// Anonymous Plus.
type maxMindRecord struct {
	IsAnonymousVPN       bool   `maxminddb:"is_anonymous_vpn"`
	IsPublicProxy        bool   `maxminddb:"is_public_proxy"`
	IsTorExitNode        bool   `maxminddb:"is_tor_exit_node"`
	IsResidentialProxy   bool   `maxminddb:"is_residential_proxy"`
	IsHostingProvider    bool   `maxminddb:"is_hosting_provider"`
	AnonymizerConfidence int    `maxminddb:"anonymizer_confidence"`
	ProviderName         string `maxminddb:"provider_name"`
	NetworkLastSeen      string `maxminddb:"network_last_seen"`
}

func (m maxMindRecord) flag(name string) bool {
	switch name {
	case "is_anonymous_vpn":
		return m.IsAnonymousVPN
	case "is_public_proxy":
		return m.IsPublicProxy
	case "is_tor_exit_node":
		return m.IsTorExitNode
	case "is_residential_proxy":
		return m.IsResidentialProxy
	case "is_hosting_provider":
		return m.IsHostingProvider
	}
	return false
}

// MaxMindAnonymous reads MaxMind's anonymizer databases: GeoIP2 Anonymous
// IP and GeoIP Anonymous Plus, as the .mmdb file MaxMind publishes or as
// their CSV (`network,is_anonymous,is_anonymous_vpn,...`, a header row
// naming the columns). Each flag a network carries is one observation:
// is_anonymous_vpn a vpn, is_public_proxy a proxy, is_tor_exit_node a tor,
// is_residential_proxy a residential_proxy and is_hosting_provider a
// hosting range (a single address a signal). Anonymous Plus's
// provider_name is the provider and the claim, its anonymizer_confidence
// (1-99) the confidence (else the format's 0.8), and its
// network_last_seen the time observed; else the file's time.
func MaxMindAnonymous(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	data, err := io.ReadAll(io.LimitReader(r, maxMindMaxBytes+1))
	if err != nil {
		return fmt.Errorf("read maxmind database: %w", err)
	}
	if len(data) > maxMindMaxBytes {
		return fmt.Errorf("read maxmind database: larger than %d bytes", maxMindMaxBytes)
	}
	src := opt.source("maxmind")
	at := opt.ObservedAt
	if at.IsZero() {
		at = time.Now()
	}
	emitRec := func(n int, p netip.Prefix, m maxMindRecord) error {
		when := at
		if t, err := time.Parse("2006-01-02", m.NetworkLastSeen); err == nil {
			when = t
		}
		conf := opt.conf(0.8)
		if m.AnonymizerConfidence > 0 && m.AnonymizerConfidence <= 100 {
			conf = float64(m.AnonymizerConfidence) / 100
		}
		var claims []Claim
		if m.ProviderName != "" {
			claims = []Claim{{OrgName: m.ProviderName, SignalConfidence: conf}}
		}
		if p.Addr().Is4In6() { // an IPv4 network written in the IPv6 tree
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		p = p.Masked()
		for _, f := range maxMindFlags {
			if !m.flag(f.name) {
				continue
			}
			o := Observation{Source: src, ObservedAt: ipmodel.FormatTime(when), Claims: claims}
			if p.Bits() < p.Addr().BitLen() {
				o.Type, o.Network = TypeRange, p.String()
				o.Range = &Range{Kind: f.kind, Provider: m.ProviderName, Confidence: conf}
			} else {
				o.Type, o.IP = TypeSignal, p.Addr().String()
				o.Signal = &Signal{Kind: signalKindOf[f.kind], Provider: m.ProviderName, Confidence: conf}
			}
			if err := emitChecked(n, o, emit, bad); err != nil {
				return err
			}
		}
		return nil
	}
	if !bytes.Contains(data[max(0, len(data)-128*1024):], []byte("\xab\xcd\xefMaxMind.com")) {
		return maxMindCSV(data, emitRec, bad)
	}
	db, err := maxminddb.OpenBytes(data)
	if err != nil {
		return fmt.Errorf("maxmind database: %w", err)
	}
	if t := db.Metadata.DatabaseType; !strings.Contains(t, "Anonymous") {
		return fmt.Errorf("maxmind database: %q is not an Anonymous IP or Anonymous Plus database", t)
	}
	n := 0
	for res := range db.Networks() {
		n++
		if err := res.Err(); err != nil {
			bad(LineError{n, err})
			return nil
		}
		var m maxMindRecord
		if err := res.Decode(&m); err != nil {
			bad(LineError{n, fmt.Errorf("network %s: %w", res.Prefix(), err)})
			continue
		}
		if err := emitRec(n, res.Prefix(), m); err != nil {
			return err
		}
	}
	return nil
}

// maxMindCSV reads the CSV form of the anonymizer databases.
func maxMindCSV(data []byte, emitRec func(int, netip.Prefix, maxMindRecord) error, bad func(LineError)) error {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		bad(LineError{1, fmt.Errorf("maxmind csv: %w", err)})
		return nil
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	if _, ok := col["network"]; !ok {
		bad(LineError{1, errors.New("maxmind csv: no network column (want the database's header row: network,is_anonymous,is_anonymous_vpn,...)")})
		return nil
	}
	for n := 2; ; n++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			bad(LineError{n, fmt.Errorf("maxmind csv: %w", err)})
			continue
		}
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		p, err := netip.ParsePrefix(get("network"))
		if err != nil {
			bad(LineError{n, fmt.Errorf("network: %w", err)})
			continue
		}
		m := maxMindRecord{ProviderName: get("provider_name"), NetworkLastSeen: get("network_last_seen")}
		m.IsAnonymousVPN, m.IsPublicProxy, m.IsTorExitNode = get("is_anonymous_vpn") == "1", get("is_public_proxy") == "1", get("is_tor_exit_node") == "1"
		m.IsResidentialProxy, m.IsHostingProvider = get("is_residential_proxy") == "1", get("is_hosting_provider") == "1"
		if c, err := strconv.Atoi(get("anonymizer_confidence")); err == nil {
			m.AnonymizerConfidence = c
		}
		if err := emitRec(n, p, m); err != nil {
			return err
		}
	}
}
