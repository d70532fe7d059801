package publish

import (
	"bytes"
	"testing"
)

// TestRecordEncoder_MatchesMMDBType: the direct encoder writes the bytes
// mmdbtype's encoders write through the dataWriter for recordValue, record
// after record (so the pointers to strings, lists and CVE findings written
// before are the same too).
func TestRecordEncoder_MatchesMMDBType(t *testing.T) {
	recs := encoderRecords(t)
	var want bytes.Buffer
	dw := newDataWriter(&want)
	enc := newRecordEncoder()
	var got []byte
	for i := range recs {
		r := &recs[i]
		start := dw.n
		if err := dw.value(recordValue(r, dw.in)); err != nil {
			t.Fatal(err)
		}
		enc.base, enc.b = 0, got // the whole section so far: offsets from 0
		enc.record(r)
		got = enc.b
		if err := dw.flush(); err != nil {
			t.Fatal(err)
		}
		if int64(len(got)) != dw.n || !bytes.Equal(got[start:], want.Bytes()[start:]) {
			if err := dw.flush(); err != nil {
				t.Fatal(err)
			}
			t.Fatalf("record %d (%s): %d bytes from offset %d, want %d:\n got %x\nwant %x", i, r.IP, int64(len(got))-start, start, dw.n-start,
				got[start:], want.Bytes()[start:])
		}
	}
	if err := dw.flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		for i := range got {
			if got[i] != want.Bytes()[i] {
				t.Fatalf("first difference at byte %d of %d", i, len(got))
			}
		}
	}
}
