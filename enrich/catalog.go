package enrich

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/netintel/netintel/internal/config"
	"github.com/netintel/netintel/internal/decompress"
	"github.com/netintel/netintel/internal/ipmodel"
)

// Detection confidences and matched_via values of a CVE finding.
const (
	ConfHigh   = "high"   // an exact version inside a vulnerable range or equal to a listed version
	ConfMedium = "medium" // a version band that overlaps a vulnerable range
	ConfLow    = "low"    // the product is known, its version is not

	ViaExactVersion = "exact_version"
	ViaVersionBand  = "version_band"
	ViaProduct      = "product"

	// SourceNVD is the source of findings matched against NVD cpeMatch data.
	SourceNVD = "nvd"
)

// EOL statuses of a CVE summary (null when the product has no EOL entry).
const (
	EOLSupported = "supported"
	EOLEnded     = "eol"
	EOLUnknown   = "unknown" // the product is in the table, the version or its cycle is not
)

// Catalog is a loaded set of CVE data: NVD records indexed by CPE product,
// KEV dates, EPSS scores, EUVD and JVN identifiers and end-of-life cycles.
// It is read-only once loaded and shared by every worker loop.
type Catalog struct {
	cves      map[string]*cveInfo
	byProduct map[string][]cpeRange
	kev       map[string]string // CVE id -> date added
	epss      map[string][2]float64
	euvd      map[string]string     // CVE id -> EUVD-YYYY-N
	jvn       map[string]string     // CVE id -> JVNDB-YYYY-NNNNNN
	eol       map[string][]eolCycle // endoflife.date, consulted first
	eolTable  map[string][]eolCycle // netintel's own table
	asn       *ASNTable
	// EPSSModel is the #model_version line of the EPSS file.
	EPSSModel string
}

type cveInfo struct {
	id       string
	score    *float64
	rating   *string
	cvssVer  *string
	products []string
}

type cpeRange struct {
	cve   string
	iv    interval
	exact bool // the criteria names one version
}

// eolCycle is one release cycle: a version prefix and when its support
// ends. A zero end with ended set is endoflife.date's `eol: true` (ended,
// date not given); a zero end without it is `eol: false`.
type eolCycle struct {
	cycle version
	end   time.Time
	ended bool
}

// NewCatalog returns an empty catalog (no findings, null EOL).
func NewCatalog() *Catalog {
	return &Catalog{cves: map[string]*cveInfo{}, byProduct: map[string][]cpeRange{}, kev: map[string]string{},
		epss: map[string][2]float64{}, euvd: map[string]string{}, jvn: map[string]string{},
		eol: map[string][]eolCycle{}, eolTable: map[string][]eolCycle{}}
}

// LoadCatalog reads every catalog that cfg names (paths or http(s) URLs).
func LoadCatalog(ctx context.Context, cfg config.Catalog) (*Catalog, error) {
	c := NewCatalog()
	client := &http.Client{Timeout: cfg.FetchTimeout}
	var errs []error
	for _, loc := range cfg.NVD {
		if err := c.loadNVDLocation(ctx, client, loc); err != nil {
			errs = append(errs, err)
		}
	}
	load := func(loc, what string, f func(io.Reader) error) {
		if loc == "" {
			return
		}
		rc, err := openLocation(ctx, client, loc)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
			return
		}
		defer rc.Close()
		if err := f(rc); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", what, loc, err))
		}
	}
	if cfg.NVDAPI != nil {
		if err := c.loadNVDAPI(ctx, cfg); err != nil {
			errs = append(errs, err)
		}
	}
	load(cfg.KEV, "kev", c.LoadKEV)
	load(cfg.EPSS, "epss", c.LoadEPSS)
	load(cfg.EOL, "eol", c.LoadEOL)
	for _, loc := range cfg.EUVD {
		load(loc, "euvd", c.LoadEUVD)
	}
	for _, loc := range cfg.JVN {
		load(loc, "jvn", c.LoadJVN)
	}
	cpes := EndOfLifeCPE(cfg.EndOfLifeCPE)
	for _, loc := range cfg.EndOfLife {
		files, err := expandFolder(loc, endOfLifePatterns)
		if err != nil {
			errs = append(errs, fmt.Errorf("endoflife: %w", err))
			continue
		}
		for _, f := range files {
			name := endOfLifeName(f)
			load(f, "endoflife", func(r io.Reader) error { return c.LoadEndOfLife(name, r, cpes) })
		}
	}
	if len(cfg.ASN) > 0 {
		if err := c.loadASNLocations(ctx, client, cfg.ASN); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	return c, nil
}

