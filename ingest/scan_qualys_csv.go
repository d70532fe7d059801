package ingest

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// qualysCSVHeaderRows is how many rows before the header a Qualys CSV
// report may have (a scan report opens with its title, company and scan
// details).
const qualysCSVHeaderRows = 40

// qualysCSV reads a Qualys CSV report (told from XML by its first byte):
// a header row naming IP, QID, Port, Protocol and the result text
// ("Results" in scan reports, "RESULT" in PCI reports), then a result a
// row, after the rows a scan report puts before it. The rows are gathered
// per IP and each host is then read as an asset data report's HOST: a
// row is a VULN_INFO (QID, Type, Port, Protocol, Service, SSL, the result
// text, Last Detected as LAST_FOUND), the host's DNS name and operating
// system from DNS/HOSTNAME and OS/OPERATING SYSTEM. A CSV without a result
// column (the vulnerability list DefectDojo's Qualys_Sample_Report.csv
// is: Title, Threat, Solution, no result) carries no answer of a service
// and is refused, naming the column.
func qualysCSV(br *bufio.Reader, opt Options, emit Emit, bad func(LineError)) error {
	src := opt.source("qualys")
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	var col csvColumns
	for n := 0; col == nil; n++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) || n >= qualysCSVHeaderRows {
			bad(LineError{1, errNotQualysCSV})
			return nil
		}
		if err != nil {
			line := 1
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.StartLine
			}
			bad(LineError{line, fmt.Errorf("qualys csv: %w", err)})
			return nil
		}
		if m := newCSVColumns(rec); m.first("IP") >= 0 && m.first("QID") >= 0 {
			col = m
		}
	}
	first := col.first
	cIP, cQID, cPort, cProto := first("IP"), first("QID"), first("PORT"), first("PROTOCOL")
	cResult := first("RESULTS", "RESULT")
	for _, c := range []struct {
		i    int
		name string
	}{{cPort, `"Port"`}, {cProto, `"Protocol"`}, {cResult, `"Results" (or "RESULT")`}} {
		if c.i < 0 {
			bad(LineError{1, fmt.Errorf("qualys csv: no %s column: a service is read from a result's port, protocol and result text "+
				"(what the service answered); this CSV lists findings without them: export the scan as a Scan Report in CSV with its results, or as the Asset Data Report in XML", c.name)})
			return nil
		}
	}
	cType, cService, cSSL := first("TYPE"), first("SERVICE"), first("SSL")
	cDNS, cOS := first("DNS", "HOSTNAME", "FQDN"), first("OS", "OPERATING SYSTEM")
	cLast := first("LAST DETECTED", "LAST SCAN", "LAST_FOUND", "FIRST DETECTED")
	get := func(rec []string, i int) string {
		if i >= 0 && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	type csvHost struct {
		line int
		h    qualysHost
	}
	hosts := map[string]*csvHost{}
	var order []*csvHost
	if err := eachCSVRecord(cr, "qualys", bad, func(rec []string, line int) error {
		ip := get(rec, cIP)
		if ip == "" {
			return nil // an empty row
		}
		h, ok := hosts[ip]
		if !ok {
			h = &csvHost{line: line, h: qualysHost{IP: ip}}
			hosts[ip] = h
			order = append(order, h)
		}
		if h.h.DNS == "" {
			h.h.DNS = get(rec, cDNS)
		}
		if h.h.OS == "" {
			h.h.OS = get(rec, cOS)
		}
		typ := get(rec, cType)
		if strings.EqualFold(typ, "Information Gathered") || strings.EqualFold(typ, "IG") {
			typ = "Ig"
		}
		v := qualysVuln{QID: get(rec, cQID), Type: typ, Port: get(rec, cPort), Protocol: get(rec, cProto),
			Service: get(rec, cService), SSL: get(rec, cSSL), Result: get(rec, cResult)}
		if t := qualysCSVTime(get(rec, cLast)); !t.IsZero() {
			v.LastFound = t.Format(time.RFC3339)
		}
		h.h.Vulns = append(h.h.Vulns, v)
		return nil
	}); err != nil {
		return err
	}
	for _, h := range order {
		if err := h.h.emit(h.line, src, opt, emit, bad); err != nil {
			return err
		}
	}
	return nil
}

var errNotQualysCSV = errors.New(`not a Qualys CSV report: no header row naming "IP" and "QID" in its first 40 rows`)

// qualysCSVTime reads a Qualys CSV time: "05/25/2021 07:36:58" (month
// first, Qualys's default), else day first where the month-first reading
// fails ("22/09/2022 13:01"), else RFC 3339; UTC.
func qualysCSVTime(s string) time.Time {
	for _, layout := range []string{"01/02/2006 15:04:05", "01/02/2006 15:04", "02/01/2006 15:04:05", "02/01/2006 15:04", time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
