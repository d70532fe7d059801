// Package secretpages serves the browser pages of the one-time secret
// service: / creates a text or file link, /v/ and /f/ open one. All crypto
// runs in the page with WebCrypto (assets/static/ots.js); the key is read
// from the URL fragment and never sent. The pages call the secret API on
// their own origin, so they are mounted on the listener of the secrets
// product.
package secretpages

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// StaticPrefix is the path under which the pages' scripts and styles are
// served.
const StaticPrefix = "/static/ots/"

// CSP is the Content-Security-Policy of every page and asset: scripts and
// styles only from files on this origin (no inline script, no third
// party), fetch only to this origin, no framing, no plugins, no forms
// posting elsewhere.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'none'; base-uri 'none'; frame-ancestors 'none'; object-src 'none'"

// Mount adds the pages and their assets to mux: GET /, /v/, /f/ and
// StaticPrefix. Patterns end in {$} so / does not catch other paths.
func Mount(mux *http.ServeMux) {
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		panic("secretpages: " + err.Error()) // embedded at build time
	}
	mux.Handle("GET /{$}", page("assets/index.html"))
	mux.Handle("GET /v/{$}", page("assets/v.html"))
	mux.Handle("GET /f/{$}", page("assets/f.html"))
	files := http.StripPrefix(StaticPrefix, http.FileServerFS(static))
	mux.Handle("GET "+StaticPrefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure(w.Header())
		w.Header().Set("Cache-Control", "no-cache")
		if r.URL.Path == StaticPrefix {
			http.NotFound(w, r) // no directory listing
			return
		}
		files.ServeHTTP(w, r)
	}))
}

// secure sets the headers every response of the pages carries.
func secure(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
}

func page(name string) http.Handler {
	body, err := assets.ReadFile(name)
	if err != nil {
		panic("secretpages: " + err.Error()) // embedded at build time
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		secure(h)
		// The pages hold no secret, but /v/ and /f/ are opened from
		// one-time links: keep every copy out of caches.
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(body)
	})
}
