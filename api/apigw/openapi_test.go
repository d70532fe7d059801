package apigw

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// samplePath fills a documented path's parameters with values the routes accept.
func samplePath(p string) string {
	return strings.NewReplacer("{ip}", "192.0.2.1", "{date}", "2026-11-23", "{name}", "ipintel.csv.gz").Replace(p)
}

// TestOpenAPI_DocumentMatchesRoutes holds the customer document and the
// gateway's routes equal: every documented /api/v1/vpn/ operation reaches
// a route (not the catch-all 404) with its method, and every route is
// documented.
func TestOpenAPI_DocumentMatchesRoutes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	h := New(Options{})
	documented := map[string]bool{} // route pattern + method
	for p, item := range doc.Paths {
		if !strings.HasPrefix(p, "/api/v1/vpn/") {
			continue
		}
		for m := range item {
			req := httptest.NewRequest(strings.ToUpper(m), samplePath(p), nil)
			_, pattern := h.own.Handler(req)
			i := slices.IndexFunc(routes, func(r route) bool { return r.pattern == pattern })
			if i < 0 {
				t.Errorf("%s %s is documented but reaches %q, no route", m, p, pattern)
				continue
			}
			if routes[i].method != strings.ToUpper(m) {
				t.Errorf("%s %s is documented, the route takes %s", m, p, routes[i].method)
			}
			documented[pattern+" "+routes[i].method] = true
		}
	}
	for _, r := range routes {
		if !documented[r.pattern+" "+r.method] {
			t.Errorf("route %s %s is not in the customer OpenAPI document", r.method, r.pattern)
		}
	}
}

// TestOpenAPI_GeneratorFriendly checks what oapi-codegen and
// openapi-typescript need (the system test runs both): OpenAPI 3.0.3
// without type lists, both security schemes, and schema names that no
// generated wrapper type takes (<operationId>Response, ...Params,
// ...RequestBody).
func TestOpenAPI_GeneratorFriendly(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.0.3" {
		t.Errorf("openapi %v, want 3.0.3", doc["openapi"])
	}
	if regexp.MustCompile(`"type":\s*\[`).Match(OpenAPI) {
		t.Error("a schema has a list of types")
	}
	comp := doc["components"].(map[string]any)
	sec := comp["securitySchemes"].(map[string]any)
	if b, _ := sec["bearerAuth"].(map[string]any); b["type"] != "http" || b["scheme"] != "bearer" {
		t.Errorf("bearerAuth %v", b)
	}
	if a, _ := sec["apiKey"].(map[string]any); a["type"] != "apiKey" || a["in"] != "query" || a["name"] != "apiKey" {
		t.Errorf("apiKey %v", a)
	}
	var ops []string
	for _, item := range doc["paths"].(map[string]any) {
		for _, op := range item.(map[string]any) {
			id, _ := op.(map[string]any)["operationId"].(string)
			if id == "" {
				t.Error("an operation without operationId")
			}
			ops = append(ops, strings.ToUpper(id[:1])+id[1:])
		}
	}
	for _, kind := range []string{"schemas", "responses", "parameters"} {
		for name := range comp[kind].(map[string]any) {
			for _, op := range ops {
				for _, suffix := range []string{"Response", "Params", "JSONRequestBody", "JSONBody", "Request"} {
					if name == op+suffix {
						t.Errorf("components.%s.%s is oapi-codegen's wrapper type of operation %s", kind, name, op)
					}
				}
			}
		}
	}
}

// TestDocument_Servers checks that servers come from the configured
// addresses, with a path-level entry only where a product is served
// elsewhere than the gateway.
func TestDocument_Servers(t *testing.T) {
	for _, tt := range []struct {
		name           string
		s              Servers
		want, pub, tld string
	}{
		{"one listener", Servers{Gateway: "http://127.0.0.1:8080", Public: "http://127.0.0.1:8080", TLD: "http://127.0.0.1:8080"}, "http://127.0.0.1:8080", "", ""},
		{"public url", Servers{Gateway: "https://api.example.test/", Public: "http://127.0.0.1:8081", TLD: "https://api.example.test"}, "https://api.example.test", "http://127.0.0.1:8081", ""},
		{"none", Servers{}, "/", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Document(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(b), "{\n \"openapi\": \"3.0.3\",\n \"info\": {") {
				t.Errorf("members not in the order written: %.80s", b)
			}
			var doc struct {
				Servers []struct{ URL string } `json:"servers"`
				Paths   map[string]struct {
					Servers []struct{ URL string } `json:"servers"`
				} `json:"paths"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Servers) != 1 || doc.Servers[0].URL != tt.want {
				t.Errorf("servers %v, want %s", doc.Servers, tt.want)
			}
			for p, want := range map[string]string{"/public/v1/lookup/{ip}": tt.pub, "/api/status": tt.tld, "/api/v1/vpn/ip/{ip}": ""} {
				got := ""
				if s := doc.Paths[p].Servers; len(s) == 1 {
					got = s[0].URL
				}
				if got != want {
					t.Errorf("%s servers %q, want %q", p, got, want)
				}
			}
		})
	}
}

// TestHandler_ServesOpenAPI checks /openapi.json on the gateway's mux.
func TestHandler_ServesOpenAPI(t *testing.T) {
	base := "http://127.0.0.1:1234"
	h := New(Options{OpenAPIServers: func() Servers { return Servers{Gateway: base} }})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, PathOpenAPI, nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" || !strings.Contains(rec.Body.String(), `"url": "`+base+`"`) {
		t.Fatalf("GET /openapi.json = %d %s %.200s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, PathOpenAPI, nil))
	if rec.Code != 405 || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Fatalf("POST /openapi.json = %d Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}
