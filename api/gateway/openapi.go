package gateway

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
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

// Document returns the customer OpenAPI document with servers set from s.
func Document(s Servers) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	gw := strings.TrimSuffix(s.Gateway, "/")
	if gw == "" {
		gw = "/"
	}
	doc["servers"] = []any{map[string]any{"url": gw, "description": "the gateway (api.public_url, else its listen address)"}}
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
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
		if m, ok := item.(map[string]any); ok {
			m["servers"] = []any{map[string]any{"url": base, "description": what}}
		}
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return append(b, '\n'), nil
}

// openAPIHandler serves Document for the servers servers() returns at the
// time of the request (a port 0 is known once the listener is bound); the
// rendered document is kept while they stay the same.
func openAPIHandler(servers func() Servers) http.HandlerFunc {
	var mu sync.Mutex
	var last Servers
	var body []byte
	return func(w http.ResponseWriter, _ *http.Request) {
		s := Servers{}
		if servers != nil {
			s = servers()
		}
		mu.Lock()
		if body == nil || s != last {
			b, err := Document(s)
			if err != nil {
				mu.Unlock()
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			body, last = b, s
		}
		b := body
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(b)
	}
}
