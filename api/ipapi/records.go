package ipapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/netintel/netintel/internal/ipmodel"
)

// maxLine bounds one NDJSON record (a record with thousands of CVEs fits).
const maxLine = 64 << 20

// ReadNDJSON calls fn for every record of an NDJSON stream (one
// ipmodel.Record per line; blank lines skipped). The record passed to fn is
// reused for the next line.
func ReadNDJSON(r io.Reader, fn func(*ipmodel.Record) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	line := 0
	var rec ipmodel.Record
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		rec = ipmodel.Record{}
		if err := json.Unmarshal(b, &rec); err != nil {
			return fmt.Errorf("ndjson line %d: %w", line, err)
		}
		if err := fn(&rec); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("ndjson line %d: %w", line+1, err)
	}
	return nil
}
