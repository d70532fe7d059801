package testutil

import (
	"fmt"
	"strings"
	"testing"
)

// A failing test shows the end of its log: the newest lines, whole, and no
// more than logLimit bytes of them.
func TestTailBuffer_KeepsTheLastWholeLines(t *testing.T) {
	var b tailBuffer
	const lines = 5000 // about 100 KiB
	for i := range lines {
		fmt.Fprintf(&b, "level=INFO msg=\"line %05d of the log\"\n", i)
	}
	out := b.String()
	if len(out) > logLimit {
		t.Errorf("kept %d bytes, want at most %d", len(out), logLimit)
	}
	if !strings.HasSuffix(out, fmt.Sprintf("line %05d of the log\"\n", lines-1)) {
		t.Errorf("the newest line is missing: ...%q", out[max(0, len(out)-80):])
	}
	if !strings.HasPrefix(out, "level=INFO") {
		t.Errorf("starts inside a line: %q...", out[:min(len(out), 80)])
	}
	if len(out) < logLimit/2 {
		t.Errorf("kept only %d bytes", len(out))
	}
	if strings.Contains(out, "line 00000 ") {
		t.Error("kept the oldest line")
	}
}
