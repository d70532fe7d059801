package ingest

import (
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/bits"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/netintel/netintel/internal/ipmodel"
)

// CIDRList reads an address list as list publishers write them: one IP,
// CIDR or range per line, with the decorations the common lists carry
// (docs/ingest-enrich.md, "Address lists"): `#`, `;` and `//` comments,
// whole-line or trailing (Spamhaus DROP's `1.10.16.0/20 ; SBL256894`); a
// count or date after the address (IPsum's `1.2.3.4<TAB>8`); a range
// `FROM-TO`, `FROM - TO` or FROM and TO in two columns (DShield's block
// list), stored as the CIDRs that cover it exactly;
// decimal `FROM,TO` integers (IP2Location's CSV layout); CSV rows, the
// address column named by a header row (commented or not) or else, in a
// comma-, `;`- or `|`-delimited row, the first column holding an address; ipset's `add SET ADDR` lines; JSON
// lines with a `cidr`, `ip`, `prefix`, `network` or `address` member
// (Spamhaus's drop_v4.json, whose metadata line is skipped). A single
// address (or a /32, /128) becomes a signal about that address, anything
// wider a range; both claim opt.Kind and opt.Provider.
func CIDRList(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	if signalKindOf[opt.Kind] == "" {
		return fmt.Errorf("cidr-list: --kind must be one of %s, got %q", strings.Join(RangeKinds, ", "), opt.Kind)
	}
	src := opt.source("cidr-list")
	at := opt.ObservedAt
	if at.IsZero() {
		at = time.Now()
	}
	when := ipmodel.FormatTime(at)
	conf := opt.conf(0.8)
	var claims []Claim
	if opt.Provider != "" {
		claims = []Claim{{OrgName: opt.Provider, SignalConfidence: conf}}
	}
	lp := listParser{col: -1}
	return opt.lines(r, "cidr list", bad, func(n int, b []byte) error {
		if !lp.seen {
			// The list's own date in its comment header (abuse.ch's "Last
			// updated:", Spamhaus's "Last-Modified:", IPsum's "Last update:",
			// FireHOL's "This File Date :") is when its entries were
			// listed: it, not the file's modification time, is their time.
			if t, ok := listHeaderTime(string(b)); ok {
				when = ipmodel.FormatTime(t)
			}
		}
		ps, skip, err := lp.line(string(b))
		if err != nil {
			bad(LineError{n, err})
			return nil
		}
		if skip != "" && opt.Skipped != nil {
			opt.Skipped(n, skip)
		}
		for _, p := range ps {
			var o Observation
			if p.Bits() < p.Addr().BitLen() {
				o = Observation{Type: TypeRange, Network: p.String(), Range: &Range{Kind: opt.Kind, Provider: opt.Provider, Confidence: conf}}
			} else {
				o = Observation{Type: TypeSignal, IP: p.Addr().String(), Signal: &Signal{Kind: signalKindOf[opt.Kind], Provider: opt.Provider, Confidence: conf}}
			}
			o.Source, o.ObservedAt, o.Claims = src, when, claims
			if err := emitChecked(n, o, emit, bad); err != nil {
				return err
			}
		}
		return nil
	})
}

// listParser reads the lines of one address list; it remembers the
// address column a header row named.
type listParser struct {
	col  int  // the column a header named as the address; -1 = none
	from int  // the columns a header named as a range's first and last
	to   int  // address (to 0 = none)
	seen bool // a line that is not a comment was read: no header after it
}

// listAddrColumns are header names of an address column, lower case.
var listAddrColumns = []string{"ip", "ip_address", "ipaddress", "ip address", "ip_addr", "address", "addr", "dst_ip", "dest_ip", "src_ip",
	"ipv4", "ipv6", "cidr", "network", "prefix", "range", "subnet", "ip_range", "indicator"}

// listFromColumns and listToColumns are header names of a range's first
// and last address (DShield's `Start<TAB>End`, IP2Location's `ip_from`).
var (
	listFromColumns = []string{"start", "from", "ip_from", "range_start", "start_ip", "first_ip", "first", "begin", "ip_start"}
	listToColumns   = []string{"end", "to", "ip_to", "range_end", "end_ip", "last_ip", "last", "ip_end"}
)

