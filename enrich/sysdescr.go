package enrich

import (
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/netintel/netintel/ingest"
)

// sysDescrLine finds SNMP's sysDescr.0 in the renderings walks and scanners
// record it in: net-snmp's snmpwalk and snmpget (named, numeric and iso
// forms, with or without the type), snmpsim's .snmprec lines (OID|type|value),
// nmap's snmp-sysdescr script and masscan's and other scanners'
// "sysDescr.0:" lines, and a bindings list ("{sysDescr=..., sysName=...}",
// as Nexpose logs it). Group 1 is the net-snmp value, 2 and 3 snmpsim's
// type and value, 4 nmap's and the scanners' value, 5 the bindings'.
var sysDescrLine = regexp.MustCompile(`(?im)(?:(?:SNMPv2-MIB::sysDescr\.0|(?:\biso|(?:^|[\s:])\.?1)\.3\.6\.1\.2\.1\.1\.1\.0)\s*=\s*(?:(?:STRING|OCTET STRING|Hex-STRING):\s*)?(.*)$|^\.?1\.3\.6\.1\.2\.1\.1\.1\.0\|(4x?)\|(.*)$|(?:snmp-sysdescr|\bsysDescr(?:\.0)?):[ \t]*(.*)$|[{,]\s*sysDescr=(.*)$)`)

// bindingsEnd ends a value in a bindings list ("{sysDescr=..., sysName=...}").
var bindingsEnd = regexp.MustCompile(`, [A-Za-z][A-Za-z0-9]*=|\}`)

// shodanDescription is Shodan's SNMP banner line (its "SNMP:" block).
var shodanDescription = regexp.MustCompile(`(?m)^\s*Description:[ \t]*(.*)$`)

// sysDescrValue returns the value of sysDescr held in a banner that
// records it in one of those renderings, and false when the banner holds
// none or only the bare value (which rules read as it is). A quoted
// value runs to its closing quote, over lines; snmpsim's hex form is
// decoded.
func sysDescrValue(text string, port int) (string, bool) {
	var v string
	switch {
	case strings.Contains(text, "ysDescr") || strings.Contains(text, "3.6.1.2.1.1.1.0") || strings.Contains(text, "snmp-sysdescr"):
		loc := sysDescrLine.FindStringSubmatchIndex(text)
		if loc == nil {
			return "", false
		}
		switch {
		case loc[2] >= 0: // net-snmp
			v = text[loc[2]:]
			if strings.HasPrefix(v, `"`) {
				if end := strings.IndexByte(v[1:], '"'); end >= 0 {
					v = v[1 : end+1]
				} else {
					v = strings.TrimPrefix(text[loc[2]:loc[3]], `"`)
				}
			} else {
				v = text[loc[2]:loc[3]]
			}
		case loc[4] >= 0: // snmpsim
			v = text[loc[6]:loc[7]]
			if text[loc[4]:loc[5]] == "4x" {
				b, err := hex.DecodeString(strings.TrimSpace(v))
				if err != nil {
					return "", false
				}
				v = string(b)
			}
		case loc[8] >= 0:
			v = text[loc[8]:loc[9]]
		default: // Nexpose's and others' bindings list
			v = text[loc[10]:loc[11]]
			if end := bindingsEnd.FindStringIndex(v); end != nil {
				v = v[:end[0]]
			}
		}
	case port == 161 && strings.Contains(text, "Description:"):
		m := shodanDescription.FindStringSubmatch(text)
		if m == nil {
			return "", false
		}
		v = m[1]
	default:
		return "", false
	}
	v = strings.TrimSpace(strings.TrimSuffix(v, "\r"))
	if v == "" || v == strings.TrimSpace(text) {
		return "", false
	}
	return v, true
}

// addSysDescrProbes adds to e, for each banner that records sysDescr in a
// walk's or scanner's rendering, a probe whose banner is the value alone,
// as a bare sysDescr capture carries it: the rules written for the value
// (anchored at its start, read to its end) then read it in any rendering.
func (e *evidence) addSysDescrProbes() {
	n := len(e.probes)
	for i := 0; i < n; i++ {
		v := &e.probes[i]
		if v.p.Banner == nil || v.p.Banner.Received == nil {
			continue
		}
		val, ok := sysDescrValue(v.bannerText(), e.svc.Port)
		if !ok {
			continue
		}
		e.extra = append(e.extra, ingest.Probe{Name: "snmp.sysdescr", Banner: &ingest.Banner{Received: ingest.TextBody(val)}})
	}
	for i := range e.extra {
		e.probes = append(e.probes, probeView{p: &e.extra[i]})
	}
}
