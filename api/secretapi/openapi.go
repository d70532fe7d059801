package secretapi

import _ "embed"

// OpenAPI is the OpenAPI 3.1 description of the six endpoints, with the
// decisions docs/secrets.md records. It is not served by Mount (every path
// under /api/ here is POST only); the integrator may publish it.
//
//go:embed openapi.json
var OpenAPI []byte