// line reads one line: the prefixes it lists, or a reason it was skipped
// on purpose (a header, a metadata record), or what is wrong with it.
func (lp *listParser) line(s string) ([]netip.Prefix, string, error) {
	s = strings.TrimSpace(strings.TrimPrefix(s, "\ufeff"))
	if s == "" {
		return nil, "", nil
	}
	for _, c := range []string{"#", ";", "//"} {
		if rest, ok := strings.CutPrefix(s, c); ok {
			// A commented header (abuse.ch's `# "first_seen_utc","dst_ip",...`).
			if rest = strings.TrimSpace(rest); !lp.seen && strings.Count(rest, ",") > 0 {
				if f, err := listFields(rest); err == nil {
					lp.header(f)
				}
			}
			return nil, "", nil
		}
	}
	first := !lp.seen
	lp.seen = true
	if s[0] == '{' {
		return lp.jsonLine(s)
	}
	s = cutListComment(s)
	f, err := listFields(s)
	if err != nil {
		return nil, "", err
	}
	switch {
	case len(f) >= 3 && f[0] == "add": // ipset save: add SET ADDR [options]
		f = f[2:3]
	case len(f) >= 1 && f[0] == "create":
		return nil, "ipset create line", nil
	case len(f) >= 3 && f[1] == "-": // FROM - TO
		f = append([]string{f[0] + "-" + f[2]}, f[3:]...)
	}
	if lp.to > 0 {
		if lp.to >= len(f) || lp.from >= len(f) {
			return nil, "", fmt.Errorf("no columns %d and %d (the header's range) in %d fields", lp.from+1, lp.to+1, len(f))
		}
		ps, err := listRange(f[lp.from], f[lp.to])
		return ps, "", err
	}
	if lp.col >= 0 {
		if lp.col >= len(f) {
			return nil, "", fmt.Errorf("no column %d (the header's address column) in %d fields", lp.col+1, len(f))
		}
		ps, err := parseListAddr(f[lp.col])
		return ps, "", err
	}
	if len(f) >= 2 { // FROM TO in two columns (DShield's block list)
		a, err1 := netip.ParseAddr(f[0])
		b, err2 := netip.ParseAddr(f[1])
		if a, b = a.Unmap(), b.Unmap(); err1 == nil && err2 == nil && a.Is4() == b.Is4() && !b.Less(a) {
			ps, err := addrRange(a, b)
			return ps, "", err
		}
	}
	ps, err := parseListAddr(f[0])
	if err == nil {
		return ps, "", nil
	}
	if len(f) < 2 {
		return nil, "", err
	}
	if first && lp.header(f) {
		return nil, "header", nil
	}
	if sepScan := strings.ContainsAny(s, ",;|"); sepScan && !strings.ContainsRune(s, '\t') {
		// A delimited row (CSV, `;` or `|`) may hold the address in another
		// column (abuse.ch's trackers, CIF feeds, dataplane's tables); a
		// tab- or space-separated line is a list only when it starts with the
		// address, so another tool's log given as a list is not read.
		for _, c := range f[1:] {
			if ps, err := parseListAddr(c); err == nil {
				return ps, "", nil
			}
		}
	}
	if isDecimal(f[0]) && isDecimal(f[1]) { // IP2Location's "FROM","TO" numbers
		ps, derr := decimalRange(f[0], f[1])
		return ps, "", derr
	}
	return nil, "", err
}

// header takes f as a header row when every field is a name, and
// remembers the address column if one is named; it reports whether f
// was a header.
func (lp *listParser) header(f []string) bool {
	for _, c := range f {
		if c == "" || isDecimal(c) {
			return false
		}
		if _, err := parseListAddr(c); err == nil {
			return false
		}
	}
	from, to := -1, -1
	for i, c := range f {
		c = strings.ToLower(strings.TrimSpace(c))
		switch {
		case slices.Contains(listAddrColumns, c) && lp.col < 0:
			lp.col = i
		case slices.Contains(listFromColumns, c) && from < 0:
			from = i
		case slices.Contains(listToColumns, c) && to < 0:
			to = i
		}
	}
	if from >= 0 && to > from {
		lp.from, lp.to = from, to
	}
	return true
}

// listRange reads a range given as its first and last address, written
// as addresses or as numbers.
func listRange(from, to string) ([]netip.Prefix, error) {
	if isDecimal(from) && isDecimal(to) {
		return decimalRange(from, to)
	}
	a, err := netip.ParseAddr(from)
	if err != nil {
		return nil, fmt.Errorf("range start: %w", err)
	}
	b, err := netip.ParseAddr(to)
	if err != nil {
		return nil, fmt.Errorf("range end: %w", err)
	}
	return addrRange(a.Unmap(), b.Unmap())
}

