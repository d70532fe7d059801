package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The way a user judges the fingerprints: real captures fed through
// `netintel ingest` into a running system, published, and looked up
// through the gateway. Every service observation of the accuracy corpus
// (testdata/fingerprints), each at an address of its own and with the
// date its capture carries (years back for most), must be answered with
// what `netintel rules match` says of it offline: the same vendor,
// product, version, band and precision, and no vendor where the rules
// name none. A stage between the rules and the answer (freshness
// dropping an old observation, a merge, a confidence filter, a field the
// snapshot loses) fails it.
func TestRun_CorpusLookupsAnswerAsTheRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	obsFile, ports := corpusObservations(t, filepath.Join(dir, "corpus.ndjson"))

	// Offline: what the rules say of each service.
	out, err := exec.Command(binPath, "rules", "match", "--json", obsFile).Output()
	if err != nil {
		t.Fatalf("rules match: %v", err)
	}
	type answer struct {
		IP        string `json:"ip"`
		Vendor    string `json:"vendor"`
		Product   string `json:"product"`
		Version   string `json:"version"`
		Band      string `json:"version_band"`
		Precision string `json:"version_precision"`
	}
	var want []answer
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("rules match line %q: %v", sc.Text(), err)
		}
		want = append(want, a)
	}
	if len(want) != len(ports) {
		t.Fatalf("rules match answered %d services of %d", len(want), len(ports))
	}

	p := startProc(t, runArgs(filepath.Join(dir, "data"))...)
	key := waitDevKey(t, p, filepath.Join(dir, "data"))
	for _, args := range [][]string{
		{"ingest", "--data-dir", filepath.Join(dir, "data"), "--format", "observations", "--wait", "--wait-timeout", "2m", obsFile},
		{"publish", "--data-dir", filepath.Join(dir, "data")},
	} {
		if b, err := exec.Command(binPath, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, b)
		}
	}

	lookup := func(ip string) (int, []byte) {
		req, _ := http.NewRequest("GET", "http://"+p.addr+"/api/v1/vpn/ip/"+ip, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	// The published snapshot is loaded in the background: wait for the
	// first address.
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, b := lookup(want[0].IP)
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the corpus's first address after publish = %d %s\n%s", code, b, p.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}

	named, bad := 0, 0
	for i, w := range want {
		code, b := lookup(w.IP)
		if code != 200 {
			t.Fatalf("%s (%s): %d %s", w.IP, ports[i].id, code, b)
		}
		var r struct {
			Assets []struct {
				Port      int     `json:"port"`
				Vendor    *string `json:"vendor"`
				Product   *string `json:"product"`
				Version   *string `json:"exact_version"`
				Band      *string `json:"version_band"`
				Precision *string `json:"version_precision"`
			} `json:"assets"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v: %s", w.IP, err, b)
		}
		var got answer
		for _, a := range r.Assets {
			if a.Port == ports[i].port && a.Vendor != nil {
				got = answer{IP: w.IP, Vendor: *a.Vendor, Product: deref(a.Product), Version: deref(a.Version), Band: deref(a.Band), Precision: deref(a.Precision)}
			}
		}
		if got.Vendor == "" {
			got.IP = w.IP
		}
		if w.Vendor != "" {
			named++
		}
		if got != w {
			bad++
			if bad <= 20 {
				t.Errorf("%s (%s, port %d): the API answers %+v, the rules %+v", w.IP, ports[i].id, ports[i].port, got, w)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d services answered otherwise than the rules", bad, len(want))
	}
	if named < len(want)/2 {
		t.Errorf("the rules named %d of %d services: the corpus did not load", named, len(want))
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// corpusService is where a capture's service went: its capture and port.
type corpusService struct {
	id   string
	port int
}

// corpusObservations writes every service observation of the accuracy
// corpus to path as netintel's NDJSON, each at an address of its own
// (198.18.0.0/15, the benchmarking range) and otherwise as its capture
// file has it, and says where each went, in order.
func corpusObservations(t *testing.T, path string) (string, []corpusService) {
	t.Helper()
	files, err := filepath.Glob("../../testdata/fingerprints/*/*.json")
	if err != nil || len(files) < 150 {
		t.Fatalf("corpus: %d files, %v", len(files), err)
	}
	var buf bytes.Buffer
	var svcs []corpusService
	ip := netip.MustParseAddr("198.18.0.1")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			ID          string                     `json:"id"`
			Observation map[string]json.RawMessage `json:"observation"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		svc, ok := c.Observation["service"]
		if !ok {
			continue
		}
		var s struct {
			Port int `json:"port"`
		}
		if err := json.Unmarshal(svc, &s); err != nil {
			t.Fatalf("%s: service: %v", f, err)
		}
		c.Observation["ip"] = json.RawMessage(fmt.Sprintf("%q", ip))
		line, err := json.Marshal(c.Observation)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
		svcs = append(svcs, corpusService{id: c.ID, port: s.Port})
		ip = ip.Next()
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, svcs
}
