package ipapi

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
)

// tableColumns are the files of a mapped table, in this order: class,
// conf, last, assets, ends (native byte order) and text.
const tableColumns = 6

// fileTableBuilder builds a Table into unlinked files of the snapshot
// cache folder, one per column, written through buffers as rows arrive,
// then maps them: the heap holds the buffers, not the rows.
type fileTableBuilder struct {
	files [tableColumns]*os.File
	w     [tableColumns]*bufio.Writer
	n     uint64 // text bytes written
	row   tableRow
	err   error
}

// newFileTableBuilder creates the column files in dir.
func newFileTableBuilder(dir string) (*fileTableBuilder, error) {
	b := &fileTableBuilder{}
	for i := range b.files {
		f, err := cacheFile(dir, "table-*.col")
		if err != nil {
			b.close()
			return nil, err
		}
		b.files[i] = f
		b.w[i] = bufio.NewWriterSize(f, 256<<10)
	}
	return b, nil
}

// add appends one row from its parts; assets counts the row's assets.
func (b *fileTableBuilder) add(ip, network string, classes []string, provider *string, confidence float64, firstSeen, lastSeen string, assets int) {
	if b.err != nil {
		return
	}
	renderRow(&b.row, ip, network, classes, provider, confidence, firstSeen, lastSeen, assets)
	r := &b.row
	b.n += uint64(len(r.text))
	ne := binary.NativeEndian
	for _, err := range []error{
		b.w[0].WriteByte(r.class),
		write(b.w[1], ne.AppendUint64(b.w[1].AvailableBuffer(), math.Float64bits(r.conf))),
		write(b.w[2], ne.AppendUint64(b.w[2].AvailableBuffer(), uint64(r.last))),
		write(b.w[3], ne.AppendUint16(b.w[3].AvailableBuffer(), r.assets)),
		write(b.w[4], ne.AppendUint64(b.w[4].AvailableBuffer(), b.n)),
		write(b.w[5], r.text),
	} {
		if err != nil {
			b.err = fmt.Errorf("export table: %w", err)
			return
		}
	}
}

func write(w *bufio.Writer, p []byte) error {
	_, err := w.Write(p)
	return err
}

// table flushes and maps the columns; the files are closed either way
// (their maps keep them).
func (b *fileTableBuilder) table() (*Table, error) {
	defer b.close()
	if b.err != nil {
		return nil, b.err
	}
	var regions [tableColumns][]byte
	for i, w := range b.w {
		if err := w.Flush(); err != nil {
			unmapAll(regions[:])
			return nil, fmt.Errorf("export table: %w", err)
		}
		st, err := b.files[i].Stat()
		if err == nil {
			regions[i], err = mapFile(b.files[i], st.Size())
		}
		if err != nil {
			unmapAll(regions[:])
			return nil, fmt.Errorf("export table: %w", err)
		}
	}
	t := &Table{
		class:  asSlice[uint8](regions[0]),
		conf:   asSlice[float64](regions[1]),
		last:   asSlice[int64](regions[2]),
		assets: asSlice[uint16](regions[3]),
		ends:   asSlice[uint64](regions[4]),
		text:   regions[5],
		owner:  newMapping(regions[:]...),
	}
	n := len(t.ends)
	if len(t.class) != n || len(t.conf) != n || len(t.last) != n || len(t.assets) != n || (n > 0 && t.ends[n-1] != uint64(len(t.text))) {
		return nil, fmt.Errorf("export table: columns of unequal length (%d rows)", n)
	}
	return t, nil
}

// close closes the files (the maps outlive them).
func (b *fileTableBuilder) close() {
	for _, f := range b.files {
		if f != nil {
			_ = f.Close()
		}
	}
}