// jsonLine reads a list entry written as a JSON object.
func (lp *listParser) jsonLine(s string) ([]netip.Prefix, string, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, "", fmt.Errorf("not a JSON object: %w", err)
	}
	if t, _ := m["type"].(string); t == "metadata" {
		return nil, "metadata record", nil
	}
	for _, k := range []string{"cidr", "ip", "prefix", "network", "address", "ip_address", "range"} {
		if v, ok := m[k].(string); ok {
			ps, err := parseListAddr(v)
			if err != nil {
				return nil, "", fmt.Errorf("%s: %w", k, err)
			}
			return ps, "", nil
		}
	}
	return nil, "", errors.New("JSON object with no cidr, ip, prefix, network or address member")
}

// cutListComment drops a trailing comment: anything after a `#`, or
// after a `;` or `//` that follows a space (a `;` between values without
// one separates them).
func cutListComment(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	for _, c := range []string{" ;", "\t;", " //", "\t//"} {
		if i := strings.Index(s, c); i >= 0 {
			s = s[:i]
		}
	}
	return strings.TrimSpace(s)
}

// listFields splits one list line into its fields: by tabs when it has
// one, else CSV (quotes honoured) when it has a comma, else by `|` or `;`,
// else by white space.
func listFields(s string) ([]string, error) {
	var f []string
	switch {
	case strings.ContainsRune(s, '\t'):
		f = strings.Split(s, "\t")
	case strings.ContainsRune(s, ','):
		cr := csv.NewReader(strings.NewReader(s))
		cr.LazyQuotes, cr.FieldsPerRecord, cr.TrimLeadingSpace = true, -1, true
		rec, err := cr.Read()
		if err != nil {
			return nil, fmt.Errorf("CSV: %w", err)
		}
		f = rec
	case strings.ContainsRune(s, '|'):
		f = strings.Split(s, "|")
	case strings.ContainsRune(s, ';'):
		f = strings.Split(s, ";")
	default:
		f = strings.Fields(s)
	}
	for i := range f {
		f[i] = strings.Trim(strings.TrimSpace(f[i]), `"'`)
	}
	if len(f) == 0 {
		return nil, errors.New("empty line")
	}
	return f, nil
}

// parseListAddr reads an address (or ADDR:PORT), a CIDR (host bits
// cleared) or a range FROM-TO of one family into the prefixes it covers.
func parseListAddr(s string) ([]netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		a = a.Unmap().WithZone("")
		return []netip.Prefix{netip.PrefixFrom(a, a.BitLen())}, nil
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return []netip.Prefix{p.Masked()}, nil
	}
	if ap, err := netip.ParseAddrPort(s); err == nil { // a proxy's ADDR:PORT
		a := ap.Addr().Unmap().WithZone("")
		return []netip.Prefix{netip.PrefixFrom(a, a.BitLen())}, nil
	}
	if from, to, ok := strings.Cut(s, "-"); ok {
		a, err1 := netip.ParseAddr(strings.TrimSpace(from))
		b, err2 := netip.ParseAddr(strings.TrimSpace(to))
		if err1 == nil && err2 == nil {
			return addrRange(a.Unmap(), b.Unmap())
		}
	}
	return nil, fmt.Errorf("not an IP address, CIDR or range: %q", s)
}

// addrRange lists the CIDRs that cover from..to exactly (at most 62 for
// IPv4, 254 for IPv6).
func addrRange(from, to netip.Addr) ([]netip.Prefix, error) {
	if from.Is4() != to.Is4() {
		return nil, fmt.Errorf("range %s-%s mixes IPv4 and IPv6", from, to)
	}
	if to.Less(from) {
		return nil, fmt.Errorf("range %s-%s ends before it starts", from, to)
	}
	width := from.BitLen()
	lo, hi := u128Of(from), u128Of(to)
	var out []netip.Prefix
	for {
		// The largest block that starts at lo and ends by hi.
		k := min(lo.trailingZeros(), width)
		for k > 0 && hi.less(lo.add(u128{}.mask(k))) {
			k--
		}
		out = append(out, netip.PrefixFrom(lo.addr(from.Is4()), width-k))
		last := lo.add(u128{}.mask(k))
		if last == hi {
			return out, nil
		}
		lo = last.addOne()
	}
}

