package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	// duration is a time.Duration as Go prints it: 0s, 35ms, 1.383s, 1m25.77s.
	duration = `(?:\d+h)?(?:\d+m)?\d+(?:\.\d+)?(?:h|m|s|ms|µs|ns)`
	// clockFields are the clock readings of deterministic output, each
	// compared as <time> (or <share> for a share of a clock reading).
	clockFields = []*regexp.Regexp{
		regexp.MustCompile(`( in )` + duration + `( \(Parquet )` + duration + `(, )\d+(?:\.\d+)?%(, and )` + duration + `( beside the simulation\))`),
		regexp.MustCompile(`^(note: .*, in )` + duration + `()$`),
		regexp.MustCompile(`^(\d+ runs in )` + duration + `(; .*)$`),
	}
	// progressRe: lines a slow machine prints and a fast one does not: a
	// sweep's progress every 5 s, and the report's phases over a second.
	progressRe = regexp.MustCompile(`^([^:]+: [\d,]+ of [\d,]+ .*elapsed |report: (read|decided|wrote) .* in ` + duration + `$)`)
	durationRe = regexp.MustCompile(`\b` + duration + `\b`)
	numberRe   = regexp.MustCompile(`[−+-]?\d[\d,]*(?:\.\d+)?`)
	pluralRe   = regexp.MustCompile(`\bN ((?:\w+ )?\w+?)s\b`)
)

// normalise makes a line of output or of a doc comparable: clock readings
// become <time>, and in shape mode every duration and number becomes N.
func normalise(l string, shape bool) string {
	l = strings.TrimRight(l, " \t")
	if shape {
		l = durationRe.ReplaceAllString(l, "N")
		l = numberRe.ReplaceAllString(l, "N")
		return pluralRe.ReplaceAllString(l, "N $1")
	}
	for _, re := range clockFields {
		l = re.ReplaceAllStringFunc(l, func(m string) string {
			g := re.FindStringSubmatch(m)
			var b strings.Builder
			for i, part := range g[1:] {
				b.WriteString(part)
				if i < len(g)-2 {
					if strings.HasSuffix(part, ", ") && i == 2 {
						b.WriteString("<share>")
					} else {
						b.WriteString("<time>")
					}
				}
			}
			return b.String()
		})
	}
	return l
}

