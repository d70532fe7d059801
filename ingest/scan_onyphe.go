package ingest

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// onypheRecord is one ONYPHE document of the datascan category (its
// datamodel datascan-7, onyphe/material): the API's results (v1 wrote
// every scalar as a string, "port": "80", "tls": "true"; v2 numbers and
// booleans) and the export's JSON lines. Members that are a string or a
// list are read as either.
type onypheRecord struct {
	Category  string `json:"@category"`
	Timestamp string `json:"@timestamp"`
	SeenDate  string `json:"seen_date"`

	IP        string `json:"ip"`
	Port      any    `json:"port"`
	Protocol  string `json:"protocol"`
	Transport string `json:"transport"`
	TLS       any    `json:"tls"`
	Data      string `json:"data"`
	URL       string `json:"url"`
	Status    any    `json:"status"`
	Reason    string `json:"reason"`

	Hostname any `json:"hostname"`
	Reverse  any `json:"reverse"`

	Product        string `json:"product"`
	ProductVendor  string `json:"productvendor"`
	ProductVersion string `json:"productversion"`
	CPE            any    `json:"cpe"`
	OS             string `json:"os"`
	Device         *struct {
		Class          string `json:"class"`
		Product        string `json:"product"`
		ProductVendor  string `json:"productvendor"`
		ProductVersion string `json:"productversion"`
	} `json:"device"`

	Organization string `json:"organization"`
	ASN          string `json:"asn"`

	Fingerprint *struct {
		SHA256 string `json:"sha256"`
	} `json:"fingerprint"`
	Subject  *onypheDN `json:"subject"`
	Issuer   *onypheDN `json:"issuer"`
	Serial   string    `json:"serial"`
	Validity *struct {
		NotBefore string `json:"notbefore"`
		NotAfter  string `json:"notafter"`
	} `json:"validity"`

	App *struct {
		HTTP *struct {
			Title string `json:"title"`
		} `json:"http"`
		Favicon *struct {
			URL       string `json:"url"`
			ImageMMH3 any    `json:"imagemmh3"`
		} `json:"favicon"`
	} `json:"app"`
}

// onypheDN is a certificate name as ONYPHE splits it.
type onypheDN struct {
	CommonName         any `json:"commonname"`
	Organization       any `json:"organization"`
	OrganizationalUnit any `json:"organizationalunit"`
	Country            any `json:"country"`
	City               any `json:"city"`
	Email              any `json:"email"`
	AltName            any `json:"altname"`
}

func (d *onypheDN) dn() *DN {
	if d == nil {
		return nil
	}
	x := &DN{CN: first(textsOf(d.CommonName)), O: textsOf(d.Organization), OU: textsOf(d.OrganizationalUnit),
		C: first(textsOf(d.Country)), L: first(textsOf(d.City)), Email: first(textsOf(d.Email))}
	if x.CN == "" && len(x.O) == 0 && len(x.OU) == 0 && x.C == "" && x.L == "" && x.Email == "" {
		return nil
	}
	x.DN = x.Join(", ", false)
	return x
}

// Onyphe reads ONYPHE's datascan (and synscan) documents: an API answer
// ({"results": [...]}, v1 or v2), the export's JSON lines, or an array.
// Each document is one service observation (docs/ingest-enrich.md says
// what is kept); documents of other categories (geoloc, resolver,
// inetnum, ...) are counted as skipped.
func Onyphe(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("onyphe")
	return opt.jsonRecords(r, "onyphe", bad, []string{"results"}, func(n int, rec []byte) error {
		var x onypheRecord
		if err := scanUnmarshal(rec, &x); err != nil {
			bad(LineError{n, fmt.Errorf("json: %w", err)})
			return nil
		}
		if x.Category == "" {
			bad(LineError{n, errors.New(`not an ONYPHE document: want "@category"`)})
			return nil
		}
		if c := strings.ToLower(x.Category); c != "datascan" && c != "synscan" {
			opt.skip(n, "onyphe "+c+" document (not a service)")
			return nil
		}
		o, err := x.observation(src, opt)
		return emitBuilt(n, o, err, emit, bad)
	})
}

func (x *onypheRecord) observation(src string, opt Options) (Observation, error) {
	a, port, err := scanIPPort(x.IP, x.Port)
	if err != nil {
		return Observation{}, err
	}
	at := scanTime(x.Timestamp)
	if at.IsZero() {
		at, _ = time.Parse(time.DateOnly, strings.TrimSpace(x.SeenDate))
	}
	o := Observation{Type: TypeService, IP: a.Unmap().String(), Source: src, ObservedAt: opt.when(at)}
	o.Hostnames = hostNames(append(textsOf(x.Hostname), textsOf(x.Reverse)...)...)
	transport := "tcp"
	if strings.EqualFold(x.Transport, "udp") {
		transport = "udp"
	}
	s := &Service{Port: port, Transport: transport}
	if !strings.EqualFold(x.Category, "synscan") {
		s.Probes = x.probes()
		s.Detected = x.detected()
	}
	o.Service = s
	o.Claims = opt.scanClaim("onyphe", x.Organization, x.ASN)
	return o, nil
}