// u128 is an address as a 128-bit number (IPv4 in the low 32 bits).
type u128 struct{ hi, lo uint64 }

func u128Of(a netip.Addr) u128 {
	if a.Is4() {
		b := a.As4()
		return u128{lo: uint64(binary.BigEndian.Uint32(b[:]))}
	}
	b := a.As16()
	return u128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

func (u u128) addr(v4 bool) netip.Addr {
	if v4 {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(u.lo))
		return netip.AddrFrom4(b)
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], u.hi)
	binary.BigEndian.PutUint64(b[8:], u.lo)
	return netip.AddrFrom16(b)
}

// mask is 2^k - 1.
func (u128) mask(k int) u128 {
	switch {
	case k >= 128:
		return u128{^uint64(0), ^uint64(0)}
	case k >= 64:
		return u128{^uint64(0) >> (128 - k), ^uint64(0)}
	case k == 0:
		return u128{}
	default:
		return u128{0, ^uint64(0) >> (64 - k)}
	}
}

func (u u128) add(v u128) u128 {
	lo, c := bits.Add64(u.lo, v.lo, 0)
	hi, _ := bits.Add64(u.hi, v.hi, c)
	return u128{hi, lo}
}

func (u u128) addOne() u128 { return u.add(u128{lo: 1}) }

func (u u128) less(v u128) bool { return u.hi < v.hi || (u.hi == v.hi && u.lo < v.lo) }

func (u u128) trailingZeros() int {
	if u.lo != 0 {
		return bits.TrailingZeros64(u.lo)
	}
	if u.hi != 0 {
		return 64 + bits.TrailingZeros64(u.hi)
	}
	return 128
}

func isDecimal(s string) bool {
	if s == "" || len(s) > 39 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// maxUint128 bounds a decimal address.
var maxUint128 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))

// decimalAddr reads an address written as its number, as IP2Location's
// CSV files do: up to 2^32-1 an IPv4 address, above it an IPv6 one (an
// IPv4-mapped one, ::ffff:a.b.c.d, read as the IPv4 address).
func decimalAddr(s string) (netip.Addr, error) {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Sign() < 0 || n.Cmp(maxUint128) > 0 {
		return netip.Addr{}, fmt.Errorf("not an address number: %q", s)
	}
	if n.IsUint64() && n.Uint64() <= 0xFFFFFFFF {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(n.Uint64()))
		return netip.AddrFrom4(b), nil
	}
	var b [16]byte
	n.FillBytes(b[:])
	return netip.AddrFrom16(b).Unmap(), nil
}

// decimalRange reads the range FROM..TO written as numbers.
func decimalRange(from, to string) ([]netip.Prefix, error) {
	a, err := decimalAddr(from)
	if err != nil {
		return nil, err
	}
	b, err := decimalAddr(to)
	if err != nil {
		return nil, err
	}
	return addrRange(a, b)
}

// listHeaderNames are the names list publishers give their list's date in
// its comment header, lower case.
var listHeaderNames = []string{"last updated", "last update", "last-updated", "last_updated", "last-modified", "last modified",
	"updated", "generated", "generated on", "generated at", "feed generated at", "this file date", "date"}

// listHeaderTimeLayouts are the forms those dates are written in.
var listHeaderTimeLayouts = []string{"2006-01-02 15:04:05 MST", "2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05",
	time.RFC1123Z, time.RFC1123, time.UnixDate, "Mon Jan _2 15:04:05 -0700 2006", "Mon Jan _2 15:04:05 2006 MST", "Mon Jan _2 15:04:05 2006",
	time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04"}

// listHeaderTime reads a comment line "# Last updated: 2021-08-17 15:00:42
// UTC" (or ; // comments, the date names of listHeaderNames, a closing
// "#" of a boxed header): the date, and whether the line was one.
func listHeaderTime(line string) (time.Time, bool) {
	s := strings.TrimSpace(line)
	switch {
	case strings.HasPrefix(s, "#"), strings.HasPrefix(s, ";"):
		s = strings.TrimLeft(s, "#;")
	case strings.HasPrefix(s, "//"):
		s = strings.TrimPrefix(s, "//")
	default:
		return time.Time{}, false
	}
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return time.Time{}, false
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if !slices.Contains(listHeaderNames, name) {
		return time.Time{}, false
	}
	value = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "#"))
	for _, layout := range listHeaderTimeLayouts {
		if t, err := time.Parse(layout, value); err == nil && t.Year() >= 1990 {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