// loadASNLocations reads the IP-to-ASN tables at locs into one table (a
// v4 and a v6 file, or the combined one); their attributions are observed
// at the time of loading, as a feed's entries are listed at its fetch.
func (c *Catalog) loadASNLocations(ctx context.Context, client *http.Client, locs []string) error {
	var readers []io.Reader
	for _, loc := range locs {
		rc, err := openLocation(ctx, client, loc)
		if err != nil {
			return fmt.Errorf("asn: %w", err)
		}
		defer rc.Close()
		readers = append(readers, rc, strings.NewReader("\n"))
	}
	t, bad, err := LoadASN(io.MultiReader(readers...))
	if err != nil {
		return fmt.Errorf("asn %s: %w", strings.Join(locs, ", "), err)
	}
	if t.Len() == 0 {
		return fmt.Errorf("asn %s: no range read (%d malformed lines)", strings.Join(locs, ", "), bad)
	}
	t.ObservedAt = ipmodel.FormatTime(time.Now())
	c.asn = t
	return nil
}

// SetASN sets the IP-to-ASN table records are attributed from (nil = none).
func (c *Catalog) SetASN(t *ASNTable) { c.asn = t }

// ASN returns the loaded IP-to-ASN table, nil when none is configured.
func (c *Catalog) ASN() *ASNTable { return c.asn }

// openLocation opens a catalog file or http(s) URL, decompressing a gzip,
// bzip2 or zstd body (recognised by its magic number: the NVD feeds'
// .json.gz, EPSS's .csv.gz).
func openLocation(ctx context.Context, client *http.Client, loc string) (io.ReadCloser, error) {
	rc, err := openRaw(ctx, client, loc)
	if err != nil {
		return nil, err
	}
	dr, err := decompress.Reader(rc)
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	return readCloser{dr, func() error { return errors.Join(dr.Close(), rc.Close()) }}, nil
}

// readCloser pairs a reader with the function that closes what lies under it.
type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

func openRaw(ctx context.Context, client *http.Client, loc string) (io.ReadCloser, error) {
	if strings.HasPrefix(loc, "http://") || strings.HasPrefix(loc, "https://") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("fetch %s: status %s", loc, resp.Status)
		}
		return resp.Body, nil
	}
	return os.Open(loc)
}

// nvdFilePatterns are the files of an NVD folder that are read: JSON,
// plain or compressed (the NVD 2.0 yearly feeds are .json.gz).
var nvdFilePatterns = []string{"*.json", "*.json.gz", "*.json.bz2", "*.json.zst"}

// expandFolder returns loc, or the files of folder loc that match one of
// patterns, sorted.
func expandFolder(loc string, patterns []string) ([]string, error) {
	fi, err := os.Stat(loc)
	if err != nil || !fi.IsDir() {
		return []string{loc}, nil
	}
	var files []string
	for _, pat := range patterns {
		m, err := filepath.Glob(filepath.Join(loc, pat))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", loc, err)
		}
		files = append(files, m...)
	}
	slices.Sort(files)
	return files, nil
}

func (c *Catalog) loadNVDLocation(ctx context.Context, client *http.Client, loc string) error {
	if fi, err := os.Stat(loc); err == nil && fi.IsDir() {
		files, err := expandFolder(loc, nvdFilePatterns)
		if err != nil {
			return fmt.Errorf("nvd: %w", err)
		}
		for _, f := range files {
			if err := c.loadNVDLocation(ctx, client, f); err != nil {
				return err
			}
		}
		return nil
	}
	rc, err := openLocation(ctx, client, loc)
	if err != nil {
		return fmt.Errorf("nvd: %w", err)
	}
	defer rc.Close()
	if err := c.LoadNVD(rc); err != nil {
		return fmt.Errorf("nvd %s: %w", loc, err)
	}
	return nil
}

