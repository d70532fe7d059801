package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
)

// maxInput bounds an input file (the real ones are under 100 KB).
const maxInput = 16 << 20

// fetch reads src: an http(s) URL through client, an input built into the
// binary ("builtin:NAME"), or a file path.
func fetch(ctx context.Context, client *http.Client, userAgent, src string) ([]byte, error) {
	if strings.HasPrefix(src, BuiltinPrefix) {
		return readBuiltin(src)
	}
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", src, err)
		}
		return b, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", src, err)
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", src, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: %w", src, &statusError{resp.StatusCode})
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxInput))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", src, err)
	}
	return b, nil
}

var tldRe = regexp.MustCompile(`^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$`)

// ValidTLD reports whether s is a TLD label as IANA publishes them (lower case).
func ValidTLD(s string) bool { return tldRe.MatchString(s) }

// ParseTLDList parses tlds-alpha-by-domain.txt: one TLD a line, "#" comments.
// Names are lower-cased; a line that is not a TLD label is an error naming it.
func ParseTLDList(b []byte) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tld := strings.ToLower(line)
		if !ValidTLD(tld) {
			return nil, fmt.Errorf("%w: tld list line %d: %q is not a TLD", ErrBadInput, n, line)
		}
		if !seen[tld] {
			seen[tld] = true
			out = append(out, tld)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: tld list: %w", ErrBadInput, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: tld list is empty", ErrBadInput)
	}
	return out, nil
}

// ParseBootstrap parses an RFC 9224 bootstrap file (dns.json) into TLD ->
// base URLs (each ending in "/"), in the file's order.
func ParseBootstrap(b []byte) (map[string][]string, error) {
	var doc struct {
		Services [][][]string `json:"services"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: rdap bootstrap: %w", ErrBadInput, err)
	}
	if doc.Services == nil {
		return nil, fmt.Errorf("%w: rdap bootstrap: no services", ErrBadInput)
	}
	out := map[string][]string{}
	for i, svc := range doc.Services {
		if len(svc) != 2 {
			return nil, fmt.Errorf("%w: rdap bootstrap: services[%d] is not [tlds, urls]", ErrBadInput, i)
		}
		var urls []string
		for _, u := range svc[1] {
			if nu, ok := normalizeBase(u); ok {
				urls = append(urls, nu)
			}
		}
		for _, t := range svc[0] {
			t = strings.ToLower(strings.TrimSpace(t))
			for _, u := range urls {
				if !slices.Contains(out[t], u) {
					out[t] = append(out[t], u)
				}
			}
		}
	}
	return out, nil
}

// normalizeBase checks an http(s) base URL and gives it a trailing slash.
func normalizeBase(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	u.Host = strings.ToLower(u.Host)
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u.String(), true
}

// ParseWhoisTable parses "tld<TAB>server" lines (a header line "tld ..." and
// "#" comments are skipped; an empty server means none).
func ParseWhoisTable(b []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") || (n == 1 && strings.HasPrefix(line, "tld")) {
			continue
		}
		f := strings.Fields(line)
		tld := strings.ToLower(f[0])
		if !ValidTLD(tld) {
			return nil, fmt.Errorf("%w: whois table line %d: %q is not a TLD", ErrBadInput, n, f[0])
		}
		if len(f) > 1 {
			out[tld] = strings.ToLower(f[1])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: whois table: %w", ErrBadInput, err)
	}
	return out, nil
}

// ParseCandidates parses a supplemental-cctld-rdap.json shaped file into TLD -> base URLs.
func ParseCandidates(b []byte) (map[string][]string, error) {
	var doc struct {
		Servers []struct {
			TLD        string `json:"tld"`
			RDAPServer string `json:"rdapServer"`
		} `json:"ccTldRdapServers"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w: stealth candidates: %w", ErrBadInput, err)
	}
	out := map[string][]string{}
	for _, s := range doc.Servers {
		t := strings.ToLower(strings.TrimSpace(s.TLD))
		if u, ok := normalizeBase(s.RDAPServer); ok && ValidTLD(t) && !slices.Contains(out[t], u) {
			out[t] = append(out[t], u)
		}
	}
	return out, nil
}

// IANAWhois is what an IANA WHOIS answer says about a TLD.
type IANAWhois struct {
	// Whois is the TLD's WHOIS server ("" when none is listed).
	Whois string
	// RegistryURL is the "Registration information" address, if any.
	RegistryURL string
}

// ParseIANAWhois reads the `whois:` and `remarks: Registration information:`
// lines of an answer from whois.iana.org.
func ParseIANAWhois(b []byte) IANAWhois {
	var out IANAWhois
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "whois":
			if out.Whois == "" && v != "" && !strings.ContainsAny(v, " \t/") {
				out.Whois = strings.ToLower(v)
			}
		case "remarks":
			if r, ok := strings.CutPrefix(v, "Registration information:"); ok && out.RegistryURL == "" {
				out.RegistryURL = strings.TrimSpace(r)
			}
		}
	}
	return out
}
