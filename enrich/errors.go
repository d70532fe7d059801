package enrich

import "errors"

// ErrCorruptState means a stored state record could not be decoded.
var ErrCorruptState = errors.New("corrupt state record")

func joinErrs(errs []error) error { return errors.Join(errs...) }
