package client

import (
	"strings"
	"testing"
)

// FuzzParseLink: no input panics; a refused link's error never quotes the
// part after # (it holds the key); an accepted link splits the fragment
// into key and id and has an https origin, or http on loopback.
func FuzzParseLink(f *testing.F) {
	frag := strings.Repeat("k", RandomKeyLen) + strings.Repeat("i", IDLen)
	for _, s := range []string{
		"https://s.example/v/#" + frag, "http://127.0.0.1:8080/f/#" + frag, "http://[::1]/v#" + frag,
		"http://example.com/v/#" + frag, "https://u:p@h/v/#" + frag, "https://h/v/?q=1#" + frag, "#", "",
		"https://h/x/#" + frag + "x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		l, err := ParseLink(raw)
		_, fr, hasFrag := strings.Cut(strings.TrimSpace(raw), "#")
		if err != nil {
			if hasFrag && len(fr) >= 8 && strings.Contains(err.Error(), fr) {
				t.Fatalf("error quotes the fragment: %v", err)
			}
			return
		}
		if l.RandomKey+l.ID != fr || !ValidID(l.ID) {
			t.Fatalf("accepted %q as key %q id %q", raw, l.RandomKey, l.ID)
		}
		if !strings.HasPrefix(l.Origin, "https://") && !strings.HasPrefix(l.Origin, "http://") {
			t.Fatalf("origin %q", l.Origin)
		}
		if l.Kind != KindText && l.Kind != KindFile {
			t.Fatalf("kind %v", l.Kind)
		}
	})
}
