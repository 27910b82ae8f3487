package sim

import (
	"math/bits"
	"slices"
	"unsafe"
)

// calendar holds the clients due at each tick. A tick's clients sit in a
// chain of fixed-size blocks taken from one arena, so that appending and
// taking are sequential writes and reads, and a run allocates nothing once
// the arena has grown to the largest backlog.
//
// Between runs every tick is empty: take empties the ticks it reads, and a
// run reads every tick that holds a client.
type calendar struct {
	// dense mode: a bitmap of all clients per tick, for runs where that
	// fits in denseLimit bytes. A push sets a bit, a take reads the bits in
	// index order: no chains and no sorting. It is column-major: the clients
	// of one 64-bit word over consecutive ticks are contiguous, and since a
	// tick's rejected clients are rescheduled in index order, their pushes
	// stay within a few kilobytes (20 % faster than rows of ticks, measured
	// on BenchmarkTable1).
	//
	// Each tick also has a summary, a bit per word that is not zero (sw
	// words of them, tick-major: bit w&63 of sum[k·sw + w>>6]), so that a
	// take reads only the words that hold a client: a tick of the article's
	// runs has a few clients in 32 words, and the scan of them all, a
	// branch on each word that mispredicted, was a sixth of a run.
	dense  bool
	sparse bool     // force the sparse mode (tests of the sparse path)
	words  int      // words per tick
	stride int      // ticks per column
	sw     int      // summary words per tick
	bitmap []uint64 // column-major: word w of tick k at w·stride + k
	sum    []uint64 // tick-major: word j of tick k at k·sw + j
	count  []int32  // per tick: clients due

	// sparse mode: chains of blocks.
	ticks []slot

	// Pushes wait in pend until pendBatch of them have gathered or a
	// tick is read, and then go into their chains in the order they
	// came (flush), so the chains are the same. The batch alone was no
	// faster (within the noise); it lets the rejection rule's push be
	// an inlined append (later) and flush's common case go without a
	// call: 1–2 CPU ns an event each at 1,000,000 clients.
	pend [pendBatch]pending
	np   int

	arena []int32 // blocks of blockSize client indices
	next  []int32 // per block: the next block of its chain + 1; 0 = none
	free  []int32 // blocks not in use
	out   []int32 // take's result, reused
}

// blockSize is the client indices a block holds: 256 bytes, four cache
// lines. At 1,000,000 clients every block a push starts and every chain
// link a take follows was a cache miss; blocks of 64 have a quarter as
// many as blocks of 16 (about 1–2 CPU ns an event less on the lower half
// of interleaved runs, for 2 bytes a client more).
const blockSize = 64

// slot is one tick's chain: 20 bytes, so that a push touches one cache line.
type slot struct {
	head, tail int32 // first and last block + 1; 0 = none
	n          int32 // clients due: the tail block holds n mod blockSize, or blockSize
	last       int32 // the last index appended
	unsorted   bool  // an index was appended after a higher one
}

// denseLimit is the most bytes a dense calendar may take.
const denseLimit = 16 << 20

// reset prepares the calendar for a run of clients over ticks; sparse
// asks for the sparse mode, whatever the size.
func (c *calendar) reset(ticks, clients int, sparse bool) {
	words := (clients + 63) / 64
	c.dense = ticks*words*8 <= denseLimit && !c.sparse && !sparse
	if c.dense {
		if c.words != words || c.stride < ticks {
			// A new layout: the arrays zeroed, in the room they had where
			// it is enough. (Made anew, they were allocated for each run
			// of a sweep that alternates fleet sizes: fresh pages to
			// fault in, and garbage to collect, on each core.)
			c.words, c.stride, c.sw = words, ticks, (words+63)/64
			c.bitmap = zeroed(c.bitmap, ticks*words)
			c.sum = zeroed(c.sum, ticks*c.sw)
			c.count = zeroed(c.count, ticks)
		}
		return
	}
	if len(c.ticks) < ticks {
		c.ticks = slices.Grow(c.ticks, ticks-len(c.ticks))[:ticks]
	}
	// Room for the most blocks a run can hold at once, so that block never
	// copies the arena as it grows: each client is due at one tick at most,
	// so the chains hold at most clients/blockSize full blocks and one
	// partial block a tick that holds a client. (An open loop adds clients
	// as it goes, so its arena grows as it needs.)
	if most := (clients+blockSize-1)/blockSize + min(ticks, clients); !sparse && cap(c.next) < most {
		c.next = slices.Grow(c.next, most-len(c.next))
		c.arena = slices.Grow(c.arena, most*blockSize-len(c.arena))
	}
}

