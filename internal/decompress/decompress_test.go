package decompress

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// The real feed the compressed inputs are made of (Tor exit list sample).
const plainFile = "../../ingest/testdata/exit-addresses"

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zst(t *testing.T, b []byte) []byte {
	t.Helper()
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll(b, nil)
}

func readAll(t *testing.T, in []byte) ([]byte, error) {
	t.Helper()
	r, err := Reader(bytes.NewReader(in))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func TestReader_Formats(t *testing.T) {
	plain, err := os.ReadFile(plainFile)
	if err != nil {
		t.Fatal(err)
	}
	// bzip2 has no writer in the standard library: the fixture was made
	// with `bzip2 -9` from the same file.
	bz, err := os.ReadFile("testdata/exit-addresses.bz2")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   []byte
	}{
		{"plain", plain},
		{"gzip", gz(t, plain)},
		{"gzip, two members", append(gz(t, plain[:1000]), gz(t, plain[1000:])...)},
		{"bzip2", bz},
		{"zstd", zst(t, plain)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(t, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, plain) {
				t.Fatalf("got %d bytes, want %d", len(got), len(plain))
			}
		})
	}
}

func TestReader_ShortAndEmpty(t *testing.T) {
	for _, in := range []string{"", "a", "\x1f", "BZ", "10.0.0.0/8\n"} {
		got, err := readAll(t, []byte(in))
		if err != nil || string(got) != in {
			t.Errorf("%q: got %q, %v", in, got, err)
		}
	}
}

// A cut compressed stream gives what came before the cut, then one error
// that says so.
func TestReader_Truncated(t *testing.T) {
	plain, err := os.ReadFile(plainFile)
	if err != nil {
		t.Fatal(err)
	}
	bz, err := os.ReadFile("testdata/exit-addresses.bz2")
	if err != nil {
		t.Fatal(err)
	}
	for name, full := range map[string][]byte{"gzip": gz(t, plain), "bzip2": bz, "zstd": zst(t, plain)} {
		t.Run(name, func(t *testing.T) {
			got, err := readAll(t, full[:len(full)*2/3])
			if err == nil {
				t.Fatal("no error for a truncated stream")
			}
			if !errors.Is(err, ErrTruncated) {
				t.Errorf("error %v does not wrap ErrTruncated", err)
			}
			if !strings.HasPrefix(err.Error(), name+":") {
				t.Errorf("error %q does not name %s", err, name)
			}
			if !bytes.HasPrefix(plain, got) {
				t.Errorf("the %d bytes read are not the start of the input", len(got))
			}
		})
	}
}
