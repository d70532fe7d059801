package ipapi

import (
	"encoding/binary"
	"errors"
	"math"
)

// mmdbData reads values of an MMDB data section in place (MaxMind DB format
// 2.0, "Output Data Section"), for the lookup's hot path: values are
// addressed by their offset in the section, strings come back as
// sub-slices of it, and nothing is allocated. maxminddb-golang's decoder
// builds Go values through reflection (an allocation per string, slice and
// pointer field) that the lookup would only copy again and encode; this
// reader lets it render the JSON body straight from the snapshot bytes.
//
// Every read is bounds-checked: a corrupt section gives errMMDBData, never
// a panic. Pointers are followed once (a pointer to a pointer is corrupt).
type mmdbData []byte

// errMMDBData reports a value the reader cannot decode: out of bounds, of
// an unknown or unexpected type, or of a size its type does not allow.
var errMMDBData = errors.New("mmdb data section: corrupt or unexpected value")

// mmdbKind is a data field type of the format.
type mmdbKind uint8

// Data field types of the format (extended types are 7 + the next byte).
const (
	kindPointer mmdbKind = 1
	kindString  mmdbKind = 2
	kindFloat64 mmdbKind = 3
	kindUint16  mmdbKind = 5
	kindUint32  mmdbKind = 6
	kindMap     mmdbKind = 7
	kindInt32   mmdbKind = 8
	kindUint64  mmdbKind = 9
	kindUint128 mmdbKind = 10
	kindSlice   mmdbKind = 11
	kindBool    mmdbKind = 14
	kindFloat32 mmdbKind = 15
)

// pointerBias is added to a pointer's value by its size in bytes.
var pointerBias = [5]uint{1: 0, 2: 2048, 3: 526336, 4: 0}

// head decodes the control byte(s) of the value at off without following
// a pointer. It returns the value's type, its size and where its payload
// starts; for a pointer, size is the offset pointed to and next the offset
// after the pointer.
func (d mmdbData) head(off uint) (k mmdbKind, size, next uint, err error) {
	if off >= uint(len(d)) {
		return 0, 0, 0, errMMDBData
	}
	c := d[off]
	off++
	k = mmdbKind(c >> 5)
	if k == kindPointer {
		n := uint(c>>3&3) + 1
		if off+n > uint(len(d)) {
			return 0, 0, 0, errMMDBData
		}
		var p uint
		if n < 4 {
			p = uint(c & 7)
		}
		for _, b := range d[off : off+n] {
			p = p<<8 | uint(b)
		}
		return kindPointer, p + pointerBias[n], off + n, nil
	}
	if k == 0 { // extended type
		if off >= uint(len(d)) {
			return 0, 0, 0, errMMDBData
		}
		e := uint(d[off]) + 7
		if e < 8 || e > 15 {
			return 0, 0, 0, errMMDBData
		}
		k = mmdbKind(e)
		off++
	}
	size = uint(c & 0x1f)
	if size >= 29 {
		n := size - 28
		if off+n > uint(len(d)) {
			return 0, 0, 0, errMMDBData
		}
		var v uint
		for _, b := range d[off : off+n] {
			v = v<<8 | uint(b)
		}
		off += n
		size = [3]uint{29, 285, 65821}[n-1] + v
	}
	return k, size, off, nil
}

// resolve is head for the value at off, following a pointer. end is the
// offset after the value at off when it is known without walking it (after
// a pointer, or after a scalar's payload), 0 for a map or an array held in
// place.
func (d mmdbData) resolve(off uint) (k mmdbKind, size, payload, end uint, err error) {
	k, size, payload, err = d.head(off)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	if k == kindPointer {
		end = payload
		if k, size, payload, err = d.head(size); err != nil || k == kindPointer {
			return 0, 0, 0, 0, errMMDBData
		}
	}
	if end == 0 && k != kindMap && k != kindSlice {
		end = payload + size
		if k == kindBool {
			end = payload
		}
	}
	return k, size, payload, end, nil
}