// nvdCVE is the part of an NVD CVE API 2.0 record the matcher reads.
type nvdCVE struct {
	ID      string `json:"id"`
	Metrics map[string][]struct {
		Type     string `json:"type"`
		CvssData struct {
			Version      string  `json:"version"`
			BaseScore    float64 `json:"baseScore"`
			BaseSeverity string  `json:"baseSeverity"`
		} `json:"cvssData"`
		BaseSeverity string `json:"baseSeverity"` // V2 keeps it here
	} `json:"metrics"`
	Configurations []struct {
		Nodes []struct {
			CpeMatch []struct {
				Vulnerable            bool   `json:"vulnerable"`
				Criteria              string `json:"criteria"`
				VersionStartIncluding string `json:"versionStartIncluding"`
				VersionStartExcluding string `json:"versionStartExcluding"`
				VersionEndIncluding   string `json:"versionEndIncluding"`
				VersionEndExcluding   string `json:"versionEndExcluding"`
			} `json:"cpeMatch"`
		} `json:"nodes"`
	} `json:"configurations"`
}

// LoadNVD reads one NVD CVE JSON 2.0 record (the `cve` object, or a
// wrapper with a `cve` member) or an API response with `vulnerabilities`.
func (c *Catalog) LoadNVD(r io.Reader) error {
	var doc nvdDoc
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return c.addNVDDoc(&doc)
}

// nvdDoc is an NVD JSON document: one record, a {"cve": ...} wrapper, or
// an API response or feed with vulnerabilities (and the API's paging).
type nvdDoc struct {
	nvdCVE
	CVE             *nvdCVE `json:"cve"`
	Vulnerabilities []struct {
		CVE nvdCVE `json:"cve"`
	} `json:"vulnerabilities"`
	ResultsPerPage int `json:"resultsPerPage"`
	StartIndex     int `json:"startIndex"`
	TotalResults   int `json:"totalResults"`
}

func (c *Catalog) addNVDDoc(doc *nvdDoc) error {
	var recs []nvdCVE
	switch {
	case doc.Vulnerabilities != nil:
		for _, v := range doc.Vulnerabilities {
			recs = append(recs, v.CVE)
		}
	case doc.CVE != nil:
		recs = append(recs, *doc.CVE)
	default:
		recs = append(recs, doc.nvdCVE)
	}
	for _, rec := range recs {
		if !strings.HasPrefix(rec.ID, "CVE-") {
			return fmt.Errorf("record without a CVE id")
		}
		c.addNVD(rec)
	}
	return nil
}

// metricOrder is the preference among CVSS metrics: newest version first.
var metricOrder = []string{"cvssMetricV40", "cvssMetricV31", "cvssMetricV30", "cvssMetricV2"}

func (c *Catalog) addNVD(rec nvdCVE) {
	if old := c.cves[rec.ID]; old != nil {
		// A later record of the same CVE (the modified feed, the API)
		// replaces the earlier one.
		for _, prod := range old.products {
			c.byProduct[prod] = slices.DeleteFunc(c.byProduct[prod], func(r cpeRange) bool { return r.cve == rec.ID })
		}
	}
	info := &cveInfo{id: rec.ID}
	for _, key := range metricOrder {
		ms := rec.Metrics[key]
		if len(ms) == 0 {
			continue
		}
		m := ms[0]
		for _, x := range ms {
			if x.Type == "Primary" {
				m = x
				break
			}
		}
		score := m.CvssData.BaseScore
		rating := strings.ToLower(m.CvssData.BaseSeverity)
		if rating == "" {
			rating = strings.ToLower(m.BaseSeverity)
		}
		ver := m.CvssData.Version
		info.score, info.cvssVer = &score, &ver
		if rating != "" {
			info.rating = &rating
		}
		break
	}
	seen := map[string]bool{}
	for _, conf := range rec.Configurations {
		for _, n := range conf.Nodes {
			for _, m := range n.CpeMatch {
				if !m.Vulnerable {
					continue
				}
				prod, ver, ok := splitCPE(m.Criteria)
				if !ok {
					continue
				}
				cr := cpeRange{cve: rec.ID}
				switch {
				case ver != "*" && ver != "-" && ver != "":
					cr.iv, cr.exact = point(parseVersion(ver)), true
				default:
					if s := m.VersionStartIncluding; s != "" {
						cr.iv.lo, cr.iv.loInc = parseVersion(s), true
					} else if s := m.VersionStartExcluding; s != "" {
						cr.iv.lo = parseVersion(s)
					}
					if s := m.VersionEndExcluding; s != "" {
						cr.iv.hi = parseVersion(s)
					} else if s := m.VersionEndIncluding; s != "" {
						cr.iv.hi, cr.iv.hiInc = parseVersion(s), true
					}
				}
				c.byProduct[prod] = append(c.byProduct[prod], cr)
				if !seen[prod] {
					seen[prod] = true
					info.products = append(info.products, prod)
				}
			}
		}
	}
	c.cves[rec.ID] = info
}

