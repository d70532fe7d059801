package secretapi_test

// A small client written from spec/one-time-secrets.md (sections 2 and 4),
// independent of the server code: key derivation, AES-256-GCM, links and
// the HTTP calls. The tests drive the server only through it (or raw HTTP).

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func randomKey() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[b[i]%64]
	}
	return string(b)
}

// derive returns the AES key, readToken and readTokenHash for fullSecretKey.
func derive(fullSecretKey string) (key []byte, token, tokenHash string) {
	salt := []byte("onetimelink:v2")
	key, err := hkdf.Key(sha256.New, []byte(fullSecretKey), salt, "encrypt", 32)
	if err != nil {
		panic(err)
	}
	auth, err := hkdf.Key(sha256.New, []byte(fullSecretKey), salt, "auth", 32)
	if err != nil {
		panic(err)
	}
	token = hex.EncodeToString(auth)
	sum := sha256.Sum256([]byte(token))
	return key, token, hex.EncodeToString(sum[:])
}

func seal(key, plain []byte) (iv, ct []byte) {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	iv = make([]byte, 12)
	_, _ = rand.Read(iv)
	return iv, gcm.Seal(nil, iv, plain, nil)
}

func open(key, iv, ct []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return gcm.Open(nil, iv, ct, nil)
}

func encryptText(key []byte, text string) string {
	iv, ct := seal(key, []byte(text))
	return base64.RawURLEncoding.EncodeToString(iv) + "." + base64.RawURLEncoding.EncodeToString(ct)
}

func decryptText(key []byte, wire string) (string, error) {
	a, b, ok := strings.Cut(wire, ".")
	if !ok {
		return "", errors.New("no dot")
	}
	iv, err := base64.RawURLEncoding.DecodeString(a)
	if err != nil {
		return "", err
	}
	ct, err := base64.RawURLEncoding.DecodeString(b)
	if err != nil {
		return "", err
	}
	p, err := open(key, iv, ct)
	return string(p), err
}

type fileMeta struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int    `json:"size"`
}

func encryptFile(key []byte, name string, data []byte) []byte {
	meta, _ := json.Marshal(fileMeta{Name: name, Type: "application/octet-stream", Size: len(data)})
	plain := binary.BigEndian.AppendUint32(nil, uint32(len(meta)))
	plain = append(append(plain, meta...), data...)
	iv, ct := seal(key, plain)
	return append(iv, ct...)
}

func decryptFile(key, blob []byte) (fileMeta, []byte, error) {
	var m fileMeta
	if len(blob) < 28 {
		return m, nil, errors.New("short")
	}
	p, err := open(key, blob[:12], blob[12:])
	if err != nil {
		return m, nil, err
	}
	n := binary.BigEndian.Uint32(p)
	if err := json.Unmarshal(p[4:4+n], &m); err != nil {
		return m, nil, err
	}
	return m, p[4+n:], nil
}

// client talks to one host.
type client struct {
	base string
	hc   *http.Client
}

// resp is the JSON answer of every endpoint, with the raw fields kept to
// check which ones are present.
type resp struct {
	Code           int
	Status         string          `json:"status"`
	NewID          *string         `json:"newId"`
	CryptedMessage string          `json:"cryptedMessage"`
	ViewsLeft      *int            `json:"viewsLeft"`
	ExpiresIn      *int64          `json:"expiresIn"`
	Secrets        map[string]bool `json:"secrets"`
	Header         http.Header
	Body           []byte // getFile success
	Raw            map[string]json.RawMessage
}

func (c *client) post(t testing.TB, path, ctype string, body io.Reader) resp {
	t.Helper()
	u := c.base + "/api/" + path
	if strings.Contains(u, "?") {
		u += "&src=dev"
	} else {
		u += "?src=dev"
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "dev/0.1 (https://example.invalid/contact)")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	r := resp{Code: res.StatusCode, Header: res.Header}
	if res.Header.Get("Content-Type") == "application/octet-stream" {
		r.Body = b
		return r
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: answer %d is not JSON: %q", path, res.StatusCode, b)
	}
	_ = json.Unmarshal(b, &r.Raw)
	return r
}

func (c *client) postJSON(t testing.TB, path string, v any) resp {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return c.post(t, path, "application/json", bytes.NewReader(b))
}

// link is what a client shares: kind v or f, randomKey and id.
type link struct {
	kind, randomKey, id string
}

func (l link) String() string { return "http://127.0.0.1/" + l.kind + "/#" + l.randomKey + l.id }

