package secretapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/netintel/netintel/secrets"
)

func TestDerive_SpecVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, full, token, hash string
	}{
		{"no passphrase", "K7bQ2mXp9vRt4nLw8zYc",
			"5e6c13f429c1e6eb0c69bc2e67e98e7aa18db0a4bac73f943858694ac3fbe957",
			"3bfecb0a1d1bc37a3e70eb843af6578ee1fa34c19fd059a89dfbdda4523bf396"},
		{"passphrase first", "correct horse" + "K7bQ2mXp9vRt4nLw8zYc",
			"236c0385cdff9e6707c0ab1d20f936c0e6ab75dc5ce09170ca528cd39cc3a10f",
			"323a850509f83d441ac10a8383cccbe356044213dd6439e9c7375eb788f35acc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, token, hash := derive(tt.full)
			if token != tt.token || hash != tt.hash {
				t.Fatalf("derive(%q) = %s, %s; want %s, %s", tt.full, token, hash, tt.token, tt.hash)
			}
			// The server's hash of a presented token is the same function.
			if got := secrets.HashToken(token); got != tt.hash {
				t.Fatalf("server HashToken = %s, want %s", got, tt.hash)
			}
		})
	}
}

func TestText_RoundTripAndViews(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const text = "the launch code is 0000 ✓"
	l := e.c.saveText(t, text, saveOpts{passphrase: "correct horse", views: 3, duration: 600})
	if _, err := parseLink(l.String()); err != nil {
		t.Fatalf("link %s: %v", l, err)
	}
	// Wrong or missing passphrase: wrong key, no view used.
	for _, pass := range []string{"", "wrong"} {
		if r, _ := e.c.readText(t, l, pass); r.Status != "wrong key" || r.Code != 200 {
			t.Fatalf("passphrase %q: %d %s", pass, r.Code, r.Status)
		}
	}
	if r := e.c.postJSON(t, "get", map[string]string{"id": l.id}); r.Status != "wrong key" {
		t.Fatalf("missing hashedKey: %s", r.Status)
	}
	for want := 2; want >= 0; want-- {
		r, got := e.c.readText(t, l, "correct horse")
		if r.Status != "ok" || got != text || r.ViewsLeft == nil || *r.ViewsLeft != want {
			t.Fatalf("read: %s %q viewsLeft %v, want ok %d", r.Status, got, r.Raw["viewsLeft"], want)
		}
		if *r.ExpiresIn < 598 || *r.ExpiresIn > 600 {
			t.Fatalf("expiresIn %d, want about 600", *r.ExpiresIn)
		}
	}
	if r, _ := e.c.readText(t, l, "correct horse"); r.Status != "no message" {
		t.Fatalf("after last view: %s", r.Status)
	}
	if e.stored(t, l.id) {
		t.Fatal("used-up secret still in the KV bucket")
	}
}

// TestSaveSecret_Rejects covers the state table row "malformed body, wrong
// scheme fields, empty message": 200, status error, newId "0".
func TestSaveSecret_Rejects(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	key, token, hash := derive("K7bQ2mXp9vRt4nLw8zYc")
	msg := encryptText(key, "x")
	tests := []struct {
		name string
		body string
	}{
		{"not json", `{"secretMessage":`},
		{"empty body", ``},
		{"empty message", `{"secretMessage":"","readTokenHash":"` + hash + `","v":3}`},
		{"missing message", `{"readTokenHash":"` + hash + `","v":3}`},
		{"message without dot", `{"secretMessage":"` + strings.ReplaceAll(msg, ".", "") + `","readTokenHash":"` + hash + `","v":3}`},
		{"message padded", `{"secretMessage":"` + msg + `==","readTokenHash":"` + hash + `","v":3}`},
		{"message wrong type", `{"secretMessage":5,"readTokenHash":"` + hash + `","v":3}`},
		{"v3 with hashedKey", `{"secretMessage":"` + msg + `","hashedKey":"` + token + `","v":3}`},
		{"both hashes", `{"secretMessage":"` + msg + `","hashedKey":"` + token + `","readTokenHash":"` + hash + `","v":3}`},
		{"uppercase hash", `{"secretMessage":"` + msg + `","readTokenHash":"` + strings.ToUpper(hash) + `","v":3}`},
		{"short hash", `{"secretMessage":"` + msg + `","readTokenHash":"` + hash[:63] + `","v":3}`},
		{"long hash", `{"secretMessage":"` + msg + `","readTokenHash":"` + hash + `0","v":3}`},
		{"missing v", `{"secretMessage":"` + msg + `","readTokenHash":"` + hash + `"}`},
		{"v 2", `{"secretMessage":"` + msg + `","readTokenHash":"` + hash + `","v":2}`},
		{"no hash", `{"secretMessage":"` + msg + `","v":3}`},
		{"duration not a number", `{"secretMessage":"` + msg + `","readTokenHash":"` + hash + `","v":3,"duration":"soon"}`},
		{"scheme 0 uppercase", `{"secretMessage":"` + msg + `","hashedKey":"` + strings.ToUpper(token) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.c.post(t, "saveSecret", "application/json", strings.NewReader(tt.body))
			if r.Code != 200 || r.Status != "error" || r.NewID == nil || *r.NewID != "0" {
				t.Fatalf("got %d %s", r.Code, r.Raw)
			}
		})
	}
}

