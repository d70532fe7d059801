package ingest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// What the nessus and openvas adapters share: a vulnerability scanner's
// report is mostly findings (thousands in a security team's file); what
// identifies a service is its detection results, whose text names the
// product in the scanner's words, and the CPEs it gives. The adapters keep
// that text as banner probes (the rules read it as they read any banner
// that quotes a scanner's report: docs/rules.md, "The scanner's own
// identification") and give the report's structured identification as
// the service's detected.

var (
	// vulnCPE is a CPE as the reports write them (2.2 URI or 2.3).
	vulnCPE = regexp.MustCompile(`\bcpe:(?:/[aoh]|2\.3:[aoh]):[^\s"'<>,;()|]+`)
	// vulnDetected is Greenbone's "Detected <product>" line.
	vulnDetected = regexp.MustCompile(`(?m)^[ \t]*Detected ([A-Z][^\r\n]{2,80}?)[ \t]*\r?$`)
	// vulnVersion is the version line of Greenbone's and Nessus's
	// detection results ("Version: 7.2.4", "Installed version : 9.1.4").
	vulnVersion = regexp.MustCompile(`(?m)^[ \t]*(?:Installed version|Version)[ \t]*:[ \t]*(\S+)[ \t]*\r?$`)
	// vulnInstalled is the installed-version line of a finding, the version
	// the check read from the service.
	vulnInstalled = regexp.MustCompile(`(?mi)^[ \t]*Installed version[ \t]*:[ \t]*(\S[^\r\n]*?)[ \t]*\r?$`)
	// vulnIdentLine is a line of a detection result that names what was
	// found: its product, version, model, firmware or build.
	vulnIdentLine = regexp.MustCompile(`(?mi)^[ \t]*(?:Installed version|Version|Product|Model|Firmware(?: version)?|Build)[ \t]*:[ \t]*\S`)
)

// vulnMaxFindings is how many findings (severity above informational) of
// one service are kept as probes, each for the installed version it
// quotes: the version a finding read identifies the product, the rest of
// the findings do not.
const vulnMaxFindings = 3

// vulnMaxCPEs is the most CPEs a service's detected keeps.
const vulnMaxCPEs = 16

// vulnCPEs are the CPEs text quotes.
func vulnCPEs(text string) []string {
	return vulnCPE.FindAllString(text, vulnMaxCPEs)
}

// addCPE appends each CPE of add not yet in cpes, up to vulnMaxCPEs.
func addCPE(cpes []string, add ...string) []string {
	for _, c := range add {
		c = strings.TrimSpace(c)
		if c == "" || !strings.HasPrefix(c, "cpe:") || slices.Contains(cpes, c) || len(cpes) >= vulnMaxCPEs {
			continue
		}
		cpes = append(cpes, c)
	}
	return cpes
}

// installedKey is what tells one finding's version evidence from
// another's: its installed-version lines; "" when it quotes none.
func installedKey(text string) string {
	var keys []string
	for _, m := range vulnInstalled.FindAllStringSubmatch(text, 4) {
		keys = append(keys, m[1])
	}
	return strings.Join(keys, "\n")
}

// endXMLReport settles the walk of an XML report (xmlReport) whose callback
// stops with a refusal (one of refusals: not this report, or a form to
// export otherwise), reported at line 1, or with errStop (already
// reported); a walk that ended without the report's root element is
// reported as notIt. Any other error is returned.
func endXMLReport(err error, sawRoot bool, notIt error, bad func(LineError), refusals ...error) error {
	for _, r := range refusals {
		if errors.Is(err, r) {
			bad(LineError{1, r})
			return nil
		}
	}
	switch {
	case errors.Is(err, errStop):
		return nil
	case err == nil && !sawRoot:
		bad(LineError{1, notIt})
		return nil
	}
	return err
}

// xml11As10 reads an XML document that declares version 1.1 as the
// version 1.0 that encoding/xml accepts (it refuses any other version,
// strict or not, before the first element). Burp Suite's XML exports
// declare <?xml version="1.1"?> (Burp 1.5.20 on), so do other tools; the
// differences of 1.1 (NEL line ends, C0 controls as character references)
// do not touch the elements the adapters read. Only the declaration at the
// very start (after a byte order mark or white space) is rewritten, byte
// for byte the same length; anything else passes unchanged.
func xml11As10(r io.Reader) io.Reader {
	head := make([]byte, 256)
	n, err := io.ReadFull(r, head)
	head = head[:n]
	rest := r
	if err != nil {
		rest = errReader{err}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			rest = strings.NewReader("")
		}
	}
	s := bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	s = bytes.TrimLeft(s, " \t\r\n")
	if bytes.HasPrefix(s, []byte("<?xml")) {
		if end := bytes.Index(s, []byte("?>")); end > 0 {
			decl := s[:end]
			for _, v := range []string{`version="1.1"`, `version='1.1'`} {
				if i := bytes.Index(decl, []byte(v)); i >= 0 {
					decl[i+len(v)-2] = '0' // "1.1" -> "1.0" in place (decl aliases head)
					break
				}
			}
		}
	}
	return io.MultiReader(bytes.NewReader(head), rest)
}

// errReader hands back the error reading a document's head met, so the
// decoder reports it where it would have without xml11As10.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// xmlReport walks an XML report one element at a time, keeping the path
// of open elements, so an adapter can decode the elements it wants whole
// (a host, a result) without holding the file. fn is called for each
// start element with the path above it; it may decode the element (and
// then returns true). A syntax error is reported through bad with the
// line it was met at (the records before it are in) and ends the walk.
func xmlReport(r io.Reader, format string, bad func(LineError), fn func(dec *xml.Decoder, se *xml.StartElement, path []string, line int) (bool, error)) error {
	dec := xml.NewDecoder(xml11As10(r))
	dec.Strict = false
	dec.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	var path []string
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			l, _ := dec.InputPos()
			bad(LineError{max(l, 1), fmt.Errorf("%s: xml: %w", format, err)})
			return nil
		}
		switch t := tok.(type) {
		case xml.StartElement:
			decoded, err := fn(dec, &t, path, max(line, 1))
			if err != nil {
				return err
			}
			if !decoded {
				path = append(path, t.Name.Local)
			}
		case xml.EndElement:
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
		}
	}
}

// parent is the innermost element of path, "" at the document's root.
func parent(path []string) string {
	if len(path) == 0 {
		return ""
	}
	return path[len(path)-1]
}
