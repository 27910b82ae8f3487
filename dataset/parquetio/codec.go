package parquetio

import (
	"bytes"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// pageCodecs compress pages with zstd (level 1) and gzip (Huffman coding
// alone: writer.hashed), as arrow-go's codecs do but with encoders of
// their own, made once, and with zstd leaving a block in which it finds
// no match as it is (TestPageCodecs).
// arrow-go keeps its encoders in sync.Pools, which every garbage
// collection empties: a sweep of tiny runs collects often enough that most
// of its parts made new zstd and gzip encoders (some 300 KB each, the
// largest allocations of a part).
type pageCodecs struct {
	zstd *zstd.Encoder
	gz   *gzip.Writer
	buf  bytes.Buffer
	// big: the zstd encoder compressed a page of more than bigPage
	// bytes, which leaves it holding some 10 MB of history: not kept.
	big bool
}

// bigPage is the largest page after which an encoder is kept for the next
// file (a timelines part's pages are larger; a part of 5,000 tiny runs'
// are 40 KB at most, after which its zstd encoder holds about 1 MB).
const bigPage = 256 << 10

// zstdPage compresses body as zstd, appending to dst[:0].
func (c *pageCodecs) zstdPage(dst, body []byte) []byte {
	if c.zstd == nil {
		// arrow-go's options for level 1 (compress.zstdCodec.EncodeLevel)
		// but the last: arrow-go Huffman-codes the literals of a block
		// with no match too, which took a tenth off a tiny run's
		// bit-packed metrics for 40 % of zstd's CPU; a block with matches
		// (larger runs' metrics, half off; a timeline's ticks, nearly all)
		// is compressed alike.
		enc, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(1)),
			zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(false))
		if err != nil {
			panic("parquetio: " + err.Error()) // constant options
		}
		c.zstd = enc
	}
	c.big = c.big || len(body) > bigPage
	return c.zstd.EncodeAll(body, dst[:0])
}

// huffmanPage compresses body as gzip with Huffman coding alone, appending
// to dst[:0].
func (c *pageCodecs) huffmanPage(dst, body []byte) []byte {
	c.buf = *bytes.NewBuffer(dst[:0])
	if c.gz == nil {
		gz, err := gzip.NewWriterLevel(&c.buf, gzip.HuffmanOnly)
		if err != nil {
			panic("parquetio: " + err.Error()) // a valid level
		}
		c.gz = gz
	} else {
		c.gz.Reset(&c.buf)
	}
	if _, err := c.gz.Write(body); err != nil {
		panic("parquetio: " + err.Error()) // a bytes.Buffer takes all
	}
	if err := c.gz.Close(); err != nil {
		panic("parquetio: " + err.Error())
	}
	out := c.buf.Bytes()
	c.gz.Reset(nil)
	c.buf = bytes.Buffer{}
	return out
}

// encoders keep the encoders that wrote a file, with their buffers and
// codecs, for the next: a list, not a sync.Pool, which a garbage
// collection would empty. It holds as many as ever wrote at once, but
// none that wrote a page, or holds a buffer, of more than bigPage bytes.
var encoders struct {
	mu   sync.Mutex
	free []*encoder
}

func getEncoder() *encoder {
	encoders.mu.Lock()
	defer encoders.mu.Unlock()
	if n := len(encoders.free); n > 0 {
		e := encoders.free[n-1]
		encoders.free = encoders.free[:n-1]
		return e
	}
	return new(encoder)
}

func putEncoder(e *encoder) {
	e.b = nil // the file's: its writer's now
	if e.press.big || e.holds() > bigPage {
		return // left to the garbage collector, with what it holds
	}
	encoders.mu.Lock()
	defer encoders.mu.Unlock()
	encoders.free = append(encoders.free, e)
}

// holds is the most bytes one of e's buffers holds.
func (e *encoder) holds() int {
	d := &e.dict
	return max(cap(e.body), cap(e.packed), cap(e.entries), cap(e.indices),
		8*cap(d.f64), 8*cap(d.i64), 16*cap(d.str), cap(d.bools), 8*cap(d.runLen), cap(d.runNull),
		8*cap(e.pack.keys), 4*cap(e.pack.ids), 4*cap(e.pack.idx))
}

// spare keeps column buffers of written files for the next writer's, by
// element type: a part of 5,000 runs fills some 1 MB of them, which were
// allocated and cleared anew for each part. A buffer of fewer than
// spareMin values is left to the garbage collector, and so is one that
// would take the spare past spareBytes (a timelines part's buffers, of
// some MB each, mostly are): the spare holds a bounded amount of memory
// whatever the parts (kept without a bound, they took the main job's
// memory from 204 to 374 MiB).
type spare[T any] struct {
	mu    sync.Mutex
	free  [][]T
	elem  int // bytes a value
	bytes int // held
}

const (
	spareMin   = 1 << 10
	spareBytes = 2 << 20
)

var (
	spareF64   = spare[float64]{elem: 8}
	spareI64   = spare[int64]{elem: 8}
	spareStr   = spare[string]{elem: 16}
	spareBools = spare[bool]{elem: 1}
)

// make returns a slice of length n with room for c values, whose first n
// are zero.
func (s *spare[T]) make(n, c int) []T {
	if c >= spareMin {
		s.mu.Lock()
		for i := len(s.free) - 1; i >= 0; i-- {
			if x := s.free[i]; cap(x) >= c {
				s.free = slices.Delete(s.free, i, i+1)
				s.bytes -= cap(x) * s.elem
				s.mu.Unlock()
				x = x[:n]
				clear(x)
				return x
			}
		}
		s.mu.Unlock()
	}
	return make([]T, n, c)
}

// put gives x back; its caller no longer holds it.
func (s *spare[T]) put(x []T) {
	size := cap(x) * s.elem
	if cap(x) < spareMin || size > spareBytes {
		return
	}
	clear(x[:cap(x)]) // no string kept alive
	s.mu.Lock()
	if s.bytes+size <= spareBytes {
		s.free = append(s.free, x[:0])
		s.bytes += size
	}
	s.mu.Unlock()
}

// release gives c's buffers back (spare): its file is written.
func (c *colBuf) release() {
	spareF64.put(c.f64)
	spareI64.put(c.i64)
	spareStr.put(c.str)
	spareBools.put(c.bools)
	spareBools.put(c.null)
	c.f64, c.i64, c.str, c.bools, c.null = nil, nil, nil, nil, nil
}
