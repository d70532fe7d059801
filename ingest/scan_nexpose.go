package ingest

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Nexpose reads Rapid7 Nexpose / InsightVM's "XML Export" reports
// (<NexposeReport version="1.0"> and "2.0"), node by node, so a large report is
// never held whole. Each open endpoint of a node is a service with what
// the scanner recorded of it in its configuration: the HTTP Server
// banner (http.banner.server, else http.banner) as the Server header of
// an HTTP answer; the certificate (ssl.cert.subject.dn, issuer.dn, serial
// number, validity, self-signed) as a TLS probe; every other *.banner
// (ssh, ftp, smtp, telnet, ...) as a banner probe; and the service's
// most certain fingerprint (vendor, product, version) with the node's
// OS fingerprint as detected. The vulnerability tests are not read:
// they are the scanner's verdicts, not the service's answers. Observed
// at the latest scan's end (Nexpose writes its server's time without a
// zone, read as UTC).
func Nexpose(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("nexpose")
	var at time.Time
	sawReport := false
	err := xmlReport(r, "nexpose", bad, func(dec *xml.Decoder, se *xml.StartElement, _ []string, line int) (bool, error) {
		switch se.Name.Local {
		case "NeXposeSimpleXML":
			return false, errNexposeSimple
		case "NexposeReport":
			sawReport = true // versions 1.0 and 2.0: the same nodes, endpoints and services
		case "scan":
			for _, a := range se.Attr {
				if a.Name.Local == "endTime" {
					if t, err := nexposeTime(a.Value); err == nil && t.After(at) {
						at = t
					}
				}
			}
		case "node":
			if !sawReport {
				return false, errNotNexpose
			}
			var n nexposeNode
			if err := dec.DecodeElement(&n, se); err != nil {
				l, _ := dec.InputPos()
				bad(LineError{l, fmt.Errorf("node: %w", err)})
				return true, errStop
			}
			return true, n.emit(line, src, opt, at, emit, bad)
		}
		return false, nil
	})
	return endXMLReport(err, sawReport, errNotNexpose, bad, errNexposeSimple, errNotNexpose)
}

var (
	errNotNexpose    = errors.New("not a Nexpose XML report: no <NexposeReport> element")
	errNexposeSimple = errors.New("a Nexpose Simple XML report: export \"XML Export 2.0\" instead, which carries the services' banners and certificates")
)

type nexposeFingerprint struct {
	Certainty   string `xml:"certainty,attr"`
	Vendor      string `xml:"vendor,attr"`
	Family      string `xml:"family,attr"`
	Product     string `xml:"product,attr"`
	Version     string `xml:"version,attr"`
	DeviceClass string `xml:"device-class,attr"`
}

