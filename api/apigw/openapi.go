package apigw

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/netintel/netintel/internal/httpx"
)

// OpenAPI is the customer OpenAPI 3.0.3 document as written: the gateway
// routes (Bearer and apiKey security), the keyless public evaluation
// endpoints and the TLD status API. Its servers entry is a placeholder;
// Document fills in the configured addresses. It is the source
// test/oapiclient is generated from (docs/gateway.md, "OpenAPI").
//
//go:embed openapi.json
var OpenAPI []byte

// PathOpenAPI is where the gateway serves the customer document.
const PathOpenAPI = "/openapi.json"

// Servers are the base URLs the customer document names: Gateway for the
// gateway's routes (and the document's servers), Public and TLD for the
// public endpoints and the TLD API, named on their paths when they are
// served elsewhere than the gateway ("" or equal to Gateway: not named).
type Servers struct {
	Gateway string
	Public  string
	TLD     string
}

// Document returns the customer OpenAPI document with servers set from s,
// its members in the order written.
func Document(s Servers) ([]byte, error) {
	doc, err := decodeObject(OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	gw := strings.TrimSuffix(s.Gateway, "/")
	if gw == "" {
		gw = "/"
	}
	servers := func(url, what string) json.RawMessage {
		b, _ := json.Marshal([]map[string]string{{"url": url, "description": what}})
		return b
	}
	doc.set("servers", servers(gw, "the gateway (api.public_url, else its listen address)"))
	rawPaths, ok := doc.get("paths")
	if !ok {
		return nil, fmt.Errorf("openapi: no paths")
	}
	paths, err := decodeObject(rawPaths)
	if err != nil {
		return nil, fmt.Errorf("openapi paths: %w", err)
	}
	for i, p := range paths.keys {
		var base, what string
		switch {
		case strings.HasPrefix(p, "/public/"):
			base, what = s.Public, "the IP intelligence backend's public endpoints"
		case strings.HasPrefix(p, "/api/status"), strings.HasPrefix(p, "/api/results"), strings.HasPrefix(p, "/download/"):
			base, what = s.TLD, "the TLD status API"
		}
		base = strings.TrimSuffix(base, "/")
		if base == "" || base == gw {
			continue
		}
		item, err := decodeObject(paths.vals[i])
		if err != nil {
			return nil, fmt.Errorf("openapi path %s: %w", p, err)
		}
		item.set("servers", servers(base, what))
		paths.vals[i] = item.encode()
	}
	doc.set("paths", paths.encode())
	var out bytes.Buffer
	if err := json.Indent(&out, doc.encode(), "", " "); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// object is a JSON object with its members in order.
type object struct {
	keys []string
	vals []json.RawMessage
}

func decodeObject(b []byte) (*object, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	o := &object{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		o.keys = append(o.keys, t.(string))
		o.vals = append(o.vals, v)
	}
	return o, nil
}

func (o *object) get(k string) (json.RawMessage, bool) {
	if i := slices.Index(o.keys, k); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// set replaces k's value, or appends k.
func (o *object) set(k string, v json.RawMessage) {
	if i := slices.Index(o.keys, k); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys, o.vals = append(o.keys, k), append(o.vals, v)
}

// encode writes the object compactly, in order.
func (o *object) encode() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		_ = json.Compact(&b, o.vals[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// openAPIHandler serves Document for the servers servers() returns at the
// time of the request (a port 0 is known once the listener is bound); the
// rendered document is kept while they stay the same.
func openAPIHandler(servers func() Servers) httpx.HandlerFunc {
	var mu sync.Mutex
	var last Servers
	var body []byte
	return func(w http.ResponseWriter, _ *http.Request) error {
		s := Servers{}
		if servers != nil {
			s = servers()
		}
		mu.Lock()
		if body == nil || s != last {
			b, err := Document(s)
			if err != nil {
				mu.Unlock()
				return fmt.Errorf("render the OpenAPI document: %w", err)
			}
			body, last = b, s
		}
		b := body
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(b)
		return nil
	}
}
