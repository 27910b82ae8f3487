package main

// The README and every page of docs/ are tested as a reader would use them
// (benchstat's doc_test.go does the same for its manual). The convention,
// also in docs/writing-docs.md for writers:
//
// Examples. A fenced code block whose first line starts with "$ sweep " is
// an example. Each "$ sweep ARGS" line is run in-process, through run(ctx,
// args, w, w), stdout and stderr into one buffer as a terminal shows them,
// and the lines after it, up to the next "$ " line or the end of the block,
// are its output. A "# …" at the end of a command line is for the reader;
// "# exit N" in it states a non-zero exit code, which is checked (a command
// without it must exit 0).
//
// Output is compared line by line, trailing spaces ignored:
//   - a line that is only "…" stands for any number of lines, none included;
//   - "…" within a line stands for any text;
//   - clock readings (clockFields: a sweep's "in 1.2s (Parquet …)",
//     recommend's "in 2.4s", reproduce's "300 runs in 358ms") are compared
//     as "<time>"; lines only a slow machine prints (a sweep's progress
//     every 5 s, a report phase that took over a second) are left out.
//
// Every file runs in a fresh temporary folder, its blocks in order, like a
// reader following the page. A directive in an HTML comment on the line
// before a block changes that block:
//
//	<!-- doctest: file NAME -->     the block is a file the reader writes
//	                                 (NAME in the page's folder); not run
//	<!-- doctest: config PATH -->   the block runs alone, in a folder of its
//	                                 own whose sweeps.toml is PATH (from the
//	                                 repository's root): a small stand-in for a
//	                                 heavy config whose output the page shows
//	<!-- doctest: output PATH -->   the block is an excerpt of the file PATH
//	                                 that the commands before it wrote, compared
//	                                 as their output is
//	<!-- doctest: shape -->          compare the shape only: durations, then
//	                                 numbers, become N on both sides, and the
//	                                 plural s of the word or two after a
//	                                 number goes ("N new parts", "N new part")
//
// Command lines elsewhere (other code blocks, `inline code`) that start
// with "sweep " must parse: run with -h appended they print their help and
// exit 0, so a renamed or removed option fails here. Usage syntax in
// `inline code` ([--opt], a|b, NAME…, a placeholder in capitals) is left
// alone.
//
// Generated tables sit between "<!-- generated: NAME -->" and
// "<!-- end generated -->" and must equal what generators[NAME] prints from
// the fact's owner (the dataset's columns, sim's families and presets, the
// config's parameters, the command list).
//
// Links: every relative link of every page points to a file that exists,
// and a #fragment to a heading of that file.
//
// go test ./cmd/sweep -run TestDocs -update rewrites the generated tables
// and the output of examples that have no "…" and no directive; a block
// with either fails with the difference, to be mended by hand.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/herdsweep/herdsweep/experiments"
	"github.com/herdsweep/herdsweep/internal/num"
)

// docFiles returns the README and the pages of docs/, from the repository's
// root, in a stable order.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(pages)
	return append([]string{filepath.Join(root, "README.md")}, pages...)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository's root: %v", err)
	}
	return root
}

// mdBlock is a fenced code block of a markdown file.
type mdBlock struct {
	info      string   // the fence's info string ("sh", "toml", "")
	directive []string // the words of a <!-- doctest: … --> comment before it
	line      int      // 1-based line of the opening fence
	start     int      // index in the file's lines of the first content line
	lines     []string // content, the fence's indent removed
}

// mdFile is a markdown file split into its fenced blocks and its prose.
type mdFile struct {
	path   string
	lines  []string
	blocks []mdBlock
	prose  []bool // prose[i]: line i is outside every fenced block
}

var (
	fenceRe     = regexp.MustCompile("^( *)(```+|~~~+)\\s*(.*)$")
	directiveRe = regexp.MustCompile(`^\s*<!--\s*doctest:\s*(.*?)\s*-->\s*$`)
)