func parseLink(s string) (link, error) {
	u, err := url.Parse(s)
	if err != nil {
		return link{}, err
	}
	frag := u.Fragment
	if len(frag) != 42 || strings.Trim(frag, alphabet) != "" {
		return link{}, errors.New("broken link")
	}
	return link{kind: strings.Trim(u.Path, "/"), randomKey: frag[:20], id: frag[20:]}, nil
}

type saveOpts struct {
	passphrase string
	views      int // 0: not sent
	duration   int // 0: not sent
}

func (o saveOpts) fields() map[string]any {
	m := map[string]any{}
	if o.views != 0 {
		m["views"] = o.views
	}
	if o.duration != 0 {
		m["duration"] = o.duration
	}
	return m
}

// saveText encrypts and saves text; it fails the test unless status is ok.
func (c *client) saveText(t testing.TB, text string, o saveOpts) link {
	t.Helper()
	rk := randomKey()
	key, _, hash := derive(o.passphrase + rk)
	body := o.fields()
	body["secretMessage"] = encryptText(key, text)
	body["readTokenHash"] = hash
	body["v"] = 3
	r := c.postJSON(t, "saveSecret", body)
	if r.Code != 200 || r.Status != "ok" || r.NewID == nil || len(*r.NewID) != 22 {
		t.Fatalf("saveSecret: %d %+v", r.Code, r.Raw)
	}
	return link{kind: "v", randomKey: rk, id: *r.NewID}
}

// readText reads a text link; the answer's status and the plaintext.
func (c *client) readText(t testing.TB, l link, passphrase string) (resp, string) {
	t.Helper()
	key, token, _ := derive(passphrase + l.randomKey)
	r := c.postJSON(t, "get", map[string]string{"id": l.id, "hashedKey": token})
	if r.Status != "ok" {
		return r, ""
	}
	text, err := decryptText(key, r.CryptedMessage)
	if err != nil {
		t.Fatalf("decrypt: %v", err)
	}
	return r, text
}

// multipartBody builds a saveFile body; fields in order, file last.
func multipartBody(fields [][2]string, file []byte) (string, *bytes.Buffer) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		_ = mw.WriteField(f[0], f[1])
	}
	if file != nil {
		fw, _ := mw.CreateFormFile("file", "blob.bin")
		_, _ = fw.Write(file)
	}
	_ = mw.Close()
	return mw.FormDataContentType(), &buf
}

func fileFields(hash string, o saveOpts) [][2]string {
	f := [][2]string{{"readTokenHash", hash}, {"v", "3"}}
	if o.duration != 0 {
		f = append(f, [2]string{"duration", strconv.Itoa(o.duration)})
	}
	if o.views != 0 {
		f = append(f, [2]string{"views", strconv.Itoa(o.views)})
	}
	return f
}

// encFile is an encrypted file ready to upload.
type encFile struct {
	rk, hash string
	blob     []byte
}

func newEncFile(name string, data []byte, passphrase string) encFile {
	rk := randomKey()
	key, _, hash := derive(passphrase + rk)
	return encFile{rk: rk, hash: hash, blob: encryptFile(key, name, data)}
}

// saveFile sends the whole file in one request.
func (c *client) saveFile(t testing.TB, f encFile, o saveOpts) resp {
	t.Helper()
	ct, body := multipartBody(fileFields(f.hash, o), f.blob)
	return c.post(t, "saveFile", ct, body)
}

// sendSlice sends slice i of n of blob under upload id u.
func (c *client) sendSlice(t testing.TB, u string, i, n int, fields [][2]string, slice []byte) resp {
	t.Helper()
	ct, body := multipartBody(fields, slice)
	return c.post(t, fmt.Sprintf("saveFile?u=%s&i=%d&n=%d", u, i, n), ct, body)
}

func cut(blob []byte) [][]byte {
	var out [][]byte
	for len(blob) > 4<<20 {
		out = append(out, blob[:4<<20])
		blob = blob[4<<20:]
	}
	return append(out, blob)
}

func uploadID() string { return randomKey() + randomKey()[:2] }

// readFile reads a file link: status, and on success meta and bytes.
func (c *client) readFile(t testing.TB, l link, passphrase string) (resp, fileMeta, []byte) {
	t.Helper()
	key, token, _ := derive(passphrase + l.randomKey)
	r := c.postJSON(t, "getFile", map[string]string{"id": l.id, "hashedKey": token})
	if r.Body == nil {
		return r, fileMeta{}, nil
	}
	m, data, err := decryptFile(key, r.Body)
	if err != nil {
		t.Fatalf("decrypt file: %v", err)
	}
	r.Status = "ok"
	return r, m, data
}
