package secretpages_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/netintel/netintel/secrets/client"
)

// The spec's test vectors, run in the page's JavaScript in Chromium, and
// cross-checked against the Go client in both directions.
func TestJS_Vectors(t *testing.T) {
	s, _ := startFakeSite(t)
	b := newBrowser(t)
	b.Do(t, chromedp.Navigate(s.URL+"/"))
	const key = "K7bQ2mXp9vRt4nLw8zYc"

	t.Run("text decryption", func(t *testing.T) {
		got := eval[string](t, b, `(async () => {
			const k = await OTS.deriveKeys("K7bQ2mXp9vRt4nLw8zYc");
			return OTS.decryptText(k, "9uCJlv0mLOve6cWh.-Z5xKVVauhg2NAM1n-AjlKZsT4m5sWjAYgKGql9AIl0");
		})()`)
		if got != "hello from 1time" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("file decryption", func(t *testing.T) {
		got := eval[map[string]any](t, b, `(async () => {
			const k = await OTS.deriveKeys("K7bQ2mXp9vRt4nLw8zYc");
			const raw = atob("uGUZGLv58lm1RelH+ZZA4pRL3caBNF/dcugFY6hiiHORfAi88QNuc90luBF+J3EGdFOWymIH6cMAK+qXiKakZvex55ygVWLjqazgBG2eCDYw2BDTSdA=");
			const blob = Uint8Array.from(raw, (c) => c.charCodeAt(0));
			const r = await OTS.decryptFile(k, blob);
			return { len: blob.length, meta: r.meta, content: new TextDecoder().decode(r.data) };
		})()`)
		want := map[string]any{"len": 86.0, "meta": map[string]any{"name": "hello.txt", "type": "text/plain", "size": 5.0}, "content": "hello"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("link parsing", func(t *testing.T) {
		got := eval[map[string]string](t, b, `OTS.parseLink("https://1time.io/v/#K7bQ2mXp9vRt4nLw8zYcAbCdEfGhIjKlMnOpQrStUv")`)
		want := map[string]string{"origin": "https://1time.io", "kind": "v", "randomKey": "K7bQ2mXp9vRt4nLw8zYc", "id": "AbCdEfGhIjKlMnOpQrStUv"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("broken links", func(t *testing.T) {
		const frag = "K7bQ2mXp9vRt4nLw8zYcAbCdEfGhIjKlMnOpQrStUv"
		bad := []string{
			"https://1time.io/v/#" + frag[1:],
			"https://1time.io/v/#" + frag + "A",
			"https://1time.io/v/#" + strings.Replace(frag, "K", "+", 1),
			"https://1time.io/v/",
			"https://1time.io/x/#" + frag,
			"http://1time.io/v/#" + frag,
		}
		in, _ := json.Marshal(bad)
		got := eval[[]string](t, b, `(`+string(in)+`).map((l) => { try { OTS.parseLink(l); return "accepted"; } catch (e) { return e.kind; } })`)
		for i, k := range got {
			if k != "broken-link" {
				t.Errorf("link %d: %s", i, k)
			}
		}
	})
	t.Run("key derivation", func(t *testing.T) {
		raw, err := os.ReadFile("../../secrets/client/testdata/kdf.txt") // OpenSSL-computed vectors
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.Split(line, "\t")
			ikm, _ := json.Marshal(f[0])
			got := eval[[]string](t, b, `(async () => {
				const k = await OTS.deriveKeys(`+string(ikm)+`);
				return [k.encHex, k.readToken, await OTS.readTokenHash(k.readToken)];
			})()`)
			if strings.Join(got, "\t") != strings.Join(f[1:], "\t") {
				t.Errorf("%s: got %v, want %v", f[0], got, f[1:])
			}
		}
	})
	t.Run("Go to JS and back", func(t *testing.T) {
		k := client.DeriveKeys("pässword" + key)
		wire, err := k.EncryptText("from Go ✓")
		if err != nil {
			t.Fatal(err)
		}
		blob, err := k.EncryptFile(client.FileMeta{Name: "g.bin", Type: "application/x-test"}, []byte{0, 1, 2, 255})
		if err != nil {
			t.Fatal(err)
		}
		got := eval[[]string](t, b, fmt.Sprintf(`(async () => {
			const k = await OTS.deriveKeys("pässword" + %q);
			const text = await OTS.decryptText(k, %q);
			const f = await OTS.decryptFile(k, OTS.unb64url(%q));
			const jsText = await OTS.encryptText(k, "from JS ✓");
			const jsFile = await OTS.encryptFile(k, {name: "j.txt", type: ""}, new TextEncoder().encode("js file"));
			return [text, JSON.stringify(f.meta), Array.from(f.data).join(","), jsText, OTS.b64url(jsFile)];
		})()`, key, wire, base64.RawURLEncoding.EncodeToString(blob)))
		if got[0] != "from Go ✓" || got[1] != `{"name":"g.bin","type":"application/x-test","size":4}` || got[2] != "0,1,2,255" {
			t.Fatalf("JS read of Go data: %v", got[:3])
		}
		text, err := k.DecryptText(got[3])
		if err != nil || text != "from JS ✓" {
			t.Fatalf("Go read of JS text: %q, %v", text, err)
		}
		jsBlob, _ := base64.RawURLEncoding.DecodeString(got[4])
		meta, data, err := k.DecryptFile(jsBlob)
		if err != nil || meta != (client.FileMeta{Name: "j.txt", Type: "application/octet-stream", Size: 7}) || string(data) != "js file" {
			t.Fatalf("Go read of JS file: %+v %q %v", meta, data, err)
		}
	})
	b.CheckConsole(t)
}
