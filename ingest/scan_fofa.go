package ingest

import (
	"errors"
	"io"
)

// FOFA reads FOFA's answers.
func FOFA(r io.Reader, opt Options, emit Emit, bad func(LineError)) error {
	return errors.New("fofa: not yet")
}
