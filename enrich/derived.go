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
		val, ok := sysDescrValue(e.probes[i].bannerText(), e.svc.Port)
		if !ok {
			continue
		}
		e.extra = append(e.extra, ingest.Probe{Name: "snmp.sysdescr", Banner: &ingest.Banner{Received: ingest.TextBody(val)}})
	}
	for i := range e.extra {
		e.probes = append(e.probes, probeView{p: &e.extra[i]})
	}
}

// A vulnerability scanner's report of the service, as a capture quotes it
// in a banner: Greenbone's detection result ("Detected Palo Alto PAN-OS",
// "Version: 10.2.4", "CPE: cpe:/o:paloaltonetworks:pan-os:10.2.4"),
// Nessus's plugin output ("Installed version : 9.1.4"), or a CPE on its
// own.
var (
	reportCPE       = regexp.MustCompile(`\bcpe:(?:/[aoh]|2\.3:[aoh]):[^\s"'<>,;()]+`)
	reportProduct   = regexp.MustCompile(`(?m)^[ \t]*Detected ([A-Z][^\r\n]{2,80}?)[ \t]*\r?$`)
	reportVersion   = regexp.MustCompile(`(?m)^[ \t]*(?:Installed version|Version)[ \t]*:[ \t]*(\S+)[ \t]*\r?$`)
	reportInstalled = regexp.MustCompile(`(?m)^[ \t]*Installed version[ \t]*:[ \t]*(\S+)[ \t]*\r?$`)
	// reportOS is a scanner's operating system identification: Tenable's
	// export ("asset.operating_system: FortiOS on Fortinet FortiGate"),
	// Nessus's OS Identification ("Remote operating system : ...").
	reportOS = regexp.MustCompile(`(?m)^[ \t]*(?:asset\.operating_system|Remote operating system)[ \t]*:[ \t]*([A-Z][^\r\n]{2,80}?)[ \t]*\r?$`)
)

const (
	reportMaxCPEs = 8
	reportBy      = "report"
)

// reportDetected reads, for an observation without a scanner's own
// identification, one out of a scanner's report its banners quote (a
// CPE, Greenbone's "Detected <product>" line with the report's version
// line, Tenable's and Nessus's operating system, as both the product and
// "os: ..." in the information) into e.derivedDetected, as if the scanner had given it
// (docs/rules.md, "The scanner's own identification"). Bodies are not
// read: a page that names a CPE is a page about the product.
func (e *evidence) reportDetected() bool {
	d := &e.derivedDetected
	*d = ingest.Detected{}
	for i := range e.probes {
		t := e.probes[i].bannerText()
		if !strings.Contains(t, "cpe:") && !strings.Contains(t, "Detected ") && !strings.Contains(t, "perating") {
			continue
		}
		if m := reportOS.FindStringSubmatch(t); m != nil && d.Info == "" {
			d.Info = "os: " + m[1]
			if d.Product == "" {
				d.Product = m[1]
			}
		}
		if n := reportMaxCPEs - len(d.CPE); n > 0 {
			d.CPE = append(d.CPE, reportCPE.FindAllString(t, n)...)
		}
		if m := reportProduct.FindStringSubmatch(t); m != nil && d.Product == "" {
			d.Product = m[1]
		}
		if d.Version == "" && (len(d.CPE) > 0 || d.Product != "") {
			if m := reportVersion.FindStringSubmatch(t); m != nil {
				d.Version = m[1]
			}
		}
	}
	if len(d.CPE) == 0 && d.Product == "" && d.Info == "" {
		return false // nothing was set: a version is read only beside a product or CPE
	}
	d.By = reportBy
	return true
}

// reportVersionOf is the version a banner's scanner report gives in
// Nessus's and Greenbone's words ("Installed version : 9.1.4"), for an
// identification that names the product without it.
func (e *evidence) reportVersionOf() string {
	for i := range e.probes {
		t := e.probes[i].bannerText()
		if !strings.Contains(t, "Installed version") {
			continue
		}
		if m := reportInstalled.FindStringSubmatch(t); m != nil {
			return m[1]
		}
	}
	return ""
}
