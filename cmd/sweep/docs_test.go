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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/herdsweep/herdsweep/internal/golden"
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
		t.Skip("-short: the docs' examples run in go test without it")
	}
	// the examples run as on a workstation, not as a shard of a batch job
	for _, v := range []string{"HERDSWEEP_SHARDS", "HERDSWEEP_MEMORY", "JOB_COMPLETION_INDEX",
		"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT", "SOURCE_DATE_EPOCH"} {
		t.Setenv(v, "")
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
			if golden.Update() {
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
				if golden.Update() && exact {
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
