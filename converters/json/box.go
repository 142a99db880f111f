package json

import (
	"sync/atomic"
	"time"
	"unsafe"
)

// boxes hands out the decoder's scalar values and strings from shared
// blocks, so that a decoded record costs a few allocations instead of one
// per field: an interface holding an int64, a float64 or a time.Time
// points at its value, and Go boxes each separately; here values of one
// type sit side by side in a block, strings in a byte block. A block is
// never written again below what was handed out, so every value stays
// immutable; it is freed when no value in it is referenced any more.
type boxes struct {
	words []uint64 // int8…int64, float32, float64 (pointer-free)
	times []time.Time
	strs  []string
	bytes []byte
}

const (
	boxWords = 512     // 4 KiB
	boxTimes = 128     // 3 KiB
	boxStrs  = 256     // 4 KiB
	boxBytes = 8 << 10 // 8 KiB
)

// eface is the layout of an empty interface (runtime.eface).
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

var (
	typeInt8    = typeOf(int8(0))
	typeInt16   = typeOf(int16(0))
	typeInt32   = typeOf(int32(0))
	typeInt64   = typeOf(int64(0))
	typeFloat32 = typeOf(float32(0))
	typeFloat64 = typeOf(float64(0))
	typeTime    = typeOf(time.Time{})
	typeString  = typeOf("")
)

// iface makes an interface of type typ whose value is at p.
func iface(typ, p unsafe.Pointer) any {
	var v any
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, p
	return v
}

// word returns a fresh 8-byte slot.
func (b *boxes) word() unsafe.Pointer {
	if len(b.words) == cap(b.words) {
		b.words = make([]uint64, 0, boxWords)
	}
	b.words = b.words[:len(b.words)+1]
	return unsafe.Pointer(&b.words[len(b.words)-1])
}

func (b *boxes) int8(v int8) any {
	if b == nil {
		return v
	}
	p := b.word()
	*(*int8)(p) = v
	return iface(typeInt8, p)
}

func (b *boxes) int16(v int16) any {
	if b == nil {
		return v
	}
	p := b.word()
	*(*int16)(p) = v
	return iface(typeInt16, p)
}

func (b *boxes) int32(v int32) any {
	if b == nil {
		return v
	}
	p := b.word()
	*(*int32)(p) = v
	return iface(typeInt32, p)
}

func (b *boxes) int64(v int64) any {
	if b == nil {
		return v
	}
	p := b.word()
	*(*int64)(p) = v
	return iface(typeInt64, p)
}

func (b *boxes) float32(v float32) any {
	if b == nil {
		return v
	}
	p := b.word()
	*(*float32)(p) = v
	return iface(typeFloat32, p)
}

func (b *boxes) float64(v float64) any {
	if b == nil {
		return v
	}
	p := b.word()
	*(*float64)(p) = v
	return iface(typeFloat64, p)
}

func (b *boxes) time(v time.Time) any {
	if b == nil {
		return v
	}
	if len(b.times) == cap(b.times) {
		b.times = make([]time.Time, 0, boxTimes)
	}
	b.times = append(b.times, v)
	return iface(typeTime, unsafe.Pointer(&b.times[len(b.times)-1]))
}

// str is string as an interface, the string header in a block too.
func (b *boxes) str(s []byte) any {
	if b == nil {
		return string(s)
	}
	if len(b.strs) == cap(b.strs) {
		b.strs = make([]string, 0, boxStrs)
	}
	b.strs = append(b.strs, b.string(s))
	return iface(typeString, unsafe.Pointer(&b.strs[len(b.strs)-1]))
}

// string copies s into the byte block. Long strings get their own
// allocation, so that a block is not mostly one value.
func (b *boxes) string(s []byte) string {
	if b == nil || len(s) > boxBytes/8 {
		return string(s)
	}
	if len(s) == 0 {
		return ""
	}
	if cap(b.bytes)-len(b.bytes) < len(s) {
		b.bytes = make([]byte, 0, boxBytes)
	}
	start := len(b.bytes)
	b.bytes = append(b.bytes, s...)
	return unsafe.String(&b.bytes[start], len(s))
}

// boxPool lends a converter's boxes to one decoding at a time; a
// converter used from several goroutines at once gives the others fresh
// ones.
type boxPool struct{ p atomic.Pointer[boxes] }

func (bp *boxPool) get() *boxes {
	if b := bp.p.Swap(nil); b != nil {
		return b
	}
	return new(boxes)
}

func (bp *boxPool) put(b *boxes) { bp.p.Store(b) }
