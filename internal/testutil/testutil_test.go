package testutil

import (
	"fmt"
	"strings"
	"testing"
)

// A failing test shows the end of its log: the newest lines, whole, and no
// more than logLimit bytes of them.
func TestLockedBuffer_LimitKeepsTheLastWholeLines(t *testing.T) {
	b := LockedBuffer{Limit: logLimit}
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

// Right after the write that drops the oldest bytes, the buffer holds
// exactly Limit bytes, starting inside a line: String still starts at a
// line's beginning.
func TestLockedBuffer_LimitRightAfterADrop(t *testing.T) {
	b := LockedBuffer{Limit: 100}
	for i := range 7 { // 7 x 32 bytes: the seventh passes 2 x Limit
		fmt.Fprintf(&b, "line %02d .......................\n", i)
	}
	out := b.String()
	if !strings.HasPrefix(out, "line ") || !strings.HasSuffix(out, "line 06 .......................\n") || len(out) > 100 {
		t.Errorf("after the drop: %q", out)
	}
	// Without a limit, everything is kept.
	var all LockedBuffer
	for i := range 7 {
		fmt.Fprintf(&all, "line %02d .......................\n", i)
	}
	if got := all.String(); len(got) != 7*32 {
		t.Errorf("unlimited buffer kept %d bytes, want %d", len(got), 7*32)
	}
}
