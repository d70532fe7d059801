package client

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
)

// The spec's test vectors (issue 9).
const (
	vecKey      = "K7bQ2mXp9vRt4nLw8zYc"
	vecText     = "9uCJlv0mLOve6cWh.-Z5xKVVauhg2NAM1n-AjlKZsT4m5sWjAYgKGql9AIl0"
	vecTextWant = "hello from 1time"
	vecFileB64  = "uGUZGLv58lm1RelH+ZZA4pRL3caBNF/dcugFY6hiiHORfAi88QNuc90luBF+J3EGdFOWymIH6cMAK+qXiKakZvex55ygVWLjqazgBG2eCDYw2BDTSdA="
)

func TestVectors_DecryptText(t *testing.T) {
	got, err := DeriveKeys(vecKey).DecryptText(vecText)
	if err != nil {
		t.Fatal(err)
	}
	if got != vecTextWant {
		t.Fatalf("got %q, want %q", got, vecTextWant)
	}
}

func TestVectors_DecryptFile(t *testing.T) {
	blob, err := base64.StdEncoding.DecodeString(vecFileB64)
	if err != nil || len(blob) != 86 {
		t.Fatalf("vector: %d bytes, %v", len(blob), err)
	}
	meta, data, err := DeriveKeys(vecKey).DecryptFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	if want := (FileMeta{Name: "hello.txt", Type: "text/plain", Size: 5}); meta != want {
		t.Fatalf("meta %+v, want %+v", meta, want)
	}
	if string(data) != "hello" {
		t.Fatalf("data %q", data)
	}
}

func TestVectors_ParseLink(t *testing.T) {
	l, err := ParseLink("https://1time.io/v/#K7bQ2mXp9vRt4nLw8zYcAbCdEfGhIjKlMnOpQrStUv")
	if err != nil {
		t.Fatal(err)
	}
	want := Link{Kind: KindText, Origin: "https://1time.io", RandomKey: "K7bQ2mXp9vRt4nLw8zYc", ID: "AbCdEfGhIjKlMnOpQrStUv"}
	if l != want {
		t.Fatalf("got %+v, want %+v", l, want)
	}
	if l.String() != "https://1time.io/v/#K7bQ2mXp9vRt4nLw8zYcAbCdEfGhIjKlMnOpQrStUv" {
		t.Fatalf("String() = %q", l.String())
	}
}

// TestDeriveKeys checks the derivation against values computed
// independently (openssl kdf HKDF + sha256sum; see testdata/kdf.txt).
func TestDeriveKeys(t *testing.T) {
	k := DeriveKeys(vecKey)
	if len(k.ReadToken) != 64 || strings.ToLower(k.ReadToken) != k.ReadToken {
		t.Fatalf("read token not 64 lowercase hex: %d", len(k.ReadToken))
	}
	h := k.ReadTokenHash()
	if len(h) != 64 || h == k.ReadToken {
		t.Fatal("bad read token hash")
	}
	if k2 := DeriveKeys("pass" + vecKey); k2.Enc == k.Enc || k2.ReadToken == k.ReadToken {
		t.Fatal("passphrase does not change the keys")
	}
	for _, tc := range kdfVectors(t) {
		k := DeriveKeys(tc.ikm)
		if got := encHex(k); got != tc.enc {
			t.Errorf("%q: enc %s, want %s", tc.ikm, got, tc.enc)
		}
		if k.ReadToken != tc.auth {
			t.Errorf("%q: readToken %s, want %s", tc.ikm, k.ReadToken, tc.auth)
		}
		if k.ReadTokenHash() != tc.hash {
			t.Errorf("%q: readTokenHash %s, want %s", tc.ikm, k.ReadTokenHash(), tc.hash)
		}
	}
}

func TestKeys_TextRoundTrip(t *testing.T) {
	k := DeriveKeys("pw" + vecKey)
	for _, in := range []string{"x", "hello from 1time", "ünïcødé ✓ 🔑", strings.Repeat("a", 100000)} {
		wire, err := k.EncryptText(in)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(wire, "=+/") || strings.Count(wire, ".") != 1 {
			t.Fatalf("wire not base64url.base64url without padding")
		}
		got, err := k.DecryptText(wire)
		if err != nil || got != in {
			t.Fatalf("round trip: %v", err)
		}
		if _, err := DeriveKeys(vecKey).DecryptText(wire); !errors.Is(err, ErrDecrypt) {
			t.Fatalf("other key: %v, want ErrDecrypt", err)
		}
	}
	w1, _ := k.EncryptText("same")
	w2, _ := k.EncryptText("same")
	if w1 == w2 {
		t.Fatal("IV reused")
	}
}

func TestKeys_DecryptTextBad(t *testing.T) {
	k := DeriveKeys(vecKey)
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"no dot", strings.ReplaceAll(vecText, ".", "")},
		{"short iv", "AAAA." + strings.SplitN(vecText, ".", 2)[1]},
		{"bad base64", "9uCJlv0mLOve6cWh.!!!!"},
		{"tampered", vecText[:len(vecText)-2] + "AA"},
		{"no tag", "9uCJlv0mLOve6cWh.AAAA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := k.DecryptText(tc.in); !errors.Is(err, ErrDecrypt) {
				t.Fatalf("got %v, want ErrDecrypt", err)
			}
		})
	}
}

func TestKeys_FileRoundTrip(t *testing.T) {
	k := DeriveKeys(vecKey)
	data := bytes.Repeat([]byte{0, 1, 2, 0xff}, 1000)
	blob, err := k.EncryptFile(FileMeta{Name: "a b.bin"}, data)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(blob)) != EncryptedFileSize(FileMeta{Name: "a b.bin"}, int64(len(data))) {
		t.Fatalf("EncryptedFileSize disagrees: %d", len(blob))
	}
	meta, got, err := k.DecryptFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	if meta != (FileMeta{Name: "a b.bin", Type: "application/octet-stream", Size: int64(len(data))}) || !bytes.Equal(got, data) {
		t.Fatalf("round trip: %+v", meta)
	}
	for _, bad := range [][]byte{nil, blob[:20], append(bytes.Clone(blob[:len(blob)-1]), blob[len(blob)-1]^1)} {
		if _, _, err := k.DecryptFile(bad); !errors.Is(err, ErrDecrypt) {
			t.Fatalf("bad blob: %v", err)
		}
	}
}

func TestRandomString(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		k, err := NewRandomKey()
		if err != nil || len(k) != RandomKeyLen || !isAlphabet(k) {
			t.Fatalf("bad key (%d chars): %v", len(k), err)
		}
		if seen[k] {
			t.Fatal("repeated key")
		}
		seen[k] = true
	}
	// alphabet[byte % 64]: every byte maps as the spec says.
	src := bytes.NewReader([]byte{0, 63, 64, 255, 26, 52, 62})
	got, err := randomString(src, 7)
	if err != nil || got != "A_A_a0-" {
		t.Fatalf("got %q, %v", got, err)
	}
}

type kdfVector struct{ ikm, enc, auth, hash string }

func kdfVectors(t *testing.T) []kdfVector {
	t.Helper()
	b, err := os.ReadFile("testdata/kdf.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []kdfVector
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			t.Fatalf("testdata/kdf.txt: bad line with %d fields", len(f))
		}
		out = append(out, kdfVector{f[0], f[1], f[2], f[3]})
	}
	if len(out) < 3 {
		t.Fatal("testdata/kdf.txt: too few vectors")
	}
	return out
}

func encHex(k Keys) string { return hex.EncodeToString(k.Enc[:]) }
