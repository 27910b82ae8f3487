package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress reports a long job: a bar with rate and ETA on a terminal, a
// plain line every few seconds otherwise (a log file, a CI job).
type progress struct {
	bar   *progressbar.ProgressBar
	w     io.Writer
	what  string
	total int
	done  int
	start time.Time
	last  time.Time
	every time.Duration
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newProgress(w io.Writer, what string, total int, quiet bool) *progress {
	p := &progress{w: w, what: what, total: total, start: time.Now(), every: 5 * time.Second}
	p.last = p.start
	if quiet {
		p.w = io.Discard
		return p
	}
	if isTerminal(w) {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("runs"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

func (p *progress) add(n int) {
	p.done += n
	if p.bar != nil {
		p.bar.Add(n)
		return
	}
	if now := time.Now(); now.Sub(p.last) >= p.every {
		p.last = now
		el := now.Sub(p.start).Seconds()
		rate := float64(p.done) / el
		eta := time.Duration(float64(p.total-p.done)/rate) * time.Second
		fmt.Fprintf(p.w, "%s: %d/%d runs (%.0f%%), %.0f runs/s, ETA %v\n", p.what, p.done, p.total, 100*float64(p.done)/float64(p.total), rate, eta.Round(time.Second))
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
