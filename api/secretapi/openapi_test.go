package secretapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/netintel/netintel/api/secretapi"
	"github.com/netintel/netintel/internal/testutil"
)

// TestOpenAPI_MatchesMux: the document describes exactly the endpoints
// Mount serves, POST only, and every ref resolves.
func TestOpenAPI_MatchesMux(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(secretapi.OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	mux := http.NewServeMux()
	secretapi.New(nil, secretapi.Options{}, testutil.Logger(t)).Mount(mux)
	for path, ops := range doc.Paths {
		if len(ops) != 1 || ops["post"] == nil {
			t.Errorf("%s: operations %v, want post only", path, keys(ops))
		}
		req, _ := http.NewRequest(http.MethodPost, path, nil)
		if _, pattern := mux.Handler(req); pattern != path {
			t.Errorf("%s is not served (pattern %q)", path, pattern)
		}
	}
	for _, p := range []string{"/api/saveSecret", "/api/saveFile", "/api/get", "/api/getFile", "/api/secretStatus", "/api/ss"} {
		if doc.Paths[p] == nil {
			t.Errorf("%s missing from openapi.json", p)
		}
	}
	for _, ref := range strings.Split(string(secretapi.OpenAPI), `"$ref": "#/components/schemas/`)[1:] {
		name := ref[:strings.IndexByte(ref, '"')]
		if doc.Components.Schemas[name] == nil {
			t.Errorf("unresolved $ref %s", name)
		}
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