// splitCPE returns "cpe:2.3:part:vendor:product" and the version (with the
// update field appended when it names one, as in ivanti 9.1:r1).
func splitCPE(cpe string) (product, version string, ok bool) {
	f := strings.Split(cpe, ":")
	if len(f) < 6 || f[0] != "cpe" || f[1] != "2.3" {
		return "", "", false
	}
	product = strings.Join(f[:5], ":")
	version = f[5]
	if len(f) > 6 && f[6] != "*" && f[6] != "-" && f[6] != "" && version != "*" {
		version += f[6]
	}
	return product, version, true
}

// LoadKEV reads the CISA KEV catalog JSON.
func (c *Catalog) LoadKEV(r io.Reader) error {
	var doc struct {
		Vulnerabilities []struct {
			CveID     string `json:"cveID"`
			DateAdded string `json:"dateAdded"`
		} `json:"vulnerabilities"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if doc.Vulnerabilities == nil {
		return errors.New("no vulnerabilities array")
	}
	for _, v := range doc.Vulnerabilities {
		t, err := time.Parse(time.DateOnly, v.DateAdded)
		if err != nil {
			return fmt.Errorf("%s: dateAdded %q: %w", v.CveID, v.DateAdded, err)
		}
		c.kev[v.CveID] = ipmodel.FormatTime(t)
	}
	return nil
}

// LoadEPSS reads the FIRST EPSS CSV: a `#model_version:...` comment line,
// a `cve,epss,percentile` header, then one row per CVE.
func (c *Catalog) LoadEPSS(r io.Reader) error {
	br := bufio.NewReader(r)
	// Leading comment lines; the one starting #model_version is EPSS's own.
	comments := 0
	for {
		b, err := br.Peek(1)
		if err != nil || b[0] != '#' {
			break
		}
		line, _ := br.ReadString('\n')
		comments++
		if strings.HasPrefix(line, "#model_version") {
			c.EPSSModel = strings.TrimSpace(strings.TrimPrefix(line, "#"))
		}
	}
	if c.EPSSModel == "" {
		return errors.New("line 1: want the #model_version comment line")
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = 3
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("line %d: %w", comments+1, err)
	}
	if header[0] != "cve" || header[1] != "epss" || header[2] != "percentile" {
		return fmt.Errorf("line %d: want header cve,epss,percentile, got %s", comments+1, strings.Join(header, ","))
	}
	for line := comments + 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		s, err1 := strconv.ParseFloat(rec[1], 64)
		p, err2 := strconv.ParseFloat(rec[2], 64)
		if err1 != nil || err2 != nil || s < 0 || s > 1 || p < 0 || p > 1 {
			return fmt.Errorf("line %d: epss and percentile must be numbers in 0..1", line)
		}
		c.epss[rec[0]] = [2]float64{s, p}
	}
}

// LoadEOL reads netintel's end-of-life table: products, each a CPE product
// and its release cycles (version prefix, end-of-life date). Cycles from
// endoflife.date (LoadEndOfLife) are consulted before these.
func (c *Catalog) LoadEOL(r io.Reader) error {
	var doc struct {
		Products []struct {
			CPE    string `yaml:"cpe"`
			Cycles []struct {
				Cycle string `yaml:"cycle"`
				EOL   string `yaml:"eol"`
			} `yaml:"cycles"`
		} `yaml:"products"`
	}
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	for i, p := range doc.Products {
		prod, _, ok := splitCPE(p.CPE + ":*")
		if !ok {
			return fmt.Errorf("products[%d].cpe: want cpe:2.3:part:vendor:product, got %q", i, p.CPE)
		}
		for j, cy := range p.Cycles {
			end, err := time.Parse(time.DateOnly, cy.EOL)
			if err != nil {
				return fmt.Errorf("products[%d].cycles[%d].eol: want YYYY-MM-DD, got %q", i, j, cy.EOL)
			}
			c.eolTable[prod] = append(c.eolTable[prod], eolCycle{cycle: parseVersion(cy.Cycle), end: end})
		}
	}
	return nil
}

// Match returns the CVE findings for a fingerprint and the asset's summary
// (nil when the fingerprint names no CPE product). now dates the summary
// and decides end of life.
func (c *Catalog) Match(fp Fingerprint, now time.Time) ([]ipmodel.CveFinding, *ipmodel.CveSummary) {
	if len(fp.CPE) == 0 {
		return nil, nil
	}
	var want interval
	var via, conf string
	switch {
	case fp.ExactVersion != "":
		want, via, conf = point(parseVersion(fp.ExactVersion)), ViaExactVersion, ConfHigh
	case fp.VersionBand != "":
		iv, ok := bandInterval(fp.VersionBand)
		if ok {
			want, via, conf = iv, ViaVersionBand, ConfMedium
		} else {
			via, conf = ViaProduct, ConfLow
		}
	default:
		via, conf = ViaProduct, ConfLow
	}
	found := map[string]bool{}
	var ids []string
	for _, prod := range fp.CPE {
		for _, r := range c.byProduct[prod] {
			if found[r.cve] {
				continue
			}
			if via != ViaProduct && !r.iv.overlaps(want) {
				continue
			}
			found[r.cve] = true
			ids = append(ids, r.cve)
		}
	}
	slices.Sort(ids)
	findings := make([]ipmodel.CveFinding, 0, len(ids))
	sum := &ipmodel.CveSummary{}
	for _, id := range ids {
		info := c.cves[id]
		f := ipmodel.CveFinding{CveID: id, DetectionConfidence: conf, Source: SourceNVD,
			SeverityScore: info.score, SeverityRating: info.rating, CvssVersion: info.cvssVer, MatchedVia: strPtr(via)}
		if e, ok := c.euvd[id]; ok {
			f.EuvdID = strPtr(e)
		}
		if j, ok := c.jvn[id]; ok {
			f.JvnID = strPtr(j)
		}
		if d, ok := c.kev[id]; ok {
			f.KevAddedAt = strPtr(d)
			sum.KevCount++
		}
		if e, ok := c.epss[id]; ok {
			f.EpssScore, f.EpssPercentile = floatPtr(e[0]), floatPtr(e[1])
		}
		if info.score != nil && (sum.MaxSeverityScore == nil || *info.score > *sum.MaxSeverityScore) {
			sum.MaxSeverityScore, sum.MaxSeverityRating = info.score, info.rating
		}
		findings = append(findings, f)
	}
	sum.TotalCount = len(findings)
	sum.EolStatus = c.eolStatus(fp, now)
	sum.LastComputedAt = strPtr(ipmodel.FormatTime(now))
	return findings, sum
}

func (c *Catalog) eolStatus(fp Fingerprint, now time.Time) *string {
	var cycles []eolCycle
	for _, p := range fp.CPE {
		cycles = append(cycles, c.eol[p]...)
	}
	for _, p := range fp.CPE {
		cycles = append(cycles, c.eolTable[p]...)
	}
	if len(cycles) == 0 {
		return nil
	}
	ver := fp.ExactVersion
	if ver == "" {
		ver = strings.TrimSuffix(fp.VersionBand, ".x")
		if strings.Contains(ver, "..") || strings.Contains(ver, ",") {
			ver = ""
		}
	}
	if ver == "" {
		return strPtr(EOLUnknown)
	}
	v := parseVersion(ver)
	for _, cy := range cycles {
		cv := cy.cycle
		if len(cv) == 0 || len(v) < len(cv) || cmpVersion(v[:len(cv)], cv) != 0 {
			continue
		}
		switch {
		case !cy.end.IsZero() && !now.Before(cy.end), cy.end.IsZero() && cy.ended:
			return strPtr(EOLEnded)
		default:
			return strPtr(EOLSupported)
		}
	}
	return strPtr(EOLUnknown)
}

func strPtr(s string) *string     { return &s }
func floatPtr(f float64) *float64 { return &f }