// zeroed is s with length n, all zero: in s's array if it has room.
func zeroed[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func (c *calendar) empty(k int) bool {
	if c.dense {
		return c.count[k] == 0
	}
	c.flush()
	return c.ticks[k].head == 0
}

// clear empties ticks k … nt-1 at once, as a stopped run leaves them (the
// ticks before k are empty: the run took them). A dense calendar clears
// those ticks' words; a sparse one its slots, and since every chain is
// then gone, its arena is handed out again from the start.
func (c *calendar) clear(k, nt int) {
	if k >= nt {
		return
	}
	if c.dense {
		for w := range c.words {
			clear(c.bitmap[w*c.stride+k : w*c.stride+nt])
		}
		clear(c.sum[k*c.sw : nt*c.sw])
		clear(c.count[k:nt])
		return
	}
	c.np = 0
	clear(c.ticks[k:nt])
	c.next, c.arena, c.free = c.next[:0], c.arena[:0], c.free[:0]
}

// block hands out a free block for a chain's tail. A block freed by a
// take long ago is a cache miss, which the first store into it waits for
// (and, as stores complete in order, the stores behind it): the block
// blockAhead places further on the free list (or in the arena's reserve)
// is asked for now.
func (c *calendar) block() int32 {
	if n := len(c.free); n > 0 {
		b := c.free[n-1]
		c.free = c.free[:n-1]
		c.next[b] = 0
		if n > blockAhead {
			c.prefetchBlock(c.free[n-1-blockAhead])
		}
		return b
	}
	b := int32(len(c.next))
	if e := (int(b) + blockAhead + 1) * blockSize; e <= cap(c.arena) {
		prefetchLines(c.arena[:e][e-blockSize:])
	}
	c.next = append(c.next, 0)
	c.arena = append(c.arena, make([]int32, blockSize)...)
	return b
}

// set puts client i in a dense calendar's tick k.
func (c *calendar) set(k int, i int32) {
	c.bitmap[int(i>>6)*c.stride+k] |= 1 << (uint32(i) & 63)
	c.sum[k*c.sw+int(i>>12)] |= 1 << ((uint32(i) >> 6) & 63)
	c.count[k]++
}

// A dense calendar's tick k is read a word at a time, in index order, and
// emptied with
//
//	for j := range c.sw {
//		for s := c.summary(k, j); s != 0; s &= s - 1 {
//			w := j<<6 + bits.TrailingZeros64(s)
//			x := c.word(k, w) // not zero: clients w·64 + the bits of x
//
// (and count[k] set to 0 by the reader).

// summary returns summary word j of tick k and clears it.
func (c *calendar) summary(k, j int) uint64 {
	p := &c.sum[k*c.sw+j]
	s := *p
	*p = 0
	return s
}

// word returns word w of tick k and clears it.
func (c *calendar) word(k, w int) uint64 {
	p := &c.bitmap[w*c.stride+k]
	x := *p
	*p = 0
	return x
}

// push appends client i to tick k.
func (c *calendar) push(k int, i int32) {
	if c.dense {
		c.set(k, i)
		return
	}
	c.later(k, i)
}

// later is a sparse calendar's push.
func (c *calendar) later(k int, i int32) {
	c.pend[c.np] = pending{int32(k), i}
	if c.np++; c.np == pendBatch {
		c.flush()
	}
}

// pending is a push waiting in calendar.pend: client i to tick k.
type pending struct{ k, i int32 }

const pendBatch = 256

// flush puts the pending pushes into their chains.
func (c *calendar) flush() {
	for _, p := range c.pend[:c.np] {
		s := &c.ticks[p.k]
		if s.n&(blockSize-1) != 0 { // room in the tail block: put's common case, without the call
			c.appendTail(s, s.tail-1, p.i)
			continue
		}
		c.put(int(p.k), p.i)
	}
	c.np = 0
}

// put appends client i to tick k's chain.
func (c *calendar) put(k int, i int32) {
	s := &c.ticks[k]
	t, n := s.tail-1, s.n
	switch {
	case t < 0:
		t = c.block()
		*s = slot{head: t + 1, tail: t + 1, n: 1, last: i}
		c.arena[int(t)*blockSize] = i
		return
	case n&(blockSize-1) == 0:
		b := c.block()
		c.next[t] = b + 1
		s.tail = b + 1
		t = b
	}
	c.appendTail(s, t, i)
}

// appendTail writes client i into block t, the tail of slot s's chain, which
// has room for it.
func (c *calendar) appendTail(s *slot, t, i int32) {
	if i < s.last {
		s.unsorted = true
	}
	c.arena[int(t)*blockSize+int(s.n&(blockSize-1))] = i
	s.n, s.last = s.n+1, i
}

// take empties tick k and returns its clients in index order. The slice is
// valid until the next take.
func (c *calendar) take(k int, o *sorter) []int32 {
	out := c.out[:0]
	if c.dense {
		m := int(c.count[k])
		out = slices.Grow(out, m)[:m]
		n := 0
		c.count[k] = 0
		for j := range c.sw {
			for s := c.summary(k, j); s != 0; s &= s - 1 {
				w := j<<6 + bits.TrailingZeros64(s)
				for x := c.word(k, w); x != 0; x &= x - 1 {
					out[n] = int32(w<<6 + bits.TrailingZeros64(x))
					n++
				}
			}
		}
		c.out = out
		return out
	}
	c.flush()
	s := &c.ticks[k]
	// The blocks were written up to a minute of ticks ago and lie anywhere
	// in the arena: each is a cache miss, asked for chainAhead blocks
	// before it is read.
	ahead := s.head - 1
	for range chainAhead {
		ahead = c.prefetchChain(ahead)
	}
	for b := s.head - 1; b >= 0; {
		ahead = c.prefetchChain(ahead)
		nb := c.next[b] - 1
		n := blockSize
		if nb < 0 {
			n = int(s.n-1)&(blockSize-1) + 1
		}
		out = append(out, c.arena[int(b)*blockSize:int(b)*blockSize+n]...)
		c.free = append(c.free, b)
		b = nb
	}
	s.head, s.tail, s.n = 0, 0, 0
	if s.unsorted {
		out = slices.Grow(out, sortSlack)
		o.sort(out)
	}
	c.out = out
	return out
}

// blockAhead is how many blocks ahead block asks for the block it will
// hand out.
const blockAhead = 4

// chainAhead is how many blocks ahead take asks for a chain's blocks.
const chainAhead = 8

// prefetchChain prefetches block b (if any, b ≥ 0) and returns the one
// after it in its chain.
func (c *calendar) prefetchChain(b int32) int32 {
	if b < 0 {
		return b
	}
	c.prefetchBlock(b)
	return c.next[b] - 1
}

// prefetchBlock asks for the cache lines of block b.
func (c *calendar) prefetchBlock(b int32) {
	prefetchLines(c.arena[int(b)*blockSize : int(b+1)*blockSize])
}

// prefetchLines asks for the cache lines of a block's storage.
func prefetchLines(blk []int32) {
	for j := 0; j < len(blk); j += 64 / 4 { // a line a prefetch
		prefetch(unsafe.Pointer(&blk[j]))
	}
}

func (c *calendar) footprint() int {
	return (cap(c.bitmap)+cap(c.sum))*8 + cap(c.count)*4 + cap(c.ticks)*20 + (cap(c.arena)+cap(c.next)+cap(c.free)+cap(c.out))*4
}

// sorter puts a tick's clients in index order. Small lists go to an
// insertion sort; larger ones through a two-level bitmap over all clients,
// which costs O(len + clients/4096) and needs no comparisons.
type sorter struct {
	words []uint64 // bit i: client i is in the list
	sum   []uint64 // bit w: words[w] is not zero
}

func (o *sorter) reset(clients int) {
	nw := (clients + 63) / 64
	if len(o.words) < nw {
		o.words = make([]uint64, nw)
		o.sum = make([]uint64, (nw+63)/64)
	}
}

// insertionSort sorts a short list.
func insertionSort(list []int32) {
	for i := 1; i < len(list); i++ {
		v := list[i]
		j := i
		for ; j > 0 && list[j-1] > v; j-- {
			list[j] = list[j-1]
		}
		list[j] = v
	}
}

// sort puts list in index order. It writes past the list's end, up to
// sortSlack entries (which its capacity must hold).
func (o *sorter) sort(list []int32) {
	if len(list) <= 16 {
		insertionSort(list)
		return
	}
	if len(list) >= len(o.words) {
		// A client a word or more: no summary while scattering (one bit to
		// set a client instead of two), and every word is read.
		for _, i := range list {
			o.words[uint32(i)>>6] |= 1 << (uint32(i) & 63)
		}
		for j := range o.sum {
			o.sum[j] = ^uint64(0)
		}
		if r := len(o.words) & 63; r != 0 {
			o.sum[len(o.sum)-1] = 1<<r - 1
		}
	} else {
		for _, i := range list {
			w := uint32(i) >> 6
			o.words[w] |= 1 << (uint32(i) & 63)
			o.sum[w>>6] |= 1 << (w & 63)
		}
	}
	// The bits of a word go out without a branch per bit: the first four
	// positions are written whatever the word holds (a position past its
	// last bit is overwritten by the next word's, or lies past the list, in
	// the sortSlack room the caller leaves), and n moves on by the word's
	// count. A loop to the word's last bit mispredicted its exit once a
	// word: at 1,000,000 clients a tick's clients are a few per word.
	buf := list[:len(list)+sortSlack]
	n := 0
	for sw, s := range o.sum {
		if s == 0 {
			continue
		}
		o.sum[sw] = 0
		for s != 0 {
			w := sw<<6 + bits.TrailingZeros64(s)
			s &= s - 1
			x := o.words[w]
			o.words[w] = 0
			base := int32(w << 6)
			c := bits.OnesCount64(x)
			b := buf[n : n+4]
			b[0] = base + int32(bits.TrailingZeros64(x))
			x &= x - 1
			b[1] = base + int32(bits.TrailingZeros64(x))
			x &= x - 1
			b[2] = base + int32(bits.TrailingZeros64(x))
			x &= x - 1
			b[3] = base + int32(bits.TrailingZeros64(x))
			x &= x - 1
			for j := n + 4; x != 0; j++ {
				buf[j] = base + int32(bits.TrailingZeros64(x))
				x &= x - 1
			}
			n += c
		}
	}
}

// sortSlack is the room past a list's end that sort writes into (and
// leaves meaningless): a word's first four positions go out whatever the
// word holds.
const sortSlack = 4

func (o *sorter) footprint() int { return (cap(o.words) + cap(o.sum)) * 8 }

// prefetchAhead asks for the state of client rej[j+prefetchDistance] (rej:
// a tick's rejected clients, about to go through reject one by one in
// index order). In a fleet too large for a dense calendar (1,000,000
// clients: 16 MB of client state) a tick's clients lie kilobytes apart,
// each a cache miss, which reject would wait for; a prefetch a few
// clients ahead lets the misses overlap the work on the clients before
// them. (It replaces a loop that loaded a chunk of 1,024 clients ahead at
// once: those loads held up everything behind them until the last
// arrived.) It changes nothing but the timing. A dense calendar's fleets
// fit in the cache: nothing to do.
func (s *Sim) prefetchAhead(rej []int32, j int) {
	if j += prefetchDistance; j < len(rej) && !s.cal.dense {
		prefetch(unsafe.Pointer(&s.clients[rej[j]]))
	}
}

// prefetchDistance is how many clients ahead prefetchAhead asks: enough
// for a miss (about 100 ns) to arrive while reject handles those before.
const prefetchDistance = 16

// moveColumn does what stepDense's rejection rule does to tick k's clients
// but its first served ones when every one of them gets the same fixed
// delay and no limit: it moves them all to tick nk (nowhere when nk < 0)
// a word at a time, instead of one push each, and returns how many it
// moved. Nothing reads a client's state on that path (no attempt limit,
// no delay that depends on it), so it is left as it is: the fixed 5 s row
// of the article's table 1 gives the same results, bit for bit (the
// golden trace and reference tests).
func (c *calendar) moveColumn(k, served, nk int) (moved int) {
	c.count[k] = 0
	for j := range c.sw {
		for s := c.summary(k, j); s != 0; s &= s - 1 {
			w := j<<6 + bits.TrailingZeros64(s)
			x := c.word(k, w)
			for ; served > 0 && x != 0; served-- { // the served ones come first in index order
				x &= x - 1
			}
			if nk >= 0 && x != 0 {
				c.bitmap[w*c.stride+nk] |= x
				c.sum[nk*c.sw+j] |= 1 << (w & 63)
				moved += bits.OnesCount64(x)
			}
		}
	}
	if nk >= 0 {
		c.count[nk] += int32(moved)
	}
	return moved
}