// probes: an HTTP answer (data when it is the raw response, else status
// and reason) with the certificate under it on TLS, GET of url; data of
// any other protocol as a banner (ONYPHE writes the bytes that are not
// printable as \xHH), the certificate as a TLS probe; the favicon's mmh3.
func (x *onypheRecord) probes() []Probe {
	t := x.tls()
	var probes []Probe
	resp, isHTTP := parseHTTPResponse([]byte(x.Data))
	if !isHTTP && strings.EqualFold(x.Protocol, "http") {
		if st, ok := anyInt(x.Status); ok && st >= 100 && st < 1000 {
			resp, isHTTP = &Response{Status: int(st), Reason: x.Reason}, true
		}
	}
	if isHTTP {
		if x.App != nil && x.App.HTTP != nil {
			resp.Title = x.App.HTTP.Title
		}
		path := "/"
		if x.URL != "" {
			path = pathOf(x.URL)
		}
		probes = append(probes, Probe{Request: &Request{Method: "GET", Path: path}, Response: resp, TLS: t})
	} else {
		if x.Data != "" {
			probes = append(probes, Probe{Name: "onyphe:" + strings.ToLower(x.Protocol), Banner: &Banner{Received: BytesBody(unescapeHex(x.Data))}})
		}
		if t != nil {
			probes = append(probes, Probe{TLS: t})
		}
	}
	if f := x.App; f != nil && f.Favicon != nil {
		if v, ok := anyInt(f.Favicon.ImageMMH3); ok && v >= -1<<31 && v < 1<<32 {
			m := int32(v)
			path := "/favicon.ico"
			if f.Favicon.URL != "" {
				path = pathOf(f.Favicon.URL)
			}
			probes = append(probes, faviconProbe(path, "", &Body{MMH3: &m}))
		}
	}
	return probes
}

// tls reads the certificate ONYPHE parsed: subject, issuer, the subject's
// altnames, the serial (colon hex), the SHA-256 fingerprint, validity.
func (x *onypheRecord) tls() *TLS {
	t := &TLS{Subject: x.Subject.dn(), Issuer: x.Issuer.dn()}
	if x.Subject != nil {
		t.SANs = textsOf(x.Subject.AltName)
	}
	if x.Serial != "" {
		t.Serial = colonHexSerial(x.Serial)
	}
	if f := x.Fingerprint; f != nil && isHex(strings.ToLower(f.SHA256), 64) {
		t.SHA256 = strings.ToLower(f.SHA256)
	}
	if v := x.Validity; v != nil {
		t.NotBefore, t.NotAfter = rfc3339(v.NotBefore), rfc3339(v.NotAfter)
	}
	if t.empty() {
		return nil
	}
	return t
}

// detected: the protocol, the product ONYPHE identified (its vendor and
// name, "Apache HTTP Server"; else the device's), version and CPEs; the
// device and the OS as info.
func (x *onypheRecord) detected() *Detected {
	d := &Detected{By: "onyphe", Service: strings.ToLower(x.Protocol), Version: x.ProductVersion}
	d.Product = vendorProduct(x.ProductVendor, x.Product)
	var info []string
	if dv := x.Device; dv != nil && (dv.Product != "" || dv.ProductVendor != "" || dv.Class != "") {
		if d.Product == "" {
			d.Product, d.Version = vendorProduct(dv.ProductVendor, dv.Product), dv.ProductVersion
		}
		info = append(info, "device: "+strings.TrimSpace(strings.Join([]string{dv.Class, vendorProduct(dv.ProductVendor, dv.Product), dv.ProductVersion}, " ")))
	}
	if x.OS != "" {
		info = append(info, "os: "+x.OS)
	}
	d.Info = strings.Join(info, "; ")
	for _, c := range textsOf(x.CPE) {
		if strings.HasPrefix(c, "cpe:") {
			d.CPE = append(d.CPE, c)
		}
	}
	if d.Service == "" && d.Product == "" && d.Info == "" && len(d.CPE) == 0 {
		return nil
	}
	return d
}

// vendorProduct names a product with its vendor ("Apache" "HTTP Server":
// "Apache HTTP Server"), once ("Fortinet" "Fortinet FortiGate").
func vendorProduct(vendor, product string) string {
	vendor, product = strings.TrimSpace(vendor), strings.TrimSpace(product)
	if vendor == "" || strings.HasPrefix(strings.ToLower(product), strings.ToLower(vendor)) {
		return product
	}
	if product == "" {
		return vendor
	}
	return vendor + " " + product
}

// textsOf reads a member that is one string or a list of them (a string
// is not split: an organization may hold commas).
func textsOf(v any) []string {
	switch x := v.(type) {
	case string:
		if x = strings.TrimSpace(x); x != "" {
			return []string{x}
		}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
		return out
	}
	return nil
}

// anyInt reads an integer given as a JSON number or a string.
func anyInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}
