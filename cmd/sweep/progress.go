package main

import (
	"fmt"
	"github.com/herdsweep/herdsweep/internal/num"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// progress reports a long job honestly from its first second: what is
// being done, how many of how many, and — once a rate can be measured
// (after warmUp) — the rate, the elapsed and the remaining time, each
// labelled. On a terminal one line is rewritten in place a few times a
// second; elsewhere (a log file, a CI job) a plain line is written every
// few seconds, and nothing for jobs shorter than that.
type progress struct {
	w        io.Writer
	tty      bool
	what     string
	total    int
	done     int
	start    time.Time
	last     time.Time
	every    time.Duration
	now      func() time.Time
	drawn    bool
	lastLine int
}

// warmUp is how long a rate must be measured before it is shown: the
// first runs finish in microseconds and would promise absurd rates.
const warmUp = 2 * time.Second

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newProgress(w io.Writer, what string, total int, quiet bool) *progress {
	p := &progress{w: w, what: what, total: total, now: time.Now, every: 5 * time.Second}
	p.start = p.now()
	p.last = p.start
	if quiet {
		p.w = io.Discard
	}
	if isTerminal(w) && !quiet {
		p.tty, p.every = true, 200*time.Millisecond
	}
	return p
}

func (p *progress) add(n int) {
	p.done += n
	if now := p.now(); now.Sub(p.last) >= p.every {
		p.last = now
		p.draw(now)
	}
}

// line says where the job stands at now.
func (p *progress) line(now time.Time) string {
	el := now.Sub(p.start)
	s := fmt.Sprintf("%s: %s of %s runs (%.0f %%), elapsed %v", p.what, num.Int(p.done), num.Int(p.total),
		100*float64(p.done)/float64(max(p.total, 1)), el.Round(time.Second))
	if el >= warmUp && p.done > 0 {
		rate := float64(p.done) / el.Seconds()
		left := time.Duration(float64(p.total-p.done) / rate * float64(time.Second))
		s += fmt.Sprintf(", %s runs/s, about %v left", num.Int(int(rate+0.5)), left.Round(time.Second))
	}
	return s
}

func (p *progress) draw(now time.Time) {
	l := p.line(now)
	if p.tty {
		pad := ""
		if n := len(l); n < p.lastLine {
			pad = strings.Repeat(" ", p.lastLine-n)
		}
		fmt.Fprintf(p.w, "\r%s%s", l, pad)
		p.lastLine = len(l)
	} else {
		fmt.Fprintln(p.w, l)
	}
	p.drawn = true
}

// finish ends the bar's line on a terminal; elsewhere it says nothing
// more (the command prints its own summary).
func (p *progress) finish() {
	if p.tty && p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.lastLine))
	}
}
