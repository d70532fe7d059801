package enrich

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Identifier shapes of the other vulnerability databases a CVE finding
// names.
var (
	cveIDRe  = regexp.MustCompile(`^CVE-\d{4}-\d{4,}$`)
	euvdIDRe = regexp.MustCompile(`^EUVD-\d{4}-\d+$`)
	jvnIDRe  = regexp.MustCompile(`^JVNDB-\d{4}-\d{6}$`)
)

// LoadEUVD reads CVE -> EUVD identifiers from an ENISA EU Vulnerability
// Database file, recognised by its first byte:
//   - the CSV dump /api/dump/cve-euvd-mapping: header euvd_id,cve_id, a row
//     per pair;
//   - JSON: an /api/search response {"items": [...], "total": n}, one
//     /api/enisaid record, or a list of records (/api/lastvulnerabilities)
//     whose `aliases` (newline-separated) name the CVE; or the
//     /api/kev/dump list of {cveId, euvdId}.
//
// A CVE already mapped keeps its first EUVD id (the dump has a handful of
// CVEs under two ids).
func (c *Catalog) LoadEUVD(r io.Reader) error {
	br := bufio.NewReader(r)
	first, err := firstByte(br)
	if err != nil {
		return err
	}
	if first == '{' || first == '[' {
		return c.loadEUVDJSON(br)
	}
	return c.loadEUVDCSV(br)
}

func (c *Catalog) addEUVD(cve, euvd string) {
	cve, euvd = strings.ToUpper(strings.TrimSpace(cve)), strings.TrimSpace(euvd)
	if _, ok := c.euvd[cve]; !ok {
		c.euvd[cve] = euvd
	}
}

func (c *Catalog) loadEUVDCSV(r io.Reader) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 2
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("line 1: %w", err)
	}
	header[0] = strings.TrimPrefix(header[0], "\ufeff")
	if header[0] != "euvd_id" || header[1] != "cve_id" {
		return fmt.Errorf("line 1: want header euvd_id,cve_id, got %s", strings.Join(header, ","))
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if !euvdIDRe.MatchString(rec[0]) || !cveIDRe.MatchString(strings.ToUpper(rec[1])) {
			return fmt.Errorf("line %d: want EUVD-YYYY-N,CVE-YYYY-N, got %s,%s", line, rec[0], rec[1])
		}
		c.addEUVD(rec[1], rec[0])
	}
}

// euvdRecord is the part of an EUVD record, or of a KEV dump entry, read.
type euvdRecord struct {
	ID      string `json:"id"`
	Aliases string `json:"aliases"`
	CveID   string `json:"cveId"`
	EuvdID  string `json:"euvdId"`
}

func (c *Catalog) loadEUVDJSON(r io.Reader) error {
	var raw json.RawMessage
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	var recs []euvdRecord
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		if err := json.Unmarshal(raw, &recs); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
	} else {
		var doc struct {
			euvdRecord
			Items *[]euvdRecord `json:"items"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		switch {
		case doc.Items != nil:
			recs = *doc.Items
		case doc.ID != "":
			recs = []euvdRecord{doc.euvdRecord}
		default:
			return errors.New("want an EUVD record, a search response with items, or a list")
		}
	}
	for i, rec := range recs {
		if rec.EuvdID != "" { // KEV dump entry
			if !euvdIDRe.MatchString(rec.EuvdID) {
				return fmt.Errorf("[%d].euvdId: want EUVD-YYYY-N, got %q", i, rec.EuvdID)
			}
			if rec.CveID != "" {
				c.addEUVD(rec.CveID, rec.EuvdID)
			}
			continue
		}
		if !euvdIDRe.MatchString(rec.ID) {
			return fmt.Errorf("[%d].id: want EUVD-YYYY-N, got %q", i, rec.ID)
		}
		for _, a := range strings.Fields(rec.Aliases) {
			if cveIDRe.MatchString(a) {
				c.addEUVD(a, rec.ID)
			}
		}
	}
	return nil
}

// LoadJVN reads CVE -> JVNDB identifiers from a JVN iPedia RSS 1.0 file
// with the mod_sec module (the jvndb.jvn.jp RSS feeds, a MyJVN
// getVulnOverviewList response): each item's <sec:identifier>JVNDB-...
// and its <sec:references id="CVE-...">. A CVE already mapped keeps its
// first JVNDB id.
func (c *Catalog) LoadJVN(r io.Reader) error {
	const secNS = "http://jvn.jp/rss/mod_sec/"
	dec := xml.NewDecoder(r)
	var (
		inItem, inID, sawRoot bool
		id                    strings.Builder
		cves                  []string
		items                 int
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if !sawRoot {
				sawRoot = true
				if t.Name.Local != "RDF" {
					return fmt.Errorf("want an RSS 1.0 rdf:RDF document, got <%s>", t.Name.Local)
				}
			}
			isSec := strings.HasPrefix(t.Name.Space, secNS)
			switch {
			case t.Name.Local == "item":
				inItem, cves = true, cves[:0]
				id.Reset()
			case inItem && isSec && t.Name.Local == "identifier":
				inID = true
			case inItem && isSec && t.Name.Local == "references":
				for _, a := range t.Attr {
					if a.Name.Local == "id" && cveIDRe.MatchString(a.Value) {
						cves = append(cves, a.Value)
					}
				}
			}
		case xml.CharData:
			if inID {
				id.Write(t)
			}
		case xml.EndElement:
			switch {
			case inID && t.Name.Local == "identifier":
				inID = false
			case inItem && t.Name.Local == "item":
				inItem = false
				items++
				jid := strings.TrimSpace(id.String())
				if !jvnIDRe.MatchString(jid) {
					return fmt.Errorf("item %d: sec:identifier: want JVNDB-YYYY-NNNNNN, got %q", items, jid)
				}
				for _, cve := range cves {
					if _, ok := c.jvn[cve]; !ok {
						c.jvn[cve] = jid
					}
				}
			}
		}
	}
	if !sawRoot {
		return errors.New("empty document")
	}
	return nil
}

// firstByte peeks at the first byte that is not white space or a UTF-8
// byte order mark.
func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.Peek(1)
		if err != nil {
			if err == io.EOF {
				return 0, errors.New("empty file")
			}
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			br.Discard(1)
		case 0xEF:
			if bom, err := br.Peek(3); err == nil && string(bom) == "\ufeff" {
				br.Discard(3)
				continue
			}
			return b[0], nil
		default:
			return b[0], nil
		}
	}
}