// skip returns the offset after the value at off (a pointer is skipped,
// not followed; a map or array with everything in it).
func (d mmdbData) skip(off uint) (uint, error) {
	for n := uint(1); n > 0; n-- {
		k, size, p, err := d.head(off)
		if err != nil {
			return 0, err
		}
		switch k {
		case kindPointer, kindBool:
			off = p
		case kindMap:
			n += 2 * size
			off = p
		case kindSlice:
			n += size
			off = p
		default:
			if p+size > uint(len(d)) {
				return 0, errMMDBData
			}
			off = p + size
		}
	}
	return off, nil
}

// str returns the string at off and the offset after it.
func (d mmdbData) str(off uint) ([]byte, uint, error) {
	k, size, p, end, err := d.resolve(off)
	if err != nil {
		return nil, 0, err
	}
	if k != kindString || p+size > uint(len(d)) {
		return nil, 0, errMMDBData
	}
	return d[p : p+size], end, nil
}

// float returns the double or float at off.
func (d mmdbData) float(off uint) (float64, error) {
	k, size, p, _, err := d.resolve(off)
	if err != nil {
		return 0, err
	}
	switch {
	case p+size > uint(len(d)):
	case k == kindFloat64 && size == 8:
		return math.Float64frombits(binary.BigEndian.Uint64(d[p:])), nil
	case k == kindFloat32 && size == 4:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(d[p:]))), nil
	}
	return 0, errMMDBData
}

// int returns the integer at off (any of the format's integer types, as
// long as it fits an int64).
func (d mmdbData) int(off uint) (int64, error) {
	k, size, p, _, err := d.resolve(off)
	if err != nil {
		return 0, err
	}
	var limit uint
	switch k {
	case kindUint16:
		limit = 2
	case kindUint32, kindInt32:
		limit = 4
	case kindUint64:
		limit = 8
	case kindUint128:
		limit = 16
	default:
		return 0, errMMDBData
	}
	if size > limit || p+size > uint(len(d)) {
		return 0, errMMDBData
	}
	var v uint64
	for _, b := range d[p : p+size] {
		if v>>56 != 0 {
			return 0, errMMDBData // more than 64 bits
		}
		v = v<<8 | uint64(b)
	}
	if k == kindInt32 {
		return int64(int32(uint32(v))), nil
	}
	if v > math.MaxInt64 {
		return 0, errMMDBData
	}
	return int64(v), nil
}

// array returns the length of the array at off and where its first element
// starts: each next element starts where the one before ends. end is as
// for resolve: after a pointer, else 0 (after the last element).
func (d mmdbData) array(off uint) (n, first, end uint, err error) {
	k, size, p, end, err := d.resolve(off)
	if err != nil {
		return 0, 0, 0, err
	}
	if k != kindSlice {
		return 0, 0, 0, errMMDBData
	}
	return size, p, end, nil
}

// mapAt returns the number of pairs of the map at off and where the first
// key starts; end is as for array.
func (d mmdbData) mapAt(off uint) (n, first, end uint, err error) {
	k, size, p, end, err := d.resolve(off)
	if err != nil {
		return 0, 0, 0, err
	}
	if k != kindMap {
		return 0, 0, 0, errMMDBData
	}
	return size, p, end, nil
}

// key returns the map key at off (a string, or a pointer to one) and where
// its value starts: a key is read as any string is.
func (d mmdbData) key(off uint) ([]byte, uint, error) { return d.str(off) }

// mmdbMap records where the values of a map's wanted keys start: at[i] for
// names[i], when bit i of have is set. A key given twice counts once, with
// its last value, as maxminddb-golang decodes it.
type mmdbMap struct {
	at   [16]uint
	have uint32
}

func (m *mmdbMap) has(i int) bool { return m.have&(1<<i) != 0 }

// fields reads the keys of the map at off into m (names has at most 16
// entries) and returns the offset after the map.
func (d mmdbData) fields(off uint, names []string, m *mmdbMap) (uint, error) {
	n, p, end, err := d.mapAt(off)
	if err != nil {
		return 0, err
	}
	m.have = 0
	for range n {
		key, next, err := d.key(p)
		if err != nil {
			return 0, err
		}
		for i, name := range names {
			if string(key) == name {
				m.at[i] = next
				m.have |= 1 << i
				break
			}
		}
		if p, err = d.skip(next); err != nil {
			return 0, err
		}
	}
	if end == 0 {
		end = p
	}
	return end, nil
}