func readMarkdown(t *testing.T, path string) *mdFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := &mdFile{path: path}
	if err := f.parse(strings.Split(string(b), "\n")); err != nil {
		t.Fatal(err)
	}
	return f
}

// parse sets f's lines and finds its blocks and prose.
func (f *mdFile) parse(lines []string) error {
	f.lines, f.blocks = lines, nil
	f.prose = make([]bool, len(f.lines))
	for i := 0; i < len(f.lines); i++ {
		m := fenceRe.FindStringSubmatch(f.lines[i])
		if m == nil {
			f.prose[i] = true
			continue
		}
		indent, fence := len(m[1]), m[2]
		blk := mdBlock{info: m[3], line: i + 1, start: i + 1}
		for j := i - 1; j >= 0; j-- {
			if strings.TrimSpace(f.lines[j]) == "" {
				continue
			}
			if d := directiveRe.FindStringSubmatch(f.lines[j]); d != nil {
				blk.directive = strings.Fields(d[1])
			}
			break
		}
		j := i + 1
		for ; j < len(f.lines); j++ {
			l := f.lines[j]
			if c := strings.TrimLeft(l, " "); strings.HasPrefix(c, fence) && strings.Trim(c, fence[:1]) == "" {
				break
			}
			for k := 0; k < indent && strings.HasPrefix(l, " "); k++ {
				l = l[1:]
			}
			blk.lines = append(blk.lines, l)
		}
		if j == len(f.lines) {
			return fmt.Errorf("%s:%d: a code block that is never closed", f.path, i+1)
		}
		f.blocks = append(f.blocks, blk)
		i = j
	}
	return nil
}

func (b mdBlock) isExample() bool {
	return len(b.lines) > 0 && strings.HasPrefix(b.lines[0], "$ sweep ")
}

func (b mdBlock) has(word string) (string, bool) {
	for i, w := range b.directive {
		if w == word {
			if i+1 < len(b.directive) {
				return b.directive[i+1], true
			}
			return "", true
		}
	}
	return "", false
}

