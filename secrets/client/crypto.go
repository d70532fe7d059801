package client

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/hkdf"
)

// Alphabet is the 64-character alphabet of random keys, upload ids and
// link fragments (the base64url alphabet, in the spec's order).
const Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

const (
	// RandomKeyLen is the length of the random part of a link's fragment.
	RandomKeyLen = 20
	// IDLen is the length of a secret id returned by the server.
	IDLen = 22
	// UploadIDLen is the length of a chunked upload id.
	UploadIDLen = 22

	hkdfSalt  = "onetimelink:v2"
	ivLen     = 12
	tagLen    = 16
	keyLen    = 32
	infoEnc   = "encrypt"
	infoAuth  = "auth"
	metaLenSz = 4
)

var b64 = base64.RawURLEncoding

// randomString returns n characters of Alphabet, each alphabet[byte % 64]
// of a secure random byte (64 divides 256, so there is no bias).
func randomString(r io.Reader, n int) (string, error) {
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	for i, b := range buf {
		buf[i] = Alphabet[b%64]
	}
	return string(buf), nil
}

// NewRandomKey returns a fresh 20-character random key.
func NewRandomKey() (string, error) { return randomString(rand.Reader, RandomKeyLen) }

// NewUploadID returns a fresh 22-character chunked upload id.
func NewUploadID() (string, error) { return randomString(rand.Reader, UploadIDLen) }

// Keys are the values derived from a fullSecretKey (passphrase followed by
// randomKey). They are secret: never log them.
type Keys struct {
	// Enc is the AES-256-GCM key (HKDF info "encrypt").
	Enc [keyLen]byte
	// ReadToken is the lowercase hex of the HKDF output with info "auth";
	// it is sent as hashedKey on reads.
	ReadToken string
}

// DeriveKeys derives the encryption key and the read token from
// fullSecretKey with HKDF-SHA256 (salt "onetimelink:v2").
func DeriveKeys(fullSecretKey string) Keys {
	var k Keys
	expand := func(info string, out []byte) {
		r := hkdf.New(sha256.New, []byte(fullSecretKey), []byte(hkdfSalt), []byte(info))
		// HKDF-SHA256 can produce up to 8160 bytes: 32 never fails.
		if _, err := io.ReadFull(r, out); err != nil {
			panic("hkdf: " + err.Error())
		}
	}
	expand(infoEnc, k.Enc[:])
	var auth [keyLen]byte
	expand(infoAuth, auth[:])
	k.ReadToken = hex.EncodeToString(auth[:])
	return k
}

// FullSecretKey is the passphrase followed by the random key.
func FullSecretKey(passphrase, randomKey string) string { return passphrase + randomKey }

// ReadTokenHash is the lowercase hex SHA-256 of the 64-character read token
// string, the value a save sends as readTokenHash.
func (k Keys) ReadTokenHash() string {
	sum := sha256.Sum256([]byte(k.ReadToken))
	return hex.EncodeToString(sum[:])
}

func (k Keys) aead() cipher.AEAD {
	blk, err := aes.NewCipher(k.Enc[:])
	if err != nil {
		panic("aes: " + err.Error()) // 32-byte key: cannot fail
	}
	g, err := cipher.NewGCM(blk)
	if err != nil {
		panic("gcm: " + err.Error())
	}
	return g
}

func (k Keys) seal(plain []byte) ([]byte, error) {
	out := make([]byte, ivLen, ivLen+len(plain)+tagLen)
	if _, err := io.ReadFull(rand.Reader, out); err != nil {
		return nil, fmt.Errorf("random iv: %w", err)
	}
	return k.aead().Seal(out, out[:ivLen], plain, nil), nil
}

// EncryptText encrypts text into the wire string
// base64url(iv) + "." + base64url(ciphertext||tag).
func (k Keys) EncryptText(text string) (string, error) {
	sealed, err := k.seal([]byte(text))
	if err != nil {
		return "", err
	}
	return b64.EncodeToString(sealed[:ivLen]) + "." + b64.EncodeToString(sealed[ivLen:]), nil
}

// DecryptText decrypts a wire string made by EncryptText. A wrong key or a
// damaged message gives ErrDecrypt.
func (k Keys) DecryptText(wire string) (string, error) {
	ivPart, ctPart, ok := strings.Cut(wire, ".")
	if !ok {
		return "", fmt.Errorf("%w: no dot in message", ErrDecrypt)
	}
	iv, err := b64.DecodeString(ivPart)
	if err != nil || len(iv) != ivLen {
		return "", fmt.Errorf("%w: bad iv", ErrDecrypt)
	}
	ct, err := b64.DecodeString(ctPart)
	if err != nil || len(ct) < tagLen {
		return "", fmt.Errorf("%w: bad ciphertext", ErrDecrypt)
	}
	plain, err := k.aead().Open(nil, iv, ct, nil)
	if err != nil {
		return "", ErrDecrypt
	}
	return string(plain), nil
}

// FileMeta is the JSON header inside an encrypted file.
type FileMeta struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size"`
}

// EncryptFile encrypts uint32_be(len(meta)) || meta || data into
// iv || ciphertext || tag. meta.Size is set to len(data) and an empty
// type becomes application/octet-stream.
func (k Keys) EncryptFile(meta FileMeta, data []byte) ([]byte, error) {
	meta.Size = int64(len(data))
	if meta.Type == "" {
		meta.Type = "application/octet-stream"
	}
	mj, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("encode meta: %w", err)
	}
	plain := make([]byte, metaLenSz, metaLenSz+len(mj)+len(data))
	binary.BigEndian.PutUint32(plain, uint32(len(mj)))
	plain = append(plain, mj...)
	plain = append(plain, data...)
	return k.seal(plain)
}

// EncryptedFileSize is the length of EncryptFile's output for a file of
// size bytes with the given meta (meta.Size is taken as size).
func EncryptedFileSize(meta FileMeta, size int64) int64 {
	meta.Size = size
	if meta.Type == "" {
		meta.Type = "application/octet-stream"
	}
	mj, _ := json.Marshal(meta)
	return ivLen + metaLenSz + int64(len(mj)) + size + tagLen
}

// DecryptFile decrypts iv || ciphertext || tag and splits the plaintext into
// its meta and the file bytes. A wrong key or damaged blob gives ErrDecrypt.
func (k Keys) DecryptFile(blob []byte) (FileMeta, []byte, error) {
	var meta FileMeta
	if len(blob) < ivLen+tagLen {
		return meta, nil, fmt.Errorf("%w: file too short", ErrDecrypt)
	}
	plain, err := k.aead().Open(nil, blob[:ivLen], blob[ivLen:], nil)
	if err != nil {
		return meta, nil, ErrDecrypt
	}
	if len(plain) < metaLenSz {
		return meta, nil, fmt.Errorf("%w: no meta length", ErrDecrypt)
	}
	n := binary.BigEndian.Uint32(plain)
	if uint64(n) > uint64(len(plain)-metaLenSz) {
		return meta, nil, fmt.Errorf("%w: meta length out of range", ErrDecrypt)
	}
	if err := json.Unmarshal(plain[metaLenSz:metaLenSz+int(n)], &meta); err != nil {
		return meta, nil, fmt.Errorf("%w: meta: %v", ErrDecrypt, err)
	}
	// The authenticated bytes are the file; meta.Size is informative.
	return meta, plain[metaLenSz+int(n):], nil
}
