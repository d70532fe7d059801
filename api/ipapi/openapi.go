package ipapi

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the OpenAPI 3.1 description of the backend API, served at
// /internal/openapi.json (the customer document is the gateway's /openapi.json).
//
//go:embed openapi.json
var OpenAPI []byte

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(OpenAPI)
}