// TestSaveSecret_Corrections: duration missing or out of range becomes
// 86400, views are clamped to 1..10, silently.
func TestSaveSecret_Corrections(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	tests := []struct {
		name          string
		fields        map[string]any
		wantExpiresIn int64
		wantViews     int
	}{
		{"defaults", map[string]any{}, 86400, 1},
		{"duration 0", map[string]any{"duration": 0}, 86400, 1},
		{"duration too long", map[string]any{"duration": 2592001}, 86400, 1},
		{"duration negative", map[string]any{"duration": -5}, 86400, 1},
		{"duration max", map[string]any{"duration": 2592000}, 2592000, 1},
		{"duration as string", map[string]any{"duration": "3600"}, 3600, 1},
		{"views 0", map[string]any{"views": 0}, 86400, 1},
		{"views 11", map[string]any{"views": 11, "duration": 60}, 60, 10},
		{"views huge", map[string]any{"views": 1e30}, 86400, 10},
		{"views -3", map[string]any{"views": -3}, 86400, 1},
		{"views 10", map[string]any{"views": 10}, 86400, 10},
		{"views null", map[string]any{"views": nil}, 86400, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rk := randomKey()
			key, token, hash := derive(rk)
			body := map[string]any{"secretMessage": encryptText(key, "x"), "readTokenHash": hash, "v": 3}
			for k, v := range tt.fields {
				body[k] = v
			}
			r := e.c.postJSON(t, "saveSecret", body)
			if r.Status != "ok" {
				t.Fatalf("save: %s", r.Raw)
			}
			g := e.c.postJSON(t, "get", map[string]string{"id": *r.NewID, "hashedKey": token})
			if g.Status != "ok" || *g.ViewsLeft != tt.wantViews-1 {
				t.Fatalf("get: %s, want viewsLeft %d", g.Raw, tt.wantViews-1)
			}
			if d := tt.wantExpiresIn - *g.ExpiresIn; d < 0 || d > 2 {
				t.Fatalf("expiresIn %d, want %d", *g.ExpiresIn, tt.wantExpiresIn)
			}
		})
	}
}

func TestSaveSecret_SchemeZero(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	rk := randomKey()
	key, token, _ := derive(rk)
	r := e.c.postJSON(t, "saveSecret", map[string]any{"secretMessage": encryptText(key, "old"), "hashedKey": token})
	if r.Status != "ok" {
		t.Fatalf("scheme 0 save: %s", r.Raw)
	}
	if r, text := e.c.readText(t, link{"v", rk, *r.NewID}, ""); r.Status != "ok" || text != "old" {
		t.Fatalf("scheme 0 read: %s %q", r.Status, text)
	}
	r = e.c.postJSON(t, "saveSecret", map[string]any{"secretMessage": encryptText(key, "old"), "hashedKey": token, "v": 0})
	if r.Status != "ok" {
		t.Fatalf("scheme 0 with v 0: %s", r.Raw)
	}
}

func TestGet_Malformed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	l := e.c.saveText(t, "x", saveOpts{})
	_, token, _ := derive(l.randomKey)
	tests := []struct {
		name                 string
		body                 string
		getCode, getFileCode int
		status               string
	}{
		{"not json", `id=1`, 200, 400, "error"},
		{"no id", `{"hashedKey":"` + token + `"}`, 200, 400, "error"},
		{"short id", `{"id":"` + l.id[:21] + `","hashedKey":"` + token + `"}`, 200, 400, "error"},
		{"id bad char", `{"id":"` + l.id[:21] + `.","hashedKey":"` + token + `"}`, 200, 400, "error"},
		{"uppercase key", `{"id":"` + l.id + `","hashedKey":"` + strings.ToUpper(token) + `"}`, 200, 400, "error"},
		{"short key", `{"id":"` + l.id + `","hashedKey":"abc"}`, 200, 400, "error"},
		{"unknown id", `{"id":"AAAAAAAAAAAAAAAAAAAAAA","hashedKey":"` + token + `"}`, 200, 200, "no message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.c.post(t, "get", "application/json", strings.NewReader(tt.body))
			if r.Code != tt.getCode || r.Status != tt.status {
				t.Fatalf("get: %d %s", r.Code, r.Raw)
			}
			r = e.c.post(t, "getFile", "application/json", strings.NewReader(tt.body))
			if r.Code != tt.getFileCode || r.Status != tt.status {
				t.Fatalf("getFile: %d %s", r.Code, r.Raw)
			}
		})
	}
	// None of that used the view.
	if r, text := e.c.readText(t, l, ""); r.Status != "ok" || text != "x" {
		t.Fatalf("read after malformed requests: %s", r.Status)
	}
}