type nexposeNode struct {
	Address  string               `xml:"address,attr"`
	Names    []string             `xml:"names>name"`
	OS       []nexposeFingerprint `xml:"fingerprints>os"`
	Endpoint []struct {
		Protocol string `xml:"protocol,attr"`
		Port     string `xml:"port,attr"`
		Status   string `xml:"status,attr"`
		Services []struct {
			Name         string               `xml:"name,attr"`
			Fingerprints []nexposeFingerprint `xml:"fingerprints>fingerprint"`
			Config       []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:",chardata"`
			} `xml:"configuration>config"`
		} `xml:"services>service"`
	} `xml:"endpoints>endpoint"`
}

func (n *nexposeNode) emit(line int, src string, opt Options, at time.Time, emit Emit, bad func(LineError)) error {
	ip, err := netip.ParseAddr(strings.TrimSpace(n.Address))
	if err != nil {
		bad(LineError{line, fmt.Errorf("node: address: not an IP address: %q", n.Address)})
		return nil
	}
	if len(n.Endpoint) == 0 {
		// a node Nexpose fingerprinted (its OS) without an endpoint: nothing
		// a service observation can carry; counted, not dropped unsaid
		opt.skip(line, "nexpose: node without endpoints")
		return nil
	}
	osInfo := ""
	if fp := bestFingerprint(n.OS); fp != nil {
		osInfo = "os: " + strings.Join(nonBlank(fp.Vendor, fp.Product, fp.Version), " ")
	}
	for _, e := range n.Endpoint {
		if e.Status != "open" {
			opt.skip(line, "nexpose: endpoint "+e.Status)
			continue
		}
		port, err := strconv.Atoi(e.Port)
		if err != nil || port < 1 || port > 65535 {
			bad(LineError{line, fmt.Errorf("node %s: endpoint port %q: not 1..65535", n.Address, e.Port)})
			continue
		}
		transport := strings.ToLower(e.Protocol)
		if transport != "tcp" && transport != "udp" {
			opt.skip(line, "nexpose: protocol "+e.Protocol)
			continue
		}
		s := &Service{Port: port, Transport: transport}
		for _, svc := range e.Services {
			cfg := map[string]string{}
			var names []string
			for _, c := range svc.Config {
				if _, dup := cfg[c.Name]; !dup {
					names = append(names, c.Name)
				}
				cfg[c.Name] = strings.TrimSpace(c.Value)
			}
			if server := firstNonEmpty(cfg["http.banner.server"], cfg["http.banner"]); server != "" {
				s.Probes = append(s.Probes, Probe{Name: "nexpose.http", Response: &Response{Headers: []Header{{Name: "Server", Value: server}}}})
			}
			if t := nexposeCert(cfg); t != nil {
				s.Probes = append(s.Probes, Probe{Name: "nexpose.ssl", TLS: t})
			}
			for _, k := range names {
				if strings.HasSuffix(k, ".banner") && !strings.HasPrefix(k, "http.") && cfg[k] != "" {
					s.Probes = append(s.Probes, Probe{Name: "nexpose." + strings.TrimSuffix(k, ".banner"), Banner: &Banner{Received: TextBody(cfg[k])}})
				}
			}
			d := &Detected{By: "nexpose", Service: strings.ToLower(svc.Name)}
			var info []string
			if fp := bestFingerprint(svc.Fingerprints); fp != nil {
				d.Product, d.Version = firstNonEmpty(fp.Product, fp.Family), fp.Version
				info = append(info, strings.Join(nonBlank(fp.Vendor, fp.Product, fp.Version), " "))
			}
			if osInfo != "" {
				info = append(info, osInfo)
			}
			d.Info = strings.Join(info, "; ")
			if s.Detected == nil && (d.Service != "" || d.Info != "") {
				s.Detected = d
			}
		}
		o := Observation{Type: TypeService, IP: ip.Unmap().String(), Source: src, ObservedAt: opt.when(at), Service: s}
		for _, h := range n.Names {
			if h = strings.TrimSpace(h); h != "" {
				if _, err := netip.ParseAddr(h); err != nil {
					o.Hostnames = append(o.Hostnames, h)
				}
			}
		}
		if err := emitChecked(line, o, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

// nexposeCert builds the TLS probe of a service's ssl.cert.* settings.
func nexposeCert(cfg map[string]string) *TLS {
	t := &TLS{}
	if s := cfg["ssl.cert.subject.dn"]; s != "" {
		t.Subject = ParseDN(s)
	}
	if s := cfg["ssl.cert.issuer.dn"]; s != "" {
		t.Issuer = ParseDN(s)
	}
	if s := cfg["ssl.cert.serial.number"]; s != "" {
		if n, ok := new(big.Int).SetString(s, 10); ok && n.Sign() >= 0 {
			t.Serial = n.Text(16)
		}
	}
	for k, to := range map[string]*string{"ssl.cert.not.valid.before": &t.NotBefore, "ssl.cert.not.valid.after": &t.NotAfter} {
		if v, err := time.Parse("Mon, 02 Jan 2006 15:04:05 MST", cfg[k]); err == nil {
			*to = v.UTC().Format(time.RFC3339)
		}
	}
	t.SelfSigned = cfg["ssl.cert.selfsigned"] == "true"
	if t.Subject == nil && t.Issuer == nil && t.Serial == "" {
		return nil
	}
	return t
}

// bestFingerprint is the most certain of fps (the first of equals).
func bestFingerprint(fps []nexposeFingerprint) *nexposeFingerprint {
	if len(fps) == 0 {
		return nil
	}
	best := 0
	bc, _ := strconv.ParseFloat(fps[0].Certainty, 64)
	for j := 1; j < len(fps); j++ {
		if c, _ := strconv.ParseFloat(fps[j].Certainty, 64); c > bc {
			best, bc = j, c
		}
	}
	return &fps[best]
}

func nonBlank(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// nexposeTime reads "20131127T115513233" (milliseconds after the seconds).
func nexposeTime(s string) (time.Time, error) {
	if len(s) >= 15 {
		return time.Parse("20060102T150405", s[:15])
	}
	return time.Time{}, fmt.Errorf("time %q: want yyyymmddThhmmssSSS", s)
}