// TestDocs runs every example of the README and docs/, checks every
// generated table against its owner, every command line for its options
// and every relative link.
func TestDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the docs' examples run in go test without it (CI's race step uses -short)")
	}
	root := repoRoot(t)
	files := docFiles(t, root)
	if len(files) < 2 {
		t.Fatalf("docs/ holds no page: %v", files)
	}
	examples := 0
	for _, path := range files {
		rel, _ := filepath.Rel(root, path)
		t.Run(rel, func(t *testing.T) {
			f := readMarkdown(t, path)
			examples += runExamples(t, root, rel, f)
			checkGenerated(t, root, rel, f)
			checkCommandLines(t, rel, f)
			checkLinks(t, root, rel, f)
			if *update {
				if err := os.WriteFile(path, []byte(strings.Join(f.lines, "\n")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if examples < 10 {
		t.Errorf("%d examples in all: the docs' examples were not found", examples)
	}
}

// runExamples runs the examples of f in a fresh folder, in order, and
// returns how many commands ran. Under -update it rewrites the output of
// exact blocks in f.lines.
func runExamples(t *testing.T, root, rel string, f *mdFile) int {
	t.Helper()
	page := t.TempDir()
	t.Chdir(page)
	n := 0
	type edit struct {
		from, to int
		lines    []string
	}
	var edits []edit
	for _, b := range f.blocks {
		if name, ok := b.has("file"); ok {
			if name == "" || strings.ContainsAny(name, `/\`) {
				t.Errorf("%s:%d: doctest: file %q: want a plain file name", rel, b.line, name)
				continue
			}
			if err := os.WriteFile(name, []byte(strings.Join(b.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if name, ok := b.has("output"); ok {
			got, err := os.ReadFile(name)
			if err != nil {
				t.Errorf("%s:%d: doctest: output: %v", rel, b.line, err)
			} else if ok, diff := matchOutput(b.lines, string(got), false); !ok {
				t.Errorf("%s:%d: %s differs (-doc +file):\n%s", rel, b.line, name, diff)
			}
			continue
		}
		if !b.isExample() {
			if b.directive != nil {
				t.Errorf("%s:%d: a doctest directive before a block that is no example", rel, b.line)
			}
			continue
		}
		config, alone := b.has("config")
		_, shape := b.has("shape")
		if alone {
			src, err := os.ReadFile(filepath.Join(root, config))
			if err != nil {
				t.Errorf("%s:%d: doctest: config: %v", rel, b.line, err)
				continue
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "sweeps.toml"), src, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chdir(dir); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range splitCommands(b) {
			n++
			args, code, err := commandLine(c.cmd)
			if err != nil {
				t.Errorf("%s:%d: %v", rel, b.start+c.at+1, err)
				continue
			}
			got, gotCode := sweepTerminal(context.Background(), args)
			where := fmt.Sprintf("%s:%d: %s", rel, b.start+c.at+1, c.cmd)
			if gotCode != code {
				t.Errorf("%s\nexit %d, want %d (a non-zero exit is stated as '# exit N')\n%s", where, gotCode, code, got)
			}
			want := c.out
			if ok, diff := matchOutput(want, got, shape); !ok {
				exact := !shape && !alone && !slices.ContainsFunc(want, func(l string) bool { return strings.Contains(l, "…") })
				if *update && exact {
					edits = append(edits, edit{b.start + c.at + 1, b.start + c.at + 1 + len(want), outputLines(got)})
					continue
				}
				t.Errorf("%s\noutput differs (-doc +got):\n%s", where, diff)
			}
		}
		if alone {
			if err := os.Chdir(page); err != nil {
				t.Fatal(err)
			}
		}
	}
	lines := f.lines
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		lines = slices.Replace(lines, e.from, e.to, indentLike(lines, e.from, e.lines)...)
	}
	if err := f.parse(lines); err != nil {
		t.Fatal(err)
	}
	return n
}

// indentLike indents lines as the block around line at is indented.
func indentLike(lines []string, at int, out []string) []string {
	indent := ""
	for j := at - 1; j >= 0; j-- {
		if m := fenceRe.FindStringSubmatch(lines[j]); m != nil {
			indent = m[1]
			break
		}
	}
	res := make([]string, len(out))
	for i, l := range out {
		if l != "" {
			l = indent + l
		}
		res[i] = l
	}
	return res
}

type docCommand struct {
	cmd string   // the command line after "$ "
	at  int      // its index in the block
	out []string // the lines that follow it
}

func splitCommands(b mdBlock) []docCommand {
	var cs []docCommand
	for i, l := range b.lines {
		if strings.HasPrefix(l, "$ ") {
			cs = append(cs, docCommand{cmd: strings.TrimPrefix(l, "$ "), at: i})
			continue
		}
		cs[len(cs)-1].out = append(cs[len(cs)-1].out, l)
	}
	return cs
}

var exitRe = regexp.MustCompile(`\bexit (\d+)\b`)

// commandLine splits "sweep ARGS # comment" into ARGS, as a POSIX shell
// would for the quoting docs use, and reads "exit N" from the comment.
func commandLine(line string) (args []string, code int, err error) {
	words, comment, err := shellWords(line)
	if err != nil {
		return nil, 0, err
	}
	if len(words) == 0 || words[0] != "sweep" {
		return nil, 0, fmt.Errorf("%q: an example runs sweep and nothing else", line)
	}
	if m := exitRe.FindStringSubmatch(comment); m != nil {
		fmt.Sscan(m[1], &code)
	}
	return words[1:], code, nil
}

// shellWords splits a command line into words: blanks separate them, '…'
// and "…" quote, and a word starting with # begins a comment.
func shellWords(line string) (words []string, comment string, err error) {
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case c == '#' && !inWord:
			return words, line[i:], nil
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return nil, "", fmt.Errorf("%q: unbalanced %c", line, c)
			}
			w.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, "", nil
}

// lockedBuffer is one buffer for stdout and stderr: what a terminal shows.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// sweepTerminal runs the command in-process as main would, stdout and
// stderr into one buffer, and returns that and the exit code.
func sweepTerminal(ctx context.Context, args []string) (string, int) {
	var out lockedBuffer
	err := run(ctx, args, &out, &out)
	if err != nil && !alreadyPrinted(err) {
		fmt.Fprintln(&out, "sweep:", err)
	}
	return out.b.String(), exitCode(err)
}

func outputLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if s == "" {
		return nil
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return lines
}

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
	progressRe = regexp.MustCompile(`^(\S+: [\d,]+ of [\d,]+ .*elapsed |report: (read|decided|wrote) .* in ` + duration + `$)`)
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
	return false, cmp.Diff(want, alignForDiff(want, pats, have))
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
			continue // the doc's line is missing
		}
		out = append(append(out, have[j:k]...), want[i])
		j = k + 1
	}
	return append(out, have[j:]...)
}

var (
	genStartRe = regexp.MustCompile(`^<!-- generated: (\S+) -->$`)
	genEnd     = "<!-- end generated -->"
)

// generators print each generated table from its owner.
var generators = map[string]func(t *testing.T, root string) string{
	"schema":      func(t *testing.T, _ string) string { return mustSweep(t, "schema", "--markdown") },
	"commands":    commandTable,
	"config-keys": configKeysTable,
	"sweeps":      sweepsTable,
	"families":    func(t *testing.T, _ string) string { return policyTable(t, "families") },
	"presets":     func(t *testing.T, _ string) string { return policyTable(t, "presets") },
	"retry-on":    func(t *testing.T, _ string) string { return policyTable(t, "retry_on") },
	"components":  func(t *testing.T, _ string) string { return policyTable(t, "components") },
}

func mustSweep(t *testing.T, args ...string) string {
	t.Helper()
	var o, e bytes.Buffer
	if err := run(context.Background(), args, &o, &e); err != nil {
		t.Fatalf("sweep %s: %v\n%s", strings.Join(args, " "), err, e.String())
	}
	return o.String()
}

// checkGenerated compares each generated table of f with its generator's
// output (under -update, rewrites it in f.lines).
func checkGenerated(t *testing.T, root, rel string, f *mdFile) {
	t.Helper()
	for i := 0; i < len(f.lines); i++ {
		m := genStartRe.FindStringSubmatch(f.lines[i])
		if m == nil || !f.prose[i] {
			continue
		}
		end := slices.Index(f.lines[i+1:], genEnd)
		if end < 0 {
			t.Errorf("%s:%d: %q without %q", rel, i+1, f.lines[i], genEnd)
			return
		}
		end += i + 1
		gen := generators[m[1]]
		if gen == nil {
			t.Errorf("%s:%d: no generator %q: want one of %v", rel, i+1, m[1], slices.Sorted(maps.Keys(generators)))
			continue
		}
		want := strings.TrimSpace(gen(t, root))
		got := strings.TrimSpace(strings.Join(f.lines[i+1:end], "\n"))
		if got != want {
			if *update {
				table := append(append([]string{""}, strings.Split(want, "\n")...), "")
				if err := f.parse(slices.Replace(f.lines, i+1, end, table...)); err != nil {
					t.Fatal(err)
				}
				i += len(table)
				continue
			}
			t.Errorf("%s:%d: the generated table %q is not what its owner says (-doc +owner; go test -run TestDocs -update rewrites it):\n%s",
				rel, i+1, m[1], cmp.Diff(got, want))
		}
	}
}

// cell escapes a markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// commandTable is the command list of `sweep help`, each with the usage
// line of its -h.
func commandTable(t *testing.T, _ string) string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, c := range commands() {
		help := mustSweep(t, c.name, "-h")
		usage, _, _ := strings.Cut(help, "\n")
		usage = strings.TrimPrefix(usage, "Usage: ")
		if u, _, ok := strings.Cut(usage, "   ("); ok { // "(two dataset folders)"
			usage = u
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", cell(usage), cell(c.summary))
	}
	return b.String()
}

// configKeysTable lists the parameters sweeps.toml takes, scenario then
// policy, from the parameter table that the loader and the dataset share.
func configKeysTable(t *testing.T, _ string) string {
	var b strings.Builder
	for _, policy := range []bool{false, true} {
		if policy {
			b.WriteString("\nThe clients' policy and its client components:\n\n")
		} else {
			b.WriteString("The scenario (the fleet and the server):\n\n")
		}
		b.WriteString("| key | value | meaning |\n|---|---|---|\n")
		for _, p := range experiments.Params {
			if p.Policy != policy || p.Key == "preset" {
				continue
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", p.Key, p.Type, cell(p.Doc))
		}
	}
	return b.String()
}

// sweepsTable lists the sweeps of the repository's sweeps.toml with their
// cells, seeds and runs, as the loader expands them.
func sweepsTable(t *testing.T, root string) string {
	path := filepath.Join(root, "sweeps.toml")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := experiments.Load("sweeps.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| sweep | what | cells | seeds | runs |\n|---|---|--:|--:|--:|\n")
	for _, s := range cfg.Sweeps {
		name := "`" + s.Name + "`"
		if s.OnDemand {
			name += " (on demand)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, cell(s.Description),
			num.Int(len(s.Cells)), num.Int(len(s.Seeds)), num.Int(s.Len()))
	}
	return b.String()
}

// policyTable renders one list of `sweep policies --json`.
func policyTable(t *testing.T, list string) string {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(mustSweep(t, "policies", "--json")), &raw); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(raw[list], &rows); err != nil || len(rows) == 0 {
		t.Fatalf("policies --json: %q: %d rows, %v", list, len(rows), err)
	}
	str := func(v any) string {
		switch v := v.(type) {
		case nil:
			return ""
		case string:
			return v
		case []any:
			var s []string
			for _, x := range v {
				s = append(s, fmt.Sprint(x))
			}
			return strings.Join(s, ", ")
		}
		return fmt.Sprint(v)
	}
	code := func(s string) string {
		if s == "" {
			return `""`
		}
		return "`" + s + "`"
	}
	var b strings.Builder
	switch list {
	case "families":
		b.WriteString("| family | what | delay | parameters | defaults | source |\n|---|---|---|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | `%s` | %s |\n", str(r["kind"]), cell(str(r["title"])), cell(str(r["formula"])),
				cell(str(r["params"])), str(r["defaults"]), cell(str(r["source"])))
		}
	case "presets":
		b.WriteString("| preset | what it does | read from |\n|---|---|---|\n")
		for _, r := range rows {
			what := str(r["plain"])
			if n := str(r["note"]); n != "" {
				what += "; " + n
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", str(r["name"]), cell(what), cell(str(r["source"])))
		}
	case "retry_on":
		b.WriteString("| `retry_on` | retries | like |\n|---|---|---|\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", code(str(r["value"])), cell(str(r["means"])), cell(str(r["like"])))
		}
	case "components":
		b.WriteString("| component | keys | what it does | follows |\n|---|---|---|---|\n")
		for _, r := range rows {
			what := str(r["does"])
			if n := str(r["note"]); n != "" {
				what += "; " + n
			}
			var keys []string
			for _, k := range strings.Split(str(r["params"]), ", ") {
				keys = append(keys, "`"+k+"`")
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(str(r["name"])), strings.Join(keys, ", "), cell(what), cell(str(r["source"])))
		}
	}
	return b.String()
}

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