// TestExpiry: a secret past its expiry answers no message and is deleted,
// on the service clock (read path) and by the server's per-key TTL without
// any read.
func TestExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	l := e.c.saveText(t, "x", saveOpts{duration: 30, views: 5})
	if st := e.c.postJSON(t, "secretStatus", map[string]any{"ids": []string{l.id}}); !st.Secrets[l.id] {
		t.Fatalf("status before expiry: %v", st.Raw)
	}
	e.clock.Advance(31 * time.Second)
	if st := e.c.postJSON(t, "secretStatus", map[string]any{"ids": []string{l.id}}); st.Secrets[l.id] {
		t.Fatal("status says available after expiry")
	}
	if r, _ := e.c.readText(t, l, ""); r.Status != "no message" {
		t.Fatalf("read after expiry: %s", r.Status)
	}
	if e.stored(t, l.id) {
		t.Fatal("expired record still stored")
	}

	// Per-key TTL: nobody reads, the server deletes.
	e2 := newEnv(t, envOpts{})
	l2 := e2.c.saveText(t, "y", saveOpts{duration: 1})
	if !e2.stored(t, l2.id) {
		t.Fatal("record not stored")
	}
	deadline := time.Now().Add(10 * time.Second)
	for e2.stored(t, l2.id) {
		if time.Now().After(deadline) {
			t.Fatal("record with a 1 s TTL still stored after 10 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestSecretStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	a := e.c.saveText(t, "a", saveOpts{})
	b := e.c.saveText(t, "b", saveOpts{})
	if r, _ := e.c.readText(t, b, ""); r.Status != "ok" {
		t.Fatal(r.Status)
	}
	ids := []any{a.id, b.id, "short", 42, nil, a.id, "AAAAAAAAAAAAAAAAAAAAAA"}
	for range 3 { // never uses a view
		r := e.c.postJSON(t, "secretStatus", map[string]any{"ids": ids})
		want := map[string]bool{a.id: true, b.id: false, "AAAAAAAAAAAAAAAAAAAAAA": false}
		if r.Code != 200 || r.Status != "ok" || len(r.Secrets) != len(want) {
			t.Fatalf("status: %d %s", r.Code, r.Raw)
		}
		for k, v := range want {
			if got, ok := r.Secrets[k]; !ok || got != v {
				t.Fatalf("secrets[%s] = %v (present %v), want %v", k, got, ok, v)
			}
		}
	}
	if r, _ := e.c.readText(t, a, ""); r.Status != "ok" || *r.ViewsLeft != 0 {
		t.Fatalf("status used a view: %s", r.Raw)
	}
	// Up to 128 ids are answered; the rest dropped.
	var many []string
	for i := range 200 {
		many = append(many, strings.Repeat("A", 19)+string(alphabet[i%64])+string(alphabet[i/64])+"A")
	}
	if r := e.c.postJSON(t, "secretStatus", map[string]any{"ids": many}); len(r.Secrets) != 128 {
		t.Fatalf("answered %d ids, want 128", len(r.Secrets))
	}
	if r := e.c.postJSON(t, "secretStatus", map[string]any{}); r.Status != "ok" || r.Raw["secrets"] == nil {
		t.Fatalf("no ids: %s", r.Raw)
	}
}

func TestSs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	r := e.c.post(t, "ss", "", nil)
	if r.Code != 200 || string(r.Raw["apiVersion"]) != "1" || string(r.Raw["saveSchemes"]) != "[0,3]" {
		t.Fatalf("ss: %d %s", r.Code, r.Raw)
	}
}

func TestLargeTextInObjectStore(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{inlineMax: 1024})
	text := strings.Repeat("0123456789abcdef", 4096) // 64 KiB, over inline_max
	l := e.c.saveText(t, text, saveOpts{views: 2})
	if len(e.blobs(t)) != 1 {
		t.Fatalf("blobs %v, want the text's", e.blobs(t))
	}
	for range 2 {
		if r, got := e.c.readText(t, l, ""); r.Status != "ok" || got != text {
			t.Fatalf("read: %s", r.Status)
		}
	}
	if b := e.blobs(t); len(b) != 0 {
		t.Fatalf("blob left after the last view: %v", b)
	}
}

func TestMethods_405_NoCORS(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	for _, path := range []string{"saveSecret", "saveFile", "get", "getFile", "secretStatus", "ss"} {
		for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodOptions, http.MethodPatch, http.MethodHead} {
			req, _ := http.NewRequestWithContext(t.Context(), m, e.url+"/api/"+path+"?src=dev", nil)
			req.Header.Set("Origin", "https://evil.example")
			req.Header.Set("Access-Control-Request-Method", "POST")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 405 || res.Header.Get("Allow") != "POST" {
				t.Errorf("%s %s: %d Allow %q", m, path, res.StatusCode, res.Header.Get("Allow"))
			}
			for k := range res.Header {
				if strings.HasPrefix(strings.ToLower(k), "access-control-") {
					t.Errorf("%s %s: CORS header %s", m, path, k)
				}
			}
		}
	}
	// src is optional, and no answer carries CORS headers.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/api/ss", nil)
	req.Header.Set("Origin", "https://evil.example")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("POST ss without src: %d %v", res.StatusCode, res.Header)
	}
}
