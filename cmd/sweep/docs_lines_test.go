package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var (
	inlineCodeRe = regexp.MustCompile("`([^`]+)`")
	shellSepRe   = regexp.MustCompile(`&&|\|\||;|\||\$\(|<\(|\)`)
	envAssignRe  = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*$`)
	// sweepLineRe: a command line that runs sweep, after any VAR=value
	sweepLineRe = regexp.MustCompile(`^\s*([A-Z_][A-Z0-9_]*=\S*\s+)*(sweep|go run \./cmd/sweep)\s`)
	// placeholderRe finds a word in capitals (N, DIR, OLD NEW): usage syntax
	placeholderRe = regexp.MustCompile(`(^|\s)[A-Z]+(\s|$)`)
)

// checkCommandLines checks that every sweep command line outside the
// examples parses: with -h appended it must print its help and exit 0. A
// line that does not parse might run (an option missing its value takes
// the -h): it runs in a folder of its own, its context already cancelled.
func checkCommandLines(t *testing.T, rel string, f *mdFile) {
	t.Helper()
	back, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(back)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	check := func(line int, text string) {
		for _, seg := range shellSepRe.Split(text, -1) {
			if !sweepLineRe.MatchString(seg) {
				continue
			}
			words, _, err := shellWords(strings.TrimSpace(seg))
			if err != nil {
				t.Errorf("%s:%d: %v", rel, line, err)
				continue
			}
			for len(words) > 0 && envAssignRe.MatchString(words[0]) {
				words = words[1:]
			}
			if len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/sweep" {
				words = append([]string{"sweep"}, words[3:]...)
			}
			if len(words) < 2 || words[0] != "sweep" || words[1] == "help" || strings.HasPrefix(words[1], "-") {
				continue
			}
			out, code := sweepTerminal(cancelled, append(words[1:], "-h"))
			if code != 0 || !strings.HasPrefix(out, "Usage: sweep "+words[1]) {
				t.Errorf("%s:%d: %q does not parse: exit %d\n%s", rel, line, strings.Join(words, " "), code, firstLines(out, 3))
			}
		}
	}
	for _, b := range f.blocks {
		if b.isExample() {
			continue
		}
		for i, l := range b.lines {
			for strings.HasSuffix(l, `\`) && i+1 < len(b.lines) {
				i++
				l = strings.TrimSuffix(l, `\`) + " " + b.lines[i]
			}
			check(b.start+i+1, l)
		}
	}
	for i, l := range f.lines {
		if !f.prose[i] {
			continue
		}
		for _, m := range inlineCodeRe.FindAllStringSubmatch(l, -1) {
			// usage syntax ([--opt], a|b, NAME…, N) is the help's, not a command line
			if strings.HasPrefix(m[1], "sweep ") && !strings.ContainsAny(m[1], "[|…<") && !placeholderRe.MatchString(m[1]) {
				check(i+1, m[1])
			}
		}
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

var (
	linkRe    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRe = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// checkLinks checks the relative links of f's prose: the file exists and a
// #fragment names one of its headings, as GitHub makes their anchors.
func checkLinks(t *testing.T, root, rel string, f *mdFile) {
	t.Helper()
	dir := filepath.Dir(f.path)
	for i, l := range f.lines {
		if !f.prose[i] {
			continue
		}
		l = inlineCodeRe.ReplaceAllString(l, "")
		for _, m := range linkRe.FindAllStringSubmatch(l, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := f.path
			if file != "" {
				path = filepath.Join(dir, file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s:%d: link %s: %v", rel, i+1, target, err)
				continue
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(path, ".md") {
				t.Errorf("%s:%d: link %s: a fragment of a file that is not markdown", rel, i+1, target)
				continue
			}
			if anchors := headingAnchors(t, path); !anchors[frag] {
				t.Errorf("%s:%d: link %s: no heading of %s has the anchor #%s", rel, i+1, target, filepath.Base(path), frag)
			}
		}
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a
// markdown file: lower case, punctuation but - and _ dropped, spaces as -,
// a repeated anchor numbered -1, -2 ….
func headingAnchors(t *testing.T, path string) map[string]bool {
	f := readMarkdown(t, path)
	seen := map[string]int{}
	anchors := map[string]bool{}
	for i, l := range f.lines {
		m := headingRe.FindStringSubmatch(l)
		if m == nil || !f.prose[i] {
			continue
		}
		text := linkRe.ReplaceAllString(m[1], "]")
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}