// linePattern compiles a doc line: "…" is any text, the rest literal.
func linePattern(l string) *regexp.Regexp {
	parts := strings.Split(l, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// matchOutput compares a command's output with the doc's lines under the
// convention above; on a mismatch it returns a diff in which the lines that
// did match show as the doc wrote them.
func matchOutput(doc []string, got string, shape bool) (bool, string) {
	var want []string
	for _, l := range doc {
		want = append(want, normalise(l, shape))
	}
	// a doc's trailing blank lines are the block's layout, not output
	for len(want) > 0 && want[len(want)-1] == "" {
		want = want[:len(want)-1]
	}
	var have []string
	for _, l := range outputLines(got) {
		if !progressRe.MatchString(l) {
			have = append(have, normalise(l, shape))
		}
	}
	pats := make([]*regexp.Regexp, len(want))
	for i, l := range want {
		if strings.TrimSpace(l) != "…" {
			pats[i] = linePattern(l)
		}
	}
	if globLines(pats, have) {
		return true, ""
	}
	return false, lineDiff(want, alignForDiff(want, pats, have))
}

// globLines reports whether lines match pats, a nil pattern matching any
// number of lines.
func globLines(pats []*regexp.Regexp, lines []string) bool {
	// ok[i][j]: pats[i:] match lines[j:]
	ok := make([][]bool, len(pats)+1)
	for i := range ok {
		ok[i] = make([]bool, len(lines)+1)
	}
	ok[len(pats)][len(lines)] = true
	for i := len(pats) - 1; i >= 0; i-- {
		for j := len(lines); j >= 0; j-- {
			if pats[i] == nil {
				ok[i][j] = ok[i+1][j] || j < len(lines) && ok[i][j+1]
			} else {
				ok[i][j] = j < len(lines) && pats[i].MatchString(lines[j]) && ok[i+1][j+1]
			}
		}
	}
	return ok[0][0]
}

// alignForDiff shows have with every line a pattern matched replaced by the
// doc's line, and each run of lines an "…" stood for as one "…", so that a
// diff against the doc shows only what differs.
func alignForDiff(want []string, pats []*regexp.Regexp, have []string) []string {
	var out []string
	j := 0
	for i := 0; i < len(pats); i++ {
		if pats[i] == nil {
			next := len(have)
			if i+1 < len(pats) && pats[i+1] != nil {
				for k := j; k < len(have); k++ {
					if pats[i+1].MatchString(have[k]) {
						next = k
						break
					}
				}
			}
			if next > j {
				out = append(out, want[i])
			}
			j = next
			continue
		}
		k := j
		for k < len(have) && !pats[i].MatchString(have[k]) {
			k++
		}
		if k == len(have) {
			// the doc's line is missing: show the output's line in its
			// place, unless the doc's next line matches it
			if j < len(have) && (i+1 == len(pats) || pats[i+1] == nil || !pats[i+1].MatchString(have[j])) {
				out = append(out, have[j])
				j++
			}
			continue
		}
		out = append(append(out, have[j:k]...), want[i])
		j = k + 1
	}
	return append(out, have[j:]...)
}

// lineDiff prints the lines of a and b as a line diff: "  " both, "- " a
// only (the doc), "+ " b only (the output).
func lineDiff(a, b []string) string {
	// lcs[i][j]: the longest common subsequence of a[i:] and b[j:]
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("- " + a[i] + "\n")
			i++
		default:
			out.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return out.String()
}

// The convention of docs_test.go, case by case: what must match and what
// must not.
func TestDocOutputConvention(t *testing.T) {
	run := "a: 36 runs done, 0 skipped (already in the dataset), 0 failed, in 220ms (Parquet 116ms, 52.6%, and 95ms beside the simulation) → out/runs/sweep=a (1 new part)"
	tests := []struct {
		name  string
		doc   string
		got   string
		shape bool
		ok    bool
	}{
		{"exact", "one\ntwo", "one\ntwo\n", false, true},
		{"a word changed", "one\ntwo", "one\nthree\n", false, false},
		{"a line more", "one\ntwo", "one\ntwo\nthree\n", false, false},
		{"a line less", "one\ntwo", "one\n", false, false},
		{"trailing spaces", "one  \ntwo", "one\ntwo   \n", false, true},
		{"the doc's trailing blank lines", "one\n\n", "one\n", false, true},
		{"… elides none", "one\n…\ntwo", "one\ntwo\n", false, true},
		{"… elides many", "one\n…\ntwo", "one\nx\ny\nz\ntwo\n", false, true},
		{"… at the end", "one\n…", "one\nx\ny\n", false, true},
		{"… is not a line that is missing", "one\n…\ntwo", "one\nx\n", false, false},
		{"… within a line", "t99 … s after recovery", "t99 8.4 [8.3, 8.4] s after recovery", false, true},
		{"… within a line holds its ends", "t99 … s after recovery", "t50 8.4 s after recovery", false, false},
		{"a sweep's clock readings", strings.ReplaceAll(run, "220ms", "1m2.5s"), run, false, true},
		{"a sweep's counts are not clock readings", strings.ReplaceAll(run, "36 runs", "35 runs"), run, false, false},
		{"recommend's note", "note: 1620 runs simulated, no dataset, in 2.119s", "note: 1620 runs simulated, no dataset, in 382ms", false, true},
		{"a duration elsewhere is compared", "after a 30s outage", "after a 31s outage", false, false},
		{"progress lines left out", "done", "a: 5,000 of 51,600 runs (10 %), elapsed 5s, 1,000 runs/s, about 47s left\ndone\nreport: wrote the files in 1.2s\n", false, true},
		{"recommend's progress left out", "For 300 requests/s", "simulating candidates: 1,117 of 1,530 runs (73 %), elapsed 5s, 205 runs/s, about 2s left\nFor 300 requests/s\n", false, true},
		{"shape: numbers", "default: 51600 runs done (11 new parts)", "default: 36 runs done (1 new part)", true, true},
		{"shape: durations", "in 2m22.649s", "in 18ms", true, true},
		{"shape: words", "default: 51600 runs done", "default: 36 runs skipped", true, false},
		{"shape: names", "default: 1 run", "advice: 1 run", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, diff := matchOutput(strings.Split(tt.doc, "\n"), tt.got, tt.shape)
			if ok != tt.ok {
				t.Errorf("matchOutput(%q, %q, shape %v) = %v, want %v\n%s", tt.doc, tt.got, tt.shape, ok, tt.ok, diff)
			}
			if !ok && !strings.Contains(diff, "\n- ") && !strings.Contains(diff, "\n+ ") && !strings.HasPrefix(diff, "- ") && !strings.HasPrefix(diff, "+ ") {
				t.Errorf("a mismatch without a readable diff: %q", diff)
			}
		})
	}
}

// Properties over random outputs: an output matches itself as its own doc;
// any run of its lines may be elided by one "…"; a changed line fails, and
// the diff names it.
func TestDocOutputMatchingProperties(t *testing.T) {
	words := []string{"runs", "done", "t99", "17.9", "[17.8,", "17.9]", "s", "→", "out/report.md", "—", "≈", "|", "(", ")", "*", "+", "?", "$", "0"}
	rng := rand.New(rand.NewPCG(1, 2))
	line := func() string {
		var w []string
		for range 1 + rng.IntN(8) {
			w = append(w, words[rng.IntN(len(words))])
		}
		return strings.Join(w, " ")
	}
	for trial := range 300 {
		lines := make([]string, 1+rng.IntN(12))
		for i := range lines {
			lines[i] = line()
		}
		got := strings.Join(lines, "\n") + "\n"
		if ok, diff := matchOutput(lines, got, false); !ok {
			t.Fatalf("trial %d: output does not match itself:\n%s", trial, diff)
		}
		i := rng.IntN(len(lines))
		j := i + rng.IntN(len(lines)-i+1)
		elided := append(append(slices.Clone(lines[:i]), "…"), lines[j:]...)
		if ok, diff := matchOutput(elided, got, false); !ok {
			t.Fatalf("trial %d: lines %d–%d elided do not match:\n%s", trial, i, j, diff)
		}
		changed := slices.Clone(lines)
		changed[i] += " changed"
		ok, diff := matchOutput(changed, got, false)
		if ok || !strings.Contains(diff, "- "+changed[i]+"\n") {
			t.Fatalf("trial %d: line %d changed: match %v, diff %q", trial, i, ok, diff)
		}
	}
}

func TestShellWords(t *testing.T) {
	tests := []struct {
		line    string
		words   []string
		comment string
	}{
		{"sweep run", []string{"sweep", "run"}, ""},
		{"sweep recommend --mine 'full-jitter base=1s cap=30s'   # exit 2", []string{"sweep", "recommend", "--mine", "full-jitter base=1s cap=30s"}, "# exit 2"},
		{`sweep assert "a b"c`, []string{"sweep", "assert", "a bc"}, ""},
		{"sweep compare --threshold 5% a#b", []string{"sweep", "compare", "--threshold", "5%", "a#b"}, ""},
	}
	for _, tt := range tests {
		words, comment, err := shellWords(tt.line)
		if err != nil || !slices.Equal(words, tt.words) || comment != tt.comment {
			t.Errorf("shellWords(%q) = %q, %q, %v; want %q, %q", tt.line, words, comment, err, tt.words, tt.comment)
		}
	}
	if _, _, err := shellWords("sweep run 'open"); err == nil {
		t.Error("an unbalanced quote was accepted")
	}
	if _, code, err := commandLine("sweep run --sweep x    # exit 2: no such sweep"); err != nil || code != 2 {
		t.Errorf("the exit code of a comment: %d, %v", code, err)
	}
}

func TestHeadingAnchors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "page.md")
	page := "# Title\n\n## Nightly checks: `sweep assert` and rolling seeds\n\n```\n## not a heading\n```\n\n## Plan against run\n\n### Plan against run\n\n## Many writers, one folder\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	got := headingAnchors(t, path)
	want := map[string]bool{"title": true, "nightly-checks-sweep-assert-and-rolling-seeds": true,
		"plan-against-run": true, "plan-against-run-1": true, "many-writers-one-folder": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("anchors (-want +got):\n%s", diff)
	}
}

// The README is the pitch, the two commands, a first sweep and where to
// go next; neither it nor docs/ speaks of how the work was done.
func TestDocsSpeakOfTheToolOnly(t *testing.T) {
	root := repoRoot(t)
	diary := regexp.MustCompile(`(?i)load average|this session|base binary|helper engineer|on the [a-z0-9]+ branch|(speed|queue|scale|review)[0-9] `)
	for _, path := range docFiles(t, root) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		lines := strings.Split(string(b), "\n")
		if rel == "README.md" && len(lines) > 300 {
			t.Errorf("README.md has %d lines: at most 300 (the rest belongs in docs/)", len(lines))
		}
		for i, l := range lines {
			if m := diary.FindString(l); m != "" {
				t.Errorf("%s:%d: %q speaks of how the work was done, not of the tool: %s", rel, i+1, m, l)
			}
		}
	}
}
